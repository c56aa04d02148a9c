// The SubjectAccessReview an authorization webhook receives, built from the
// request attributes as kube's webhook authorizer builds it: the v1 spec
// (which matchConditions also see, as `request`) and its v1beta1 form.
// Empty strings are left out, as Go's `omitempty` leaves them out.
import type { Attributes } from './types.js';
import { hasOwn } from '../../lib/api/own.js';

type Spec = Record<string, unknown>;

const FIELD_OPS: Readonly<Record<string, string>> = { '=': 'In', '!=': 'NotIn' };
const LABEL_OPS: Readonly<Record<string, string>> = { '=': 'In', '==': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!': 'DoesNotExist' };

/** Sets `k` unless `v` is empty (Go's omitempty); never adds then deletes, which leaves a slow dictionary-mode object. */
function put(o: Spec, k: string, v: string | undefined): void {
  if (v !== undefined && v !== '') o[k] = v;
}

/** The v1 SubjectAccessReviewSpec of a request; selectors only when `withSelectors` (AuthorizeWithSelectors). */
export function sarSpecV1(a: Attributes, withSelectors: boolean): Spec {
  const spec: Spec = {};
  put(spec, 'user', a.user.username);
  put(spec, 'uid', a.user.uid);
  if (a.user.groups.length > 0) spec['groups'] = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec['extra'] = a.user.extra;
  if (a.isResourceRequest) {
    const ra: Spec = {};
    put(ra, 'namespace', a.namespace);
    put(ra, 'verb', a.verb);
    put(ra, 'group', a.apiGroup);
    put(ra, 'version', a.apiVersion);
    put(ra, 'resource', a.resource);
    put(ra, 'subresource', a.subresource);
    put(ra, 'name', a.name);
    if (withSelectors) {
      // Operators with no SAR form (gt, lt) are dropped: requirements are ANDed, so fewer only widen the check.
      const fs = (a.fieldSelector ?? [])
        .filter((r) => hasOwn(FIELD_OPS, r.operator))
        .map((r) => ({ key: r.field, operator: FIELD_OPS[r.operator]!, values: [r.value] }));
      if (fs.length > 0) ra['fieldSelector'] = { requirements: fs };
      const ls = (a.labelSelector ?? [])
        .filter((r) => hasOwn(LABEL_OPS, r.operator))
        .map((r) => ({ key: r.key, operator: LABEL_OPS[r.operator]!, ...(r.values.length > 0 ? { values: [...r.values] } : {}) }));
      if (ls.length > 0) ra['labelSelector'] = { requirements: ls };
    }
    spec['resourceAttributes'] = ra;
  } else {
    const nra: Spec = {};
    put(nra, 'path', a.path);
    put(nra, 'verb', a.verb);
    spec['nonResourceAttributes'] = nra;
  }
  return spec;
}

/** Each user's part of a cache key, made once: users come from the authenticators' caches as the same frozen object. */
const userKeys = new WeakMap<object, string>();

function userKey(u: Attributes['user']): string {
  let k = userKeys.get(u);
  if (k === undefined) {
    const extra = u.extra && Object.keys(u.extra).length > 0 ? u.extra : null;
    k = JSON.stringify([u.username, u.uid ?? '', u.groups, extra]);
    if (Object.isFrozen(u)) userKeys.set(u, k);
  }
  return k;
}

/**
 * A decision cache key that tells apart every two requests whose SubjectAccessReview specs differ (as kube's
 * webhook cache keys on the marshalled spec), without building the spec: a cached decision costs no spec and no
 * serialization of one. Selectors count only when they are sent (`withSelectors`).
 */
export function sarCacheKey(a: Attributes, withSelectors: boolean): string {
  const u = userKey(a.user);
  if (!a.isResourceRequest) return `${u}${JSON.stringify([a.path, a.verb])}`;
  const fields = [a.namespace, a.verb, a.apiGroup, a.apiVersion, a.resource, a.subresource, a.name];
  return withSelectors && (a.fieldSelector?.length || a.labelSelector?.length)
    ? `${u}r${JSON.stringify([...fields, a.fieldSelector ?? [], a.labelSelector ?? []])}`
    : `${u}r${JSON.stringify(fields)}`;
}

/** v1beta1 names the groups `group`. */
export function toV1beta1(spec: Spec): Spec {
  const { groups, ...rest } = spec;
  return groups === undefined ? rest : { ...rest, group: groups };
}
