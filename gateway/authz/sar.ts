// The SubjectAccessReview an authorization webhook receives, built from the
// request attributes as kube's webhook authorizer builds it: the v1 spec
// (which matchConditions also see, as `request`) and its v1beta1 form.
// Empty strings are left out, as Go's `omitempty` leaves them out.
import type { Attributes } from './types.js';
import { hasOwn } from '../../lib/api/own.js';

type Spec = Record<string, unknown>;

const FIELD_OPS: Readonly<Record<string, string>> = { '=': 'In', '!=': 'NotIn' };
const LABEL_OPS: Readonly<Record<string, string>> = { '=': 'In', '==': 'In', in: 'In', '!=': 'NotIn', notin: 'NotIn', exists: 'Exists', '!': 'DoesNotExist' };

function compact(o: Record<string, unknown>): Record<string, unknown> {
  for (const [k, v] of Object.entries(o)) if (v === '' || v === undefined) delete o[k];
  return o;
}

/** The v1 SubjectAccessReviewSpec of a request; selectors only when `withSelectors` (AuthorizeWithSelectors). */
export function sarSpecV1(a: Attributes, withSelectors: boolean): Spec {
  const spec: Spec = compact({ user: a.user.username, uid: a.user.uid ?? '' });
  if (a.user.groups.length > 0) spec['groups'] = [...a.user.groups];
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec['extra'] = a.user.extra;
  if (a.isResourceRequest) {
    const ra = compact({
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    });
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
    spec['nonResourceAttributes'] = compact({ path: a.path, verb: a.verb });
  }
  return spec;
}

/** v1beta1 names the groups `group`. */
export function toV1beta1(spec: Spec): Spec {
  const { groups, ...rest } = spec;
  return groups === undefined ? rest : { ...rest, group: groups };
}
