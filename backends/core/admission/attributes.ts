// The admission attributes of a request's write, from the request and the
// type it writes.
import type { AuditAnnotations, BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { addWarnings } from '../../../lib/http/warnings.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { DeleteOptions } from '../handlers/params.js';
import type { AdmissionAttributes, GroupVersionKind, Operation, WriteOptions } from './types.js';

const OPTIONS_OF_VERB: Readonly<Record<string, WriteOptions['kind']>> = {
  create: 'CreateOptions',
  update: 'UpdateOptions',
  patch: 'PatchOptions',
  delete: 'DeleteOptions',
  deletecollection: 'DeleteOptions',
};

export interface WriteOf {
  readonly operation: Operation;
  readonly object: KObject | undefined;
  readonly oldObject: KObject | undefined;
  readonly dryRun: boolean;
  /** The object's kind when it is not the type's own (Scale, TokenRequest). */
  readonly kind?: GroupVersionKind;
  /** Another object than the request names (an item of a deletecollection). */
  readonly namespace?: string;
  readonly name?: string;
  readonly deleteOptions?: DeleteOptions;
}

export function admissionAttributes(t: ResourceType, r: BackendRequest, w: WriteOf): AdmissionAttributes {
  const fieldManager = r.query.get('fieldManager');
  return {
    operation: w.operation,
    object: w.object,
    oldObject: w.oldObject,
    kind: w.kind ?? { group: t.group, version: t.version, kind: t.kind },
    resource: { group: t.group, version: t.version, resource: t.plural },
    subresource: r.info.subresource,
    namespace: w.namespace ?? r.info.namespace,
    name: w.name ?? (r.info.name || (w.object ?? w.oldObject)?.metadata.name || ''),
    user: r.user,
    dryRun: w.dryRun,
    options: {
      kind: OPTIONS_OF_VERB[r.info.verb] ?? 'CreateOptions',
      ...(fieldManager !== null ? { fieldManager } : {}),
      ...(w.deleteOptions ? { delete: w.deleteOptions } : {}),
    },
    warn: (text) => addWarnings(r, [text]),
    timing: r,
    ...(r.audit ? { annotate: auditAnnotator(r.audit) } : {}),
  };
}

/**
 * `a` (of a write with no `name` of its own) for another object of the same write: the validating
 * phase's prepared object, whose name a generateName may just have made. A copy of `a`, not a
 * rebuild: the request's parts (query, kind, resource, options, callbacks) are the same.
 */
export function withObject(a: AdmissionAttributes, r: BackendRequest, object: KObject): AdmissionAttributes {
  return { ...a, object, name: r.info.name || object.metadata.name || '' };
}

/** A decoded request object (a Scale, a TokenRequest) as admission is given it: metadata an object. */
export function asAdmitted(value: Record<string, unknown>): KObject {
  return { ...value, metadata: isPlainObject(value['metadata']) ? value['metadata'] : {} } as KObject;
}

/** An annotation of level Request is kept only when the event records that level or above (kube's AddAnnotationWithLevel). */
function auditAnnotator(audit: AuditAnnotations): (key: string, value: string, level?: 'Request') => void {
  return (key, value, level) => {
    if (level === undefined || audit.requestLevel) audit.annotate(key, value);
  };
}
