// The default ClusterRoles kube-apiserver ships (bootstrappolicy's cluster
// roles), limited to the ones of the spec's tables and the pieces the
// user-facing roles aggregate. Rules may name resources Gatehouse does not
// serve; they grant nothing until something serves them.
import { EVENTS_WRITE, READ, rule, urls, type ClusterRoleData } from './rule.js';

const AGG = 'rbac.authorization.k8s.io/aggregate-to-';
const WRITE = 'create delete deletecollection patch update';
const ALL_VERBS = 'create delete deletecollection get list patch update watch';

export const CLUSTER_ROLES: ClusterRoleData[] = [
  { name: 'cluster-admin', rules: [rule('*', ['*'], '*'), urls('*', '*')] },
  { name: 'admin', rules: [], aggregateFrom: [{ [`${AGG}admin`]: 'true' }] },
  { name: 'edit', rules: [], labels: { [`${AGG}admin`]: 'true' }, aggregateFrom: [{ [`${AGG}edit`]: 'true' }] },
  { name: 'view', rules: [], labels: { [`${AGG}edit`]: 'true' }, aggregateFrom: [{ [`${AGG}view`]: 'true' }] },
  {
    name: 'system:aggregate-to-admin',
    labels: { [`${AGG}admin`]: 'true' },
    rules: [rule('create', ['authorization.k8s.io'], 'localsubjectaccessreviews'), rule(ALL_VERBS, ['rbac.authorization.k8s.io'], 'rolebindings roles')],
  },
  {
    name: 'system:aggregate-to-edit',
    labels: { [`${AGG}edit`]: 'true' },
    rules: [
      rule(READ, [''], 'pods/attach pods/exec pods/portforward pods/proxy secrets services/proxy'),
      rule('impersonate', [''], 'serviceaccounts'),
      rule(WRITE, [''], 'pods pods/attach pods/exec pods/portforward pods/proxy'),
      rule('create', [''], 'pods/eviction'),
      rule(
        WRITE,
        [''],
        'configmaps events persistentvolumeclaims replicationcontrollers replicationcontrollers/scale secrets serviceaccounts services services/proxy',
      ),
      rule('create', [''], 'serviceaccounts/token'),
      rule(WRITE, ['apps'], 'daemonsets deployments deployments/rollback deployments/scale replicasets replicasets/scale statefulsets statefulsets/scale'),
      rule(WRITE, ['autoscaling'], 'horizontalpodautoscalers'),
      rule(WRITE, ['batch'], 'cronjobs jobs'),
      rule(
        WRITE,
        ['extensions'],
        'daemonsets deployments deployments/rollback deployments/scale ingresses networkpolicies replicasets replicasets/scale replicationcontrollers/scale',
      ),
      rule(WRITE, ['policy'], 'poddisruptionbudgets'),
      rule(WRITE, ['networking.k8s.io'], 'ingresses networkpolicies'),
      rule(ALL_VERBS, ['coordination.k8s.io'], 'leases'),
    ],
  },
  {
    name: 'system:aggregate-to-view',
    labels: { [`${AGG}view`]: 'true' },
    rules: [
      rule(
        READ,
        [''],
        'configmaps endpoints persistentvolumeclaims persistentvolumeclaims/status pods replicationcontrollers replicationcontrollers/scale serviceaccounts services services/status',
      ),
      rule(READ, [''], 'bindings events limitranges namespaces/status pods/log pods/status replicationcontrollers/status resourcequotas resourcequotas/status'),
      rule(READ, [''], 'namespaces'),
      rule(READ, ['discovery.k8s.io'], 'endpointslices'),
      rule(
        READ,
        ['apps'],
        'controllerrevisions daemonsets daemonsets/status deployments deployments/scale deployments/status replicasets replicasets/scale replicasets/status statefulsets statefulsets/scale statefulsets/status',
      ),
      rule(READ, ['autoscaling'], 'horizontalpodautoscalers horizontalpodautoscalers/status'),
      rule(READ, ['batch'], 'cronjobs cronjobs/status jobs jobs/status'),
      rule(
        READ,
        ['extensions'],
        'daemonsets daemonsets/status deployments deployments/scale deployments/status ingresses ingresses/status networkpolicies replicasets replicasets/scale replicasets/status replicationcontrollers/scale',
      ),
      rule(READ, ['policy'], 'poddisruptionbudgets poddisruptionbudgets/status'),
      rule(READ, ['networking.k8s.io'], 'ingresses ingresses/status networkpolicies'),
    ],
  },
  {
    name: 'system:basic-user',
    rules: [
      rule('create', ['authorization.k8s.io'], 'selfsubjectaccessreviews selfsubjectrulesreviews'),
      rule('create', ['authentication.k8s.io'], 'selfsubjectreviews'),
    ],
  },
  // Gatehouse's own (not kube's): every user may ask why it may or may not do something (access.gatehouse.dev).
  { name: 'gatehouse:self-access-explainer', rules: [rule('create', ['access.gatehouse.dev'], 'selfsubjectaccessexplanations')] },
  { name: 'system:discovery', rules: [urls('get', '/api /api/* /apis /apis/* /healthz /livez /openapi /openapi/* /readyz /version /version/')] },
  { name: 'system:public-info-viewer', rules: [urls('get', '/healthz /livez /readyz /version /version/')] },
  { name: 'system:monitoring', rules: [urls('get', '/healthz /healthz/* /livez /livez/* /metrics /metrics/slis /readyz /readyz/*')] },
  { name: 'system:service-account-issuer-discovery', rules: [urls('get', '/.well-known/openid-configuration /openid/v1/jwks')] },
  {
    name: 'system:auth-delegator',
    rules: [rule('create', ['authentication.k8s.io'], 'tokenreviews'), rule('create', ['authorization.k8s.io'], 'subjectaccessreviews')],
  },
  { name: 'system:kube-aggregator', rules: [rule(READ, [''], 'endpoints services')] },
  { name: 'system:kube-dns', rules: [rule('list watch', [''], 'endpoints services')] },
  {
    name: 'system:kube-controller-manager',
    rules: [
      EVENTS_WRITE,
      rule('create', ['coordination.k8s.io'], 'leases'),
      rule('get update', ['coordination.k8s.io'], 'leases', 'kube-controller-manager'),
      rule('create', [''], 'secrets serviceaccounts'),
      rule('delete', [''], 'secrets'),
      rule('get', [''], 'configmaps namespaces secrets serviceaccounts'),
      rule('update', [''], 'secrets serviceaccounts'),
      rule('create', ['authentication.k8s.io'], 'tokenreviews'),
      rule('create', ['authorization.k8s.io'], 'subjectaccessreviews'),
      rule('list watch', ['*'], '*'),
      rule('create', [''], 'serviceaccounts/token'),
    ],
  },
  {
    name: 'system:kube-scheduler',
    rules: [
      EVENTS_WRITE,
      rule('create', ['coordination.k8s.io'], 'leases'),
      rule('get update', ['coordination.k8s.io'], 'leases', 'kube-scheduler'),
      rule(READ, [''], 'nodes'),
      rule('delete get list watch', [''], 'pods'),
      rule('create', [''], 'bindings pods/binding'),
      rule('patch update', [''], 'pods/status'),
      rule(READ, [''], 'replicationcontrollers services'),
      rule(READ, ['apps', 'extensions'], 'replicasets'),
      rule(READ, ['apps'], 'statefulsets'),
      rule(READ, ['policy'], 'poddisruptionbudgets'),
      rule(READ, [''], 'persistentvolumeclaims persistentvolumes'),
      rule('create', ['authentication.k8s.io'], 'tokenreviews'),
      rule('create', ['authorization.k8s.io'], 'subjectaccessreviews'),
      rule(READ, ['storage.k8s.io'], 'csinodes'),
      rule(READ, [''], 'namespaces'),
      rule(READ, ['storage.k8s.io'], 'csidrivers'),
      rule(READ, ['storage.k8s.io'], 'csistoragecapacities'),
    ],
  },
  {
    name: 'system:volume-scheduler',
    rules: [
      rule('get list patch update watch', [''], 'persistentvolumes'),
      rule(READ, ['storage.k8s.io'], 'storageclasses'),
      rule('get list patch update watch', [''], 'persistentvolumeclaims'),
    ],
  },
  {
    name: 'system:kubelet-api-admin',
    rules: [rule(READ, [''], 'nodes'), rule('proxy', [''], 'nodes'), rule('*', [''], 'nodes/log nodes/metrics nodes/proxy nodes/stats')],
  },
  {
    name: 'system:node',
    rules: [
      rule('create', ['authentication.k8s.io'], 'tokenreviews'),
      rule('create', ['authorization.k8s.io'], 'localsubjectaccessreviews subjectaccessreviews'),
      rule(READ, [''], 'services'),
      rule('create get list watch', [''], 'nodes'),
      rule('patch update', [''], 'nodes/status'),
      rule('patch update', [''], 'nodes'),
      rule('create patch update', [''], 'events'),
      rule(READ, [''], 'pods'),
      rule('create delete', [''], 'pods'),
      rule('patch update', [''], 'pods/status'),
      rule('create', [''], 'pods/eviction'),
      rule(READ, [''], 'configmaps secrets'),
      rule('get', [''], 'persistentvolumeclaims persistentvolumes'),
      rule('get', [''], 'endpoints'),
      rule('create get list watch', ['certificates.k8s.io'], 'certificatesigningrequests'),
      rule('create delete get patch update', ['coordination.k8s.io'], 'leases'),
      rule('get', ['storage.k8s.io'], 'volumeattachments'),
      rule('create', [''], 'serviceaccounts/token'),
      rule('get patch update', [''], 'persistentvolumeclaims/status'),
      rule(READ, ['storage.k8s.io'], 'csidrivers'),
      rule('create delete get patch update', ['storage.k8s.io'], 'csinodes'),
      rule(READ, ['node.k8s.io'], 'runtimeclasses'),
    ],
  },
  { name: 'system:node-bootstrapper', rules: [rule('create get list watch', ['certificates.k8s.io'], 'certificatesigningrequests')] },
  {
    name: 'system:node-problem-detector',
    rules: [rule('get', [''], 'nodes'), rule('patch', [''], 'nodes/status'), EVENTS_WRITE],
  },
  {
    name: 'system:node-proxier',
    rules: [
      rule('list watch', [''], 'endpoints services'),
      rule(READ, [''], 'nodes'),
      EVENTS_WRITE,
      rule('list watch', ['discovery.k8s.io'], 'endpointslices'),
    ],
  },
  {
    name: 'system:persistent-volume-provisioner',
    rules: [
      rule('create delete get list watch', [''], 'persistentvolumes'),
      rule('get list update watch', [''], 'persistentvolumeclaims'),
      rule(READ, ['storage.k8s.io'], 'storageclasses'),
      rule('watch', [''], 'events'),
      EVENTS_WRITE,
    ],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
    rules: [rule('create', ['certificates.k8s.io'], 'certificatesigningrequests/nodeclient')],
  },
  {
    name: 'system:certificates.k8s.io:certificatesigningrequests:selfnodeclient',
    rules: [rule('create', ['certificates.k8s.io'], 'certificatesigningrequests/selfnodeclient')],
  },
  // Approving a kubernetes.io signer's requests (with update on certificatesigningrequests/approval).
  ...['kube-apiserver-client', 'kube-apiserver-client-kubelet', 'kubelet-serving', 'legacy-unknown'].map((s) => ({
    name: `system:certificates.k8s.io:${s}-approver`,
    rules: [rule('approve', ['certificates.k8s.io'], 'signers', `kubernetes.io/${s}`)],
  })),
];
