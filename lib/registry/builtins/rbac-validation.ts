// kube's RBAC binding validation (pkg/apis/rbac/validation): a roleRef to a
// Role or ClusterRole of rbac.authorization.k8s.io, immutable once created;
// subjects of a known kind with a name (and a namespace for service accounts
// of a ClusterRoleBinding).
import type { KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { list, record, str } from '../fields.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

/** Go's %#v of an rbac.RoleRef, as kube prints it in the "cannot change roleRef" cause. */
function goRoleRef(ref: Readonly<Record<string, unknown>>): string {
  const s = (k: string) => JSON.stringify(typeof ref[k] === 'string' ? ref[k] : '');
  return `rbac.RoleRef{APIGroup:${s('apiGroup')}, Kind:${s('kind')}, Name:${s('name')}}`;
}

export function validateBinding(obj: KObject, old: KObject | undefined, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const ref = record(obj, 'roleRef');
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (str(ref, 'apiGroup') !== RBAC_GROUP) out.push(cause.notSupported('roleRef.apiGroup', str(ref, 'apiGroup'), [RBAC_GROUP]));
  if (!kinds.includes(str(ref, 'kind'))) out.push(cause.notSupported('roleRef.kind', str(ref, 'kind'), kinds));
  if (str(ref, 'name') === '') out.push(cause.required('roleRef.name'));
  list(obj, 'subjects').forEach((s, i) => {
    const at = `subjects[${i}]`;
    const kind = str(s, 'kind');
    if (str(s, 'name') === '') out.push(cause.required(`${at}.name`));
    if (kind === 'ServiceAccount') {
      if (str(s, 'apiGroup') !== '') out.push(cause.notSupported(`${at}.apiGroup`, str(s, 'apiGroup'), ['']));
      if (!namespaced && str(s, 'namespace') === '') out.push(cause.required(`${at}.namespace`));
    } else if (kind === 'User' || kind === 'Group') {
      if (str(s, 'apiGroup') !== RBAC_GROUP) out.push(cause.notSupported(`${at}.apiGroup`, str(s, 'apiGroup'), [RBAC_GROUP]));
    } else {
      out.push(cause.notSupported(`${at}.kind`, kind, ['ServiceAccount', 'User', 'Group']));
    }
  });
  if (old) {
    const was = record(old, 'roleRef');
    if (['apiGroup', 'kind', 'name'].some((k) => str(was, k) !== str(ref, k))) {
      out.push({ reason: 'FieldValueInvalid', field: 'roleRef', message: `Invalid value: ${goRoleRef(ref)}: cannot change roleRef` });
    }
  }
  return out;
}
