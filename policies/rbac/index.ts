// The default RBAC policy as API objects: every ClusterRole and
// ClusterRoleBinding labelled kubernetes.io/bootstrapping=rbac-defaults and
// annotated rbac.authorization.kubernetes.io/autoupdate=true, as
// kube-apiserver creates them. Data only; the core backend's rbacbootstrap
// controller writes them.
import type { KObject } from '../../lib/api/meta.js';
import { CLUSTER_ROLE_BINDINGS } from './bindings.js';
import { CLUSTER_ROLES } from './clusterroles.js';
import { CONTROLLER_ROLES } from './controllers.js';
import type { RuleData, SubjectData } from './rule.js';

export const BOOTSTRAP_LABEL = 'kubernetes.io/bootstrapping';
export const BOOTSTRAP_LABEL_VALUE = 'rbac-defaults';
export const AUTOUPDATE_ANNOTATION = 'rbac.authorization.kubernetes.io/autoupdate';
const RBAC_API = 'rbac.authorization.k8s.io';

function ruleObject(r: RuleData): Record<string, unknown> {
  return {
    verbs: [...r.verbs],
    ...(r.apiGroups ? { apiGroups: [...r.apiGroups] } : {}),
    ...(r.resources ? { resources: [...r.resources] } : {}),
    ...(r.resourceNames ? { resourceNames: [...r.resourceNames] } : {}),
    ...(r.nonResourceURLs ? { nonResourceURLs: [...r.nonResourceURLs] } : {}),
  };
}

function meta(name: string, labels: Record<string, string> = {}): KObject['metadata'] {
  return { name, labels: { [BOOTSTRAP_LABEL]: BOOTSTRAP_LABEL_VALUE, ...labels }, annotations: { [AUTOUPDATE_ANNOTATION]: 'true' } };
}

function subjectObject(s: SubjectData): Record<string, unknown> {
  return s.kind === 'ServiceAccount' ? { kind: s.kind, name: s.name, namespace: s.namespace ?? '' } : { kind: s.kind, apiGroup: RBAC_API, name: s.name };
}

/** Fresh objects on every call (callers may mutate them). */
export function defaultClusterRoles(): KObject[] {
  return [...CLUSTER_ROLES, ...CONTROLLER_ROLES].map((r) => ({
    apiVersion: `${RBAC_API}/v1`,
    kind: 'ClusterRole',
    metadata: meta(r.name, r.labels),
    ...(r.aggregateFrom ? { aggregationRule: { clusterRoleSelectors: r.aggregateFrom.map((m) => ({ matchLabels: { ...m } })) } } : {}),
    rules: r.rules.map(ruleObject),
  }));
}

export function defaultClusterRoleBindings(): KObject[] {
  return CLUSTER_ROLE_BINDINGS.map((b) => ({
    apiVersion: `${RBAC_API}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: meta(b.name),
    roleRef: { apiGroup: RBAC_API, kind: 'ClusterRole', name: b.role },
    ...(b.subjects.length ? { subjects: b.subjects.map(subjectObject) } : {}),
  }));
}
