// Object semantics of create and update: the envelope check, server-set
// metadata, status/spec separation, generation, finalizer rules and
// validation. Pure functions of (type, body, old object, time).
import { randomInt } from 'node:crypto';
import { randomUuid } from '../../lib/api/uuid.js';
import { isPlainObject, rfc3339, type KObject, type UserInfo } from '../../lib/api/meta.js';
import { jsonEqual, membersEqual } from '../../lib/api/json.js';
import { copyOwn, deleteOwn } from '../../lib/api/own.js';
import { badRequest, cause, conflict, invalid, STALE_OBJECT, type StatusCause } from '../../lib/api/status.js';
import { apiVersionOf, type ResourceType } from '../../lib/registry/types.js';
import { validateAnnotations, validateLabels, validateName, isQualifiedName } from '../../lib/registry/names.js';
import { parseRevision } from './listoptions.js';
import { fillZeros } from '../../lib/schema/zeros.js';
import { rewriteQuantities } from '../../lib/schema/quantities.js';
import { canonicalQuantityValue } from '../../lib/registry/builtins/quantities.js';

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const MAX_GENERATED_BASE = 58;

/** apiserver's SimpleNameGenerator: the base (cut to 58 characters) and five random characters. */
export function generateName(base: string): string {
  let s = base.slice(0, MAX_GENERATED_BASE);
  for (let i = 0; i < 5; i++) s += NAME_CHARS[randomInt(NAME_CHARS.length)];
  return s;
}

/** Kinds whose status is the server's on create (their controllers write it later). */
function resetsStatusOnCreate(t: ResourceType): boolean {
  return t.subresources.some((s) => s.name === 'status') && !(t.group === '' && t.kind === 'Node');
}

function hasStatusSubresource(t: ResourceType): boolean {
  return t.subresources.some((s) => s.name === 'status');
}

/** Checks kind/apiVersion/metadata of a body and fills kind and apiVersion when absent. */
export function checkEnvelope(t: ResourceType, body: Record<string, unknown>): KObject {
  const apiVersion = apiVersionOf(t);
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== apiVersion) {
    throw badRequest(`the API version in the data (${String(body['apiVersion'])}) does not match the expected API version (${apiVersion})`);
  }
  if (body['kind'] !== undefined && body['kind'] !== t.kind) {
    throw badRequest(`the kind in the data (${String(body['kind'])}) does not match the expected kind (${t.kind})`);
  }
  const metadata = body['metadata'] ?? {};
  if (!isPlainObject(metadata)) throw badRequest('metadata: must be an object');
  for (const f of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const) {
    if (metadata[f] !== undefined && typeof metadata[f] !== 'string') throw badRequest(`metadata.${f}: must be a string`);
  }
  if (metadata['finalizers'] !== undefined && !(Array.isArray(metadata['finalizers']) && metadata['finalizers'].every((f) => typeof f === 'string'))) {
    throw badRequest('metadata.finalizers: must be a list of strings');
  }
  // copyOwn, not spreads: the server adds members to both (lib/api/own.ts says why that matters).
  const obj = copyOwn(body);
  obj['apiVersion'] = apiVersion;
  obj['kind'] = t.kind;
  obj['metadata'] = copyOwn(metadata);
  return obj as KObject;
}

/** Names the request path gives must agree with the body. */
export function checkPathAgreement(t: ResourceType, obj: KObject, namespace: string, name?: string): void {
  const meta = obj.metadata;
  if (t.namespaced) {
    if (meta.namespace && meta.namespace !== namespace) {
      throw badRequest(`the namespace of the provided object (${meta.namespace}) does not match the namespace sent on the request (${namespace})`);
    }
    meta.namespace = namespace;
  } else {
    delete meta.namespace;
  }
  if (name !== undefined) {
    if (meta.name && meta.name !== name) throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    meta.name = name;
  }
}

function validateFinalizers(obj: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  for (const [i, f] of (obj.metadata.finalizers ?? []).entries()) {
    for (const m of isQualifiedName(f)) causes.push(cause.invalid(`metadata.finalizers[${i}]`, f, m));
    if (seen.has(f)) causes.push(cause.duplicate(`metadata.finalizers[${i}]`, f));
    seen.add(f);
  }
  return causes;
}

export function validate(t: ResourceType, obj: KObject, old: KObject | undefined, target?: UpdateTarget): void {
  // Each check's causes are empty on every valid write: appended, not spread into a new array per write.
  const causes: StatusCause[] = [];
  // On create only, as kube's ValidateObjectMeta: an update cannot change the name, and one stored under an older rule stays writable.
  if (old === undefined) append(causes, validateName(t.nameRule, obj));
  append(causes, validateLabels(obj.metadata.labels));
  append(causes, validateAnnotations(obj.metadata.annotations));
  if (obj.metadata.finalizers !== undefined) append(causes, validateFinalizers(obj));
  if (t.validate) append(causes, t.validate(obj, old, target));
  if (causes.length > 0) throw invalid({ group: t.group, kind: t.kind }, obj.metadata.name ?? obj.metadata.generateName ?? '', causes);
}

function append(to: StatusCause[], from: readonly StatusCause[]): void {
  for (let i = 0; i < from.length; i++) to.push(from[i]!);
}

/**
 * A new object as stored on create: server fields set, client-set server fields dropped.
 * In kube's order: decoding's defaults, then the field manager (`track`, which owns what
 * the writer sent and defaulting filled), then the strategy's PrepareForCreate, whose
 * fields (a Namespace's `kubernetes` finalizer, a pod's status) nobody owns, then validation.
 */
export function prepareCreate(t: ResourceType, obj: KObject, now: number, user?: UserInfo, track?: (obj: KObject) => void): KObject {
  const meta = obj.metadata;
  if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
  meta.uid = randomUuid();
  meta.creationTimestamp = rfc3339(now);
  if (t.generation) meta.generation = 1;
  else deleteOwn(meta, 'generation');
  deleteOwn(meta, 'resourceVersion');
  deleteOwn(meta, 'deletionTimestamp');
  deleteOwn(meta, 'deletionGracePeriodSeconds');
  deleteOwn(meta, 'selfLink');
  if (resetsStatusOnCreate(t)) deleteOwn(obj, 'status');
  t.defaults?.(obj);
  if (track) {
    asKubeEncodes(t, obj);
    track(obj);
  }
  t.prepareForCreate?.(obj, user);
  validate(t, obj, undefined);
  asKubeEncodes(t, obj);
  return obj;
}

/**
 * The object as kube's decode into Go types and encode back leaves it: the empty
 * fields Go writes added (a Service's `status.loadBalancer: {}`) and every
 * Quantity in its canonical form (`1000m` → `1`), from the schema tables, so
 * stored and served objects read as kube's do. Built-in kinds only: a custom
 * resource is stored as the client wrote it.
 */
function asKubeEncodes(t: ResourceType, obj: KObject): void {
  if (t.schema === undefined || t.crd !== undefined) return;
  fillZeros(t.schema, obj);
  rewriteQuantities(t.schema, obj, canonicalQuantityValue);
}

const SPEC_SKIP = new Set(['metadata', 'status']);
const SERVER_METADATA = new Set(['resourceVersion', 'generation']);

/**
 * Sets `next`'s managedFields for an update of `old`; `requested` is the list
 * the request's object carried (see lib/fieldmanager trackUpdate).
 */
export type TrackManagedFields = (next: KObject, old: KObject, requested: unknown) => void;

/** Whether everything but metadata and status is equal (a change bumps the generation). */
function sameSpec(a: KObject, b: KObject): boolean {
  return membersEqual(a, b, SPEC_SKIP);
}

/**
 * The update path: the object itself, /status, /finalize, or another subresource the type prepares itself
 * (/approval from the request's status; a pod's /ephemeralcontainers and /resize from the request's spec).
 */
export type UpdateTarget = 'main' | 'status' | 'finalize' | 'approval' | 'ephemeralcontainers' | 'resize';

const TARGETS: ReadonlySet<string> = new Set(['status', 'finalize', 'approval', 'ephemeralcontainers', 'resize']);

/** The update path of a request's subresource ('' = the object itself). */
export function updateTargetOf(subresource: string): UpdateTarget {
  return TARGETS.has(subresource) ? (subresource as UpdateTarget) : 'main';
}

/**
 * The object to store for an update of `old` with `obj`. Throws 409 for a
 * stale resourceVersion or another uid, 422 for invalid objects.
 * Returns undefined when nothing would change (no write, no event).
 */
export function prepareUpdate(
  t: ResourceType,
  obj: KObject,
  old: KObject,
  target: UpdateTarget,
  track?: TrackManagedFields,
  now = Date.now(),
): KObject | undefined {
  const meta = obj.metadata;
  const oldMeta = old.metadata;
  const gr = { group: t.group, resource: t.plural };
  const name = oldMeta.name ?? '';
  if (meta.resourceVersion !== undefined && meta.resourceVersion !== '') {
    let rv: number;
    try {
      rv = parseRevision(meta.resourceVersion);
    } catch {
      throw conflict(gr, name, STALE_OBJECT);
    }
    if (String(rv) !== oldMeta.resourceVersion) throw conflict(gr, name, STALE_OBJECT);
  }
  if (meta.uid && meta.uid !== oldMeta.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${oldMeta.uid}, UID in object meta: ${meta.uid}`);
  }
  let next: KObject;
  /** Whether next's spec (all but metadata and status) is old's, once known: a change bumps the generation. */
  let specSame: boolean | undefined;
  if (target === 'status' || target === 'approval') {
    // Only status changes through /status (ResetObjectMetaForStatus); the type narrows what else (/approval: the conditions).
    next = { ...old, metadata: { ...oldMeta } };
    if (obj['status'] === undefined) delete next['status'];
    else next['status'] = obj['status'];
  } else if (target === 'ephemeralcontainers' || target === 'resize') {
    // Only (part of) the spec changes through these; the type's prepareForUpdate narrows it.
    next = { ...old, metadata: { ...oldMeta } };
    if (obj['spec'] === undefined) delete next['spec'];
    else next['spec'] = obj['spec'];
  } else if (target === 'finalize') {
    const spec = isPlainObject(old['spec']) ? old['spec'] : {};
    const newSpec = isPlainObject(obj['spec']) ? obj['spec'] : {};
    next = { ...old, metadata: { ...oldMeta }, spec: { ...spec, finalizers: newSpec['finalizers'] ?? [] } };
  } else {
    // copyOwn, not spreads: the server adds members to both (lib/api/own.ts says why that matters).
    next = copyOwn(obj) as KObject;
    next.metadata = copyOwn(meta);
    const m = next.metadata;
    m.uid = oldMeta.uid;
    m.creationTimestamp = oldMeta.creationTimestamp;
    m.name = oldMeta.name;
    if (t.namespaced) m.namespace = oldMeta.namespace;
    if (t.generation) m.generation = oldMeta.generation ?? 1;
    else delete m.generation;
    delete m['selfLink'];
    if (oldMeta.deletionTimestamp) {
      m.deletionTimestamp = oldMeta.deletionTimestamp;
      m.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds ?? 0;
      const before = new Set(oldMeta.finalizers ?? []);
      const added = (m.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length > 0) {
        throw invalid({ group: t.group, kind: t.kind }, name, [
          cause.forbidden(
            'metadata.finalizers',
            `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
          ),
        ]);
      }
    } else {
      delete m.deletionTimestamp;
      delete m.deletionGracePeriodSeconds;
    }
    if (hasStatusSubresource(t)) {
      if (old['status'] === undefined) delete next['status'];
      else next['status'] = old['status'];
    }
    if (t.group === '' && t.kind === 'Namespace') {
      // A namespace's spec.finalizers change only through /finalize.
      next['spec'] = old['spec'];
    }
    // Defaulting runs on every write, as decoding does in kube-apiserver (a Secret's stringData folds into data).
    t.defaults?.(next);
    // Before comparing: a client that leaves out an empty struct kube writes has not changed the spec.
    asKubeEncodes(t, next);
    specSame = sameSpec(next, old);
    const bump =
      !specSame ||
      (t.generation === 'spec-and-labels' && !jsonEqual(m.labels ?? {}, oldMeta.labels ?? {})) ||
      (t.generation === 'all-but-metadata' && !jsonEqual(next['status'], old['status']));
    if (t.generation && bump) m.generation = (oldMeta.generation ?? 1) + 1;
  }
  t.prepareForUpdate?.(next, old, target, now);
  if (target !== 'main') asKubeEncodes(t, next);
  delete next.metadata.resourceVersion;
  const requested = next.metadata.managedFields;
  if (track) track(next, old, requested);
  else if (requested === undefined || (Array.isArray(requested) && requested.length === 0)) {
    if (oldMeta.managedFields === undefined) delete next.metadata.managedFields;
    else next.metadata.managedFields = oldMeta.managedFields;
  }
  validate(t, next, old, target);
  // Nothing new to store? managedFields count: a write that only moves ownership is a write (an unchanged one keeps the live list).
  const same = (specSame ?? sameSpec(next, old)) && jsonEqual(next['status'], old['status']) && membersEqual(next.metadata, old.metadata, SERVER_METADATA);
  return same ? undefined : next;
}

/** Whether a deleting object has nothing left holding it. */
export function isFinalized(obj: KObject): boolean {
  if ((obj.metadata.finalizers ?? []).length > 0) return false;
  const spec = obj['spec'];
  if (obj.kind === 'Namespace' && isPlainObject(spec) && Array.isArray(spec['finalizers']) && spec['finalizers'].length > 0) return false;
  return true;
}
