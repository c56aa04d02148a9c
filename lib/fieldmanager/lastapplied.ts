// The client-side → server-side apply migration kube-apiserver performs for
// the manager "kubectl": conflicts on fields whose live value still equals the
// last-applied annotation are allowed (the apply is forced), and the
// annotation follows the applied configuration while it exists.
import { isPlainObject } from '../api/meta.js';
import type { Node } from '../schema/model.js';
import { compare } from './compare.js';
import type { Conflict, Obj } from './ownership.js';
import { difference, freeze, insert, intersection, isEmpty, type Builder } from './set.js';
import { canonicalJson } from './shape.js';
import { toFieldSet } from './tofieldset.js';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
export const KUBECTL = 'kubectl';

function lastApplied(obj: Obj): Obj | undefined {
  const meta = obj['metadata'];
  const text = isPlainObject(meta) && isPlainObject(meta['annotations']) ? meta['annotations'][LAST_APPLIED] : undefined;
  if (typeof text !== 'string' || text === '') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined; // a broken annotation allows nothing, as in kube
  }
}

/** The conflicts the last-applied annotation does not excuse. */
export function unexcusedConflicts(live: Obj, conflicts: readonly Conflict[], node: Node | undefined): readonly Conflict[] {
  const la = lastApplied(live);
  if (!la) return conflicts;
  let allowed;
  try {
    allowed = difference(toFieldSet(la, node), compare(la, live, node).modified);
  } catch {
    return conflicts;
  }
  return conflicts.filter((c) => {
    const b: Builder = { member: false };
    insert(b, c.path);
    return isEmpty(intersection(freeze(b), allowed));
  });
}

/** The object with its last-applied annotation (when it has one) set to the applied configuration. */
export function syncLastApplied(obj: Obj, intent: Obj): Obj {
  const meta = obj['metadata'];
  if (!isPlainObject(meta) || !isPlainObject(meta['annotations']) || meta['annotations'][LAST_APPLIED] === undefined) return obj;
  const im = isPlainObject(intent['metadata']) ? intent['metadata'] : {};
  const ia: Record<string, unknown> | undefined = isPlainObject(im['annotations']) ? { ...im['annotations'], [LAST_APPLIED]: undefined } : undefined;
  const applied = { ...intent, metadata: { ...im, ...(ia ? { annotations: Object.keys(ia).some((k) => ia[k] !== undefined) ? ia : undefined } : {}) } };
  const text = canonicalJson(applied);
  if (meta['annotations'][LAST_APPLIED] === text) return obj;
  return { ...obj, metadata: { ...meta, annotations: { ...meta['annotations'], [LAST_APPLIED]: text } } };
}
