// The default ClusterRoleBindings kube-apiserver ships: the component and
// discovery bindings, and one binding per controller role to the
// controller's service account in kube-system.
import { CONTROLLER_ROLES } from './controllers.js';
import type { ClusterRoleBindingData } from './rule.js';

const group = (name: string) => ({ kind: 'Group' as const, name });
const user = (name: string) => ({ kind: 'User' as const, name });

export const CLUSTER_ROLE_BINDINGS: ClusterRoleBindingData[] = [
  { name: 'cluster-admin', role: 'cluster-admin', subjects: [group('system:masters')] },
  { name: 'system:basic-user', role: 'system:basic-user', subjects: [group('system:authenticated')] },
  { name: 'gatehouse:self-access-explainer', role: 'gatehouse:self-access-explainer', subjects: [group('system:authenticated')] },
  { name: 'system:discovery', role: 'system:discovery', subjects: [group('system:authenticated')] },
  { name: 'system:public-info-viewer', role: 'system:public-info-viewer', subjects: [group('system:authenticated'), group('system:unauthenticated')] },
  { name: 'system:monitoring', role: 'system:monitoring', subjects: [group('system:monitoring')] },
  { name: 'system:service-account-issuer-discovery', role: 'system:service-account-issuer-discovery', subjects: [group('system:serviceaccounts')] },
  { name: 'system:kube-controller-manager', role: 'system:kube-controller-manager', subjects: [user('system:kube-controller-manager')] },
  { name: 'system:kube-dns', role: 'system:kube-dns', subjects: [{ kind: 'ServiceAccount', name: 'kube-dns', namespace: 'kube-system' }] },
  { name: 'system:kube-scheduler', role: 'system:kube-scheduler', subjects: [user('system:kube-scheduler')] },
  { name: 'system:volume-scheduler', role: 'system:volume-scheduler', subjects: [user('system:kube-scheduler')] },
  // Kept without subjects for compatibility: nodes are authorized by the Node authorizer.
  { name: 'system:node', role: 'system:node', subjects: [] },
  { name: 'system:node-proxier', role: 'system:node-proxier', subjects: [user('system:kube-proxy')] },
  ...CONTROLLER_ROLES.map((r) => {
    const sa = r.name.slice('system:controller:'.length);
    return { name: r.name, role: r.name, subjects: [{ kind: 'ServiceAccount' as const, name: sa, namespace: 'kube-system' }] };
  }),
];
