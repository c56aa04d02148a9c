// RBAC's data, read from stored objects (rbac.authorization.k8s.io/v1). The
// objects come from the store and may be hand-written, so every field is
// checked here once and the rest of the authorizer works on these shapes.
import { isPlainObject, type KObject } from '../api/meta.js';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface PolicyRule {
  readonly verbs: readonly string[];
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
  readonly nonResourceURLs: readonly string[];
}

export interface RoleRef {
  readonly kind: 'Role' | 'ClusterRole';
  readonly name: string;
}

export type SubjectKind = 'User' | 'Group' | 'ServiceAccount';

export interface Subject {
  readonly kind: SubjectKind;
  readonly name: string;
  readonly namespace: string;
}

/** A RoleBinding (namespace set) or ClusterRoleBinding (namespace ''). */
export interface Binding {
  readonly kind: 'RoleBinding' | 'ClusterRoleBinding';
  readonly namespace: string;
  readonly name: string;
  readonly roleRef: RoleRef;
  readonly subjects: readonly Subject[];
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

export function parseRule(v: unknown): PolicyRule {
  const r = isPlainObject(v) ? v : {};
  return {
    verbs: strings(r['verbs']),
    apiGroups: strings(r['apiGroups']),
    resources: strings(r['resources']),
    resourceNames: strings(r['resourceNames']),
    nonResourceURLs: strings(r['nonResourceURLs']),
  };
}

export function rulesOf(obj: KObject): PolicyRule[] {
  const rules = obj['rules'];
  return Array.isArray(rules) ? rules.map(parseRule) : [];
}

/** The binding's role reference; undefined when it names no kind we know. */
export function roleRefOf(obj: KObject): RoleRef | undefined {
  const ref = obj['roleRef'];
  if (!isPlainObject(ref) || typeof ref['name'] !== 'string') return undefined;
  if (ref['kind'] !== 'Role' && ref['kind'] !== 'ClusterRole') return undefined;
  return { kind: ref['kind'], name: ref['name'] };
}

export function bindingOf(obj: KObject, kind: Binding['kind']): Binding | undefined {
  const roleRef = roleRefOf(obj);
  if (!roleRef) return undefined;
  const subjects: Subject[] = [];
  for (const s of Array.isArray(obj['subjects']) ? obj['subjects'] : []) {
    if (!isPlainObject(s) || typeof s['name'] !== 'string') continue;
    const k = s['kind'];
    if (k !== 'User' && k !== 'Group' && k !== 'ServiceAccount') continue;
    subjects.push({ kind: k, name: s['name'], namespace: typeof s['namespace'] === 'string' ? s['namespace'] : '' });
  }
  return { kind, namespace: kind === 'RoleBinding' ? (obj.metadata.namespace ?? '') : '', name: obj.metadata.name ?? '', roleRef, subjects };
}

/** How kube names a role in "not found" errors: `clusterrole.rbac.authorization.k8s.io "x" not found`. */
export function roleNotFound(ref: RoleRef): string {
  return `${ref.kind.toLowerCase()}.${RBAC_GROUP} "${ref.name}" not found`;
}
