import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinRegistry, Registry } from '../../lib/registry/index.js';
import { BUILTIN_TYPES } from '../../lib/registry/builtins/index.js';
import type { ResourceType } from '../../lib/registry/types.js';
import type { KObject } from '../../lib/api/meta.js';

const reg = builtinRegistry();

// [group, plural, kind, namespaced, shortNames, subresources, nameRule, createOnUpdate]
const FACTS: Array<[string, string, string, boolean, string[], string[], string, boolean]> = [
  ['', 'namespaces', 'Namespace', false, ['ns'], ['finalize', 'status'], 'label', false],
  ['', 'configmaps', 'ConfigMap', true, ['cm'], [], 'subdomain', false],
  ['', 'secrets', 'Secret', true, [], [], 'subdomain', false],
  ['', 'serviceaccounts', 'ServiceAccount', true, ['sa'], ['token'], 'subdomain', false],
  [
    '',
    'pods',
    'Pod',
    true,
    ['po'],
    ['attach', 'binding', 'ephemeralcontainers', 'eviction', 'exec', 'log', 'portforward', 'resize', 'status'],
    'subdomain',
    false,
  ],
  ['', 'nodes', 'Node', false, ['no'], ['proxy', 'status'], 'subdomain', false],
  ['', 'services', 'Service', true, ['svc'], ['status'], 'dns1035', true],
  ['', 'endpoints', 'Endpoints', true, ['ep'], [], 'subdomain', true],
  ['', 'events', 'Event', true, ['ev'], [], 'subdomain', true],
  ['', 'persistentvolumes', 'PersistentVolume', false, ['pv'], ['status'], 'subdomain', false],
  ['', 'persistentvolumeclaims', 'PersistentVolumeClaim', true, ['pvc'], ['status'], 'subdomain', false],
  ['', 'podtemplates', 'PodTemplate', true, [], [], 'subdomain', false],
  ['', 'replicationcontrollers', 'ReplicationController', true, ['rc'], ['scale', 'status'], 'subdomain', false],
  ['events.k8s.io', 'events', 'Event', true, ['ev'], [], 'subdomain', true],
  ['coordination.k8s.io', 'leases', 'Lease', true, [], [], 'subdomain', true],
  ['discovery.k8s.io', 'endpointslices', 'EndpointSlice', true, [], [], 'subdomain', false],
  ['rbac.authorization.k8s.io', 'roles', 'Role', true, [], [], 'path-segment', true],
  ['rbac.authorization.k8s.io', 'rolebindings', 'RoleBinding', true, [], [], 'path-segment', true],
  ['rbac.authorization.k8s.io', 'clusterroles', 'ClusterRole', false, [], [], 'path-segment', true],
  ['rbac.authorization.k8s.io', 'clusterrolebindings', 'ClusterRoleBinding', false, [], [], 'path-segment', true],
  ['apiregistration.k8s.io', 'apiservices', 'APIService', false, [], ['status'], 'apiservice', false],
  ['flowcontrol.apiserver.k8s.io', 'flowschemas', 'FlowSchema', false, [], ['status'], 'subdomain', false],
  ['flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', 'PriorityLevelConfiguration', false, [], ['status'], 'subdomain', false],
  ['admissionregistration.k8s.io', 'mutatingwebhookconfigurations', 'MutatingWebhookConfiguration', false, [], [], 'subdomain', false],
  ['admissionregistration.k8s.io', 'validatingwebhookconfigurations', 'ValidatingWebhookConfiguration', false, [], [], 'subdomain', false],
  ['apiextensions.k8s.io', 'customresourcedefinitions', 'CustomResourceDefinition', false, ['crd', 'crds'], ['status'], 'crd', false],
  ['certificates.k8s.io', 'certificatesigningrequests', 'CertificateSigningRequest', false, ['csr'], ['approval', 'status'], 'path-segment', false],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicies', 'ValidatingAdmissionPolicy', false, [], ['status'], 'subdomain', false],
  ['admissionregistration.k8s.io', 'validatingadmissionpolicybindings', 'ValidatingAdmissionPolicyBinding', false, [], [], 'subdomain', false],
  ['apps', 'deployments', 'Deployment', true, ['deploy'], ['scale', 'status'], 'subdomain', false],
  ['apps', 'statefulsets', 'StatefulSet', true, ['sts'], ['scale', 'status'], 'label', false],
  ['apps', 'daemonsets', 'DaemonSet', true, ['ds'], ['status'], 'subdomain', false],
  ['apps', 'replicasets', 'ReplicaSet', true, ['rs'], ['scale', 'status'], 'subdomain', false],
  ['apps', 'controllerrevisions', 'ControllerRevision', true, [], [], 'subdomain', false],
  ['batch', 'jobs', 'Job', true, [], ['status'], 'subdomain', false],
  ['batch', 'cronjobs', 'CronJob', true, ['cj'], ['status'], 'subdomain', false],
  ['policy', 'poddisruptionbudgets', 'PodDisruptionBudget', true, ['pdb'], ['status'], 'subdomain', false],
  ['networking.k8s.io', 'ingresses', 'Ingress', true, ['ing'], ['status'], 'subdomain', false],
  ['networking.k8s.io', 'ingressclasses', 'IngressClass', false, [], [], 'subdomain', false],
  ['networking.k8s.io', 'networkpolicies', 'NetworkPolicy', true, ['netpol'], [], 'subdomain', false],
  ['scheduling.k8s.io', 'priorityclasses', 'PriorityClass', false, ['pc'], [], 'subdomain', false],
  ['storage.k8s.io', 'storageclasses', 'StorageClass', false, ['sc'], [], 'subdomain', false],
  ['node.k8s.io', 'runtimeclasses', 'RuntimeClass', false, [], [], 'subdomain', false],
  ['', 'limitranges', 'LimitRange', true, ['limits'], [], 'subdomain', false],
  ['', 'resourcequotas', 'ResourceQuota', true, ['quota'], ['status'], 'subdomain', false],
  ['', 'componentstatuses', 'ComponentStatus', false, ['cs'], [], 'subdomain', false],
  ['autoscaling', 'horizontalpodautoscalers', 'HorizontalPodAutoscaler', true, ['hpa'], ['status'], 'subdomain', false],
  ['storage.k8s.io', 'csidrivers', 'CSIDriver', false, [], [], 'subdomain', false],
  ['storage.k8s.io', 'csinodes', 'CSINode', false, [], [], 'subdomain', false],
  ['storage.k8s.io', 'csistoragecapacities', 'CSIStorageCapacity', true, [], [], 'subdomain', false],
  ['storage.k8s.io', 'volumeattachments', 'VolumeAttachment', false, [], ['status'], 'subdomain', false],
];

/** Kinds served in more than one version over one storage: each version's entry beyond v1. */
const OTHER_VERSIONS: Array<[string, string, string]> = [['autoscaling', 'v2', 'horizontalpodautoscalers']];

/** Stored types; the virtual reviews (servedBy: 'gateway') are checked below. */
const stored = () => reg.all().filter((t) => t.servedBy !== 'gateway');

test('every built-in type has the facts kube-apiserver serves', () => {
  assert.equal(stored().length, FACTS.length + OTHER_VERSIONS.length);
  for (const [group, version, plural] of OTHER_VERSIONS) assert.equal(reg.lookup(group, version, plural)?.storageVersion?.version, version);
  for (const [group, plural, kind, namespaced, shortNames, subs, nameRule, createOnUpdate] of FACTS) {
    const t = reg.lookup(group, 'v1', plural);
    assert.ok(t, `${group}/${plural}`);
    assert.equal(t.kind, kind);
    assert.equal(t.namespaced, namespaced, plural);
    assert.deepEqual([...t.shortNames], shortNames, plural);
    assert.deepEqual(
      t.subresources.map((s) => s.name),
      subs,
      plural,
    );
    assert.equal(t.nameRule, nameRule, plural);
    assert.equal(t.createOnUpdate, createOnUpdate, plural);
  }
});

/** The same-group kinds kube's connect and create-only subresources take instead of their parent's. */
const OPTION_KINDS = new Set(['PodAttachOptions', 'PodExecOptions', 'PodPortForwardOptions', 'NodeProxyOptions', 'Binding']);

test('every built-in type is internally consistent', () => {
  for (const t of stored()) {
    assert.equal(t.listKind, `${t.kind}List`);
    assert.ok(t.version === 'v1' || OTHER_VERSIONS.some(([g, v, p]) => g === t.group && v === t.version && p === t.plural), `${t.plural} ${t.version}`);
    assert.equal(t.singular, t.plural === 'endpoints' ? 'endpoints' : t.kind.toLowerCase());
    // ComponentStatuses are computed per read: get and list only, as kube's REST.
    assert.ok(t.verbs.includes('get') && t.verbs.includes('list') && (t.verbs.includes('watch') || t.plural === 'componentstatuses'), t.plural);
    assert.deepEqual([...t.verbs], [...t.verbs].sort(), `${t.plural} verbs sorted`);
    for (const s of t.subresources) if (!OPTION_KINDS.has(s.kind)) assert.equal(s.kind, s.group === undefined ? t.kind : s.kind);
    assert.ok(!('metadata.name' in t.fieldSelectors) && !('metadata.namespace' in t.fieldSelectors));
    assert.ok(Object.isFrozen(t) && Object.isFrozen(t.verbs));
  }
});

test('the authentication reviews are virtual, cluster-scoped and create-only', () => {
  for (const [version, plural, kind] of [
    ['v1', 'tokenreviews', 'TokenReview'],
    ['v1beta1', 'tokenreviews', 'TokenReview'],
    ['v1', 'selfsubjectreviews', 'SelfSubjectReview'],
  ]) {
    const t = reg.lookup('authentication.k8s.io', version!, plural!);
    assert.ok(t, `${plural}/${version}`);
    assert.equal(t.kind, kind);
    assert.equal(t.servedBy, 'gateway');
    assert.equal(t.namespaced, false);
    assert.deepEqual([...t.verbs], ['create']);
  }
});

test('namespaces cannot be deleted as a collection and finalize only updates', () => {
  const ns = reg.lookup('', 'v1', 'namespaces')!;
  assert.ok(!ns.verbs.includes('deletecollection'));
  assert.deepEqual(ns.subresources.find((s) => s.name === 'finalize')?.verbs, ['update']);
});

test('pods, services, replication controllers and the apps workloads are in the all category and apiservices in api-extensions', () => {
  const inAll = reg
    .all()
    .filter((t) => t.categories.includes('all'))
    .map((t) => t.plural);
  assert.deepEqual(inAll, [
    'pods',
    'replicationcontrollers',
    'services',
    'daemonsets',
    'deployments',
    'replicasets',
    'statefulsets',
    'horizontalpodautoscalers',
    'horizontalpodautoscalers',
    'cronjobs',
    'jobs',
  ]);
  assert.deepEqual(reg.lookup('apiregistration.k8s.io', 'v1', 'apiservices')!.categories, ['api-extensions']);
});

test('types are found by kind and by any of their names', () => {
  assert.equal(reg.byKind('', 'v1', 'Pod')?.plural, 'pods');
  assert.equal(reg.byKind('rbac.authorization.k8s.io', 'v1', 'ClusterRole')?.plural, 'clusterroles');
  assert.equal(reg.byKind('', 'v1', 'Deployment'), undefined);
  assert.equal(reg.byName('po')[0]?.plural, 'pods');
  assert.equal(reg.byName('pod')[0]?.plural, 'pods');
  assert.equal(reg.byName('svc')[0]?.kind, 'Service');
  // Core events come before events.k8s.io ones, as kubectl resolves `ev`.
  assert.deepEqual(
    reg.byName('ev').map((t) => t.group),
    ['', 'events.k8s.io'],
  );
  assert.equal(reg.lookup('', 'v1', 'po'), undefined);
  assert.equal(reg.lookup('apps', 'v1', 'deploy'), undefined);
  assert.equal(reg.byName('deploy')[0]?.kind, 'Deployment');
  assert.equal(reg.byKind('apps', 'v1', 'Deployment')?.scale?.specReplicasPath, '.spec.replicas');
});

test('named groups are ordered by kube-apiserver priority', () => {
  assert.deepEqual(
    reg.groups().map((g) => g.name),
    [
      'apiregistration.k8s.io',
      'apps',
      'events.k8s.io',
      'authentication.k8s.io',
      'authorization.k8s.io',
      'autoscaling',
      'batch',
      'certificates.k8s.io',
      'networking.k8s.io',
      'policy',
      'rbac.authorization.k8s.io',
      'storage.k8s.io',
      'admissionregistration.k8s.io',
      'apiextensions.k8s.io',
      'scheduling.k8s.io',
      'coordination.k8s.io',
      'node.k8s.io',
      'discovery.k8s.io',
      'flowcontrol.apiserver.k8s.io',
      // Gatehouse's own alpha group (off unless --runtime-config serves it), at the priority kube gives groups it does not know.
      'access.gatehouse.dev',
    ],
  );
  assert.deepEqual(reg.coreVersions(), ['v1']);
  assert.ok(reg.hasGroupVersion('', 'v1'));
  assert.ok(!reg.hasGroupVersion('events.k8s.io', 'v1beta1'));
});

test('the resources of a group version are sorted by plural', () => {
  assert.deepEqual(
    reg.resourcesOf('rbac.authorization.k8s.io', 'v1').map((t) => t.plural),
    ['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles'],
  );
  assert.deepEqual(reg.resourcesOf('nope', 'v1'), []);
});

test('a registry refuses two types with the same resource', () => {
  assert.throws(() => new Registry([...BUILTIN_TYPES, BUILTIN_TYPES[0]!]), /duplicate resource type "\/v1\/namespaces"/);
});

test('custom resources extend a registry into a new one and sort after built-in groups', () => {
  const base = reg.all()[0]!;
  const widget: ResourceType = {
    ...base,
    group: 'example.com',
    version: 'v1alpha1',
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    shortNames: ['wd'],
    subresources: [],
    fieldSelectors: {},
  };
  const widgetV1: ResourceType = { ...widget, version: 'v1' };
  const next = reg.extend([widget, widgetV1]);
  assert.equal(reg.lookup('example.com', 'v1', 'widgets'), undefined);
  assert.equal(next.groups().at(-1)?.name, 'example.com');
  assert.deepEqual(next.group('example.com')?.versions, ['v1', 'v1alpha1']);
  assert.equal(next.group('example.com')?.preferredVersion, 'v1');
});

test('field selectors read the fields kube-apiserver selects on', () => {
  const pods = reg.lookup('', 'v1', 'pods')!;
  const pod = { metadata: { name: 'p' }, spec: { nodeName: 'n1', hostNetwork: true }, status: { phase: 'Running', podIPs: [{ ip: '10.0.0.5' }] } };
  assert.deepEqual(Object.keys(pods.fieldSelectors).sort(), [
    'spec.hostNetwork',
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'status.nominatedNodeName',
    'status.phase',
    'status.podIP',
  ]);
  assert.equal(pods.fieldSelectors['spec.nodeName']!(pod), 'n1');
  assert.equal(pods.fieldSelectors['spec.hostNetwork']!(pod), 'true');
  assert.equal(pods.fieldSelectors['spec.restartPolicy']!(pod), '');
  assert.equal(pods.fieldSelectors['status.podIP']!(pod), '10.0.0.5');
  const ev = reg.lookup('events.k8s.io', 'v1', 'events')!;
  assert.equal(ev.fieldSelectors['regarding.kind']!({ metadata: {}, regarding: { kind: 'Pod' } }), 'Pod');
  assert.equal(ev.fieldSelectors['reportingController']!({ metadata: {}, reportingController: 'kubelet' }), 'kubelet');
  const core = reg.lookup('', 'v1', 'events')!;
  assert.equal(core.fieldSelectors['source']!({ metadata: {}, source: { component: 'kubelet' } }), 'kubelet');
  assert.equal(reg.lookup('', 'v1', 'nodes')!.fieldSelectors['spec.unschedulable']!({ metadata: {} }), 'false');
  assert.equal(reg.lookup('', 'v1', 'secrets')!.fieldSelectors['type']!({ metadata: {}, type: 'Opaque' }), 'Opaque');
  assert.deepEqual(Object.keys(reg.lookup('', 'v1', 'configmaps')!.fieldSelectors), []);
});

test('server defaults fill what kube fills and keep what the client set', () => {
  const ns: KObject = { metadata: { name: 'a' } };
  const namespaces = reg.lookup('', 'v1', 'namespaces')!;
  namespaces.defaults!(ns);
  assert.equal(ns['spec'], undefined, 'the kubernetes finalizer is the strategy’s, on create only');
  assert.deepEqual(ns['status'], { phase: 'Active' });
  const asked: KObject = { metadata: { name: 'b' }, spec: { finalizers: ['example.com/x'] } };
  namespaces.prepareForCreate!(asked, undefined);
  assert.deepEqual(asked['spec'], { finalizers: ['example.com/x', 'kubernetes'] });
  const pod = { metadata: {}, status: { phase: 'Running' } };
  reg.lookup('', 'v1', 'pods')!.defaults!(pod);
  assert.equal(pod.status.phase, 'Running');
  const bare: KObject = { metadata: {} };
  reg.lookup('', 'v1', 'pods')!.defaults!(bare);
  assert.deepEqual(bare['status'], { phase: 'Pending' });
  const secret: KObject = { metadata: {}, stringData: { user: 'admin' }, data: { other: 'eA==' } };
  reg.lookup('', 'v1', 'secrets')!.defaults!(secret);
  assert.equal(secret['type'], 'Opaque');
  assert.deepEqual(secret['data'], { other: 'eA==', user: 'YWRtaW4=' });
  assert.equal(secret['stringData'], undefined);
  const svc: KObject & { spec: Record<string, unknown> } = { metadata: {}, spec: { ports: [] } };
  reg.lookup('', 'v1', 'services')!.defaults!(svc);
  assert.equal(svc.spec['type'], 'ClusterIP');
});
