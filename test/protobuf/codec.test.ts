import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEnvelope, encodeEnvelope, hasSchema, ProtobufError } from '../../lib/protobuf/codec.js';
import { configMap, coreEvent, eventsEvent, lease, pod, secret, service } from './fixtures.js';

const roundTrip = (obj: Record<string, unknown>) => decodeEnvelope(encodeEnvelope(obj)).object;

const objects: Record<string, Record<string, unknown>> = {
  pod,
  service,
  secret,
  configMap,
  coreEvent,
  eventsEvent,
  lease,
  namespace: { kind: 'Namespace', apiVersion: 'v1', metadata: { name: 'ns1' }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } },
  serviceAccount: {
    kind: 'ServiceAccount',
    apiVersion: 'v1',
    metadata: { name: 'sa1', namespace: 'default' },
    secrets: [{ name: 'sa1-token' }],
    imagePullSecrets: [{ name: 'reg' }],
    automountServiceAccountToken: false,
  },
  node: {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: { name: 'node-1' },
    spec: { podCIDR: '10.244.0.0/24', taints: [{ key: 'k', value: 'v', effect: 'NoSchedule', timeAdded: '2024-01-02T03:04:05Z' }] },
    status: {
      capacity: { cpu: '4', memory: '16Gi', pods: '110' },
      allocatable: { cpu: '3800m' },
      conditions: [
        { type: 'Ready', status: 'True', lastHeartbeatTime: '2024-01-02T03:04:05Z', lastTransitionTime: null, reason: 'KubeletReady', message: 'ok' },
      ],
      addresses: [{ type: 'InternalIP', address: '192.168.1.10' }],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: 'm',
        systemUUID: 's',
        bootID: 'b',
        kernelVersion: '6.1',
        osImage: 'Debian',
        containerRuntimeVersion: 'containerd://1.7',
        kubeletVersion: 'v1.33.0',
        kubeProxyVersion: '',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
    },
  },
  endpoints: {
    kind: 'Endpoints',
    apiVersion: 'v1',
    metadata: { name: 'svc1', namespace: 'default' },
    subsets: [
      { addresses: [{ ip: '10.0.0.5', targetRef: { kind: 'Pod', namespace: 'default', name: 'p1' } }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] },
    ],
  },
  pv: {
    kind: 'PersistentVolume',
    apiVersion: 'v1',
    metadata: { name: 'pv1' },
    spec: {
      capacity: { storage: '10Gi' },
      hostPath: { path: '/data', type: 'DirectoryOrCreate' },
      accessModes: ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      storageClassName: 'local',
      volumeMode: 'Filesystem',
    },
    status: { phase: 'Available' },
  },
  pvc: {
    kind: 'PersistentVolumeClaim',
    apiVersion: 'v1',
    metadata: { name: 'data', namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } }, storageClassName: 'local', volumeMode: 'Filesystem' },
    status: { phase: 'Bound', capacity: { storage: '1Gi' } },
  },
  // List items carry no kind/apiVersion on the wire, just as in kube's own JSON lists.
  podList: {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: '100', continue: 'abc', remainingItemCount: 0 },
    items: [{ ...pod, kind: undefined, apiVersion: undefined }],
  },
  endpointSlice: {
    kind: 'EndpointSlice',
    apiVersion: 'discovery.k8s.io/v1',
    metadata: { name: 'svc1-abc', namespace: 'default', labels: { 'kubernetes.io/service-name': 'svc1' } },
    addressType: 'IPv4',
    endpoints: [{ addresses: ['10.0.0.5'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'node-1', zone: 'a' }],
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  },
  role: {
    kind: 'Role',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name: 'r1', namespace: 'default' },
    rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'], resourceNames: ['p1'] }],
  },
  clusterRole: {
    kind: 'ClusterRole',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name: 'agg' },
    rules: null,
    aggregationRule: { clusterRoleSelectors: [{ matchExpressions: [{ key: 'agg', operator: 'Exists' }] }] },
  },
  roleBinding: {
    kind: 'RoleBinding',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: { name: 'rb1', namespace: 'default' },
    subjects: [
      { kind: 'ServiceAccount', name: 'sa1', namespace: 'default' },
      { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' },
    ],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r1' },
  },
  clusterRoleBindingList: {
    kind: 'ClusterRoleBindingList',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    metadata: {},
    items: [
      {
        metadata: { name: 'crb' },
        subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'g' }],
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      },
    ],
  },
  apiService: {
    kind: 'APIService',
    apiVersion: 'apiregistration.k8s.io/v1',
    metadata: { name: 'v1beta1.metrics.k8s.io' },
    spec: {
      service: { namespace: 'kube-system', name: 'metrics-server', port: 443 },
      group: 'metrics.k8s.io',
      version: 'v1beta1',
      caBundle: Buffer.from('PEM').toString('base64'),
      groupPriorityMinimum: 100,
      versionPriority: 100,
    },
    status: { conditions: [{ type: 'Available', status: 'True', lastTransitionTime: '2024-01-02T03:04:05Z', reason: 'Passed', message: 'all checks passed' }] },
  },
  tokenRequest: {
    kind: 'TokenRequest',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: { name: 'sa1', namespace: 'default' },
    spec: { audiences: ['https://kubernetes.default.svc'], expirationSeconds: 3600, boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'p1', uid: 'u-1' } },
    status: { token: 'eyJ...', expirationTimestamp: '2024-01-02T04:04:05Z' },
  },
  tokenReview: {
    kind: 'TokenReview',
    apiVersion: 'authentication.k8s.io/v1',
    metadata: {},
    spec: { token: 't', audiences: ['api'] },
    status: { authenticated: true, user: { username: 'alice', uid: '1', groups: ['dev'], extra: { scopes: ['a', 'b'] } }, audiences: ['api'] },
  },
  selfSubjectReview: { kind: 'SelfSubjectReview', apiVersion: 'authentication.k8s.io/v1', metadata: {}, status: { userInfo: { username: 'alice' } } },
  subjectAccessReview: {
    kind: 'SubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: {},
    spec: {
      resourceAttributes: { namespace: 'default', verb: 'get', resource: 'pods', name: 'p1' },
      user: 'alice',
      groups: ['dev'],
      extra: { k: ['v'] },
      uid: '1',
    },
    status: { allowed: true, reason: 'RBAC: allowed' },
  },
  localSubjectAccessReview: {
    kind: 'LocalSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: { namespace: 'default' },
    spec: { nonResourceAttributes: { path: '/healthz', verb: 'get' }, user: 'bob' },
    status: { allowed: false, denied: true },
  },
  selfSubjectAccessReview: {
    kind: 'SelfSubjectAccessReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: {},
    spec: { resourceAttributes: { verb: 'create', group: 'apps', resource: 'deployments' } },
    status: { allowed: true },
  },
  selfSubjectRulesReview: {
    kind: 'SelfSubjectRulesReview',
    apiVersion: 'authorization.k8s.io/v1',
    metadata: {},
    spec: { namespace: 'default' },
    status: {
      resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/api'] }],
      incomplete: false,
    },
  },
  status: {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'pods "p1" not found',
    reason: 'NotFound',
    details: { name: 'p1', kind: 'pods', causes: [{ reason: 'FieldValueInvalid', message: 'bad', field: 'spec' }] },
    code: 404,
  },
  deleteOptions: {
    kind: 'DeleteOptions',
    apiVersion: 'meta.k8s.io/v1',
    gracePeriodSeconds: 0,
    preconditions: { uid: 'u-1', resourceVersion: '5' },
    propagationPolicy: 'Foreground',
    dryRun: ['All'],
  },
};

const withoutUndefined = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

for (const [name, obj] of Object.entries(objects)) {
  test(`${name} survives a JSON to protobuf to JSON round trip unchanged`, () => {
    assert.deepEqual(roundTrip(obj), withoutUndefined(obj));
  });
}

test('the decoded object starts with kind and apiVersion taken from the envelope', () => {
  const out = decodeEnvelope(encodeEnvelope(configMap));
  assert.equal(out.apiVersion, 'v1');
  assert.equal(out.kind, 'ConfigMap');
  assert.deepEqual(Object.keys(out.object).slice(0, 2), ['kind', 'apiVersion']);
});

test('pointer fields keep a present zero value and stay absent when unset', () => {
  const out = roundTrip({
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {},
    spec: { containers: [{ name: 'c', securityContext: { runAsUser: 0, privileged: false } }] },
    status: {},
  });
  const c = (out.spec as { containers: Record<string, unknown>[] }).containers[0]!;
  assert.deepEqual(c.securityContext, { runAsUser: 0, privileged: false });
  assert.equal('readinessProbe' in c, false);
  assert.deepEqual(c.resources, {}, 'a Go struct value is always rendered');
});

test('special types render in their Kubernetes JSON form', () => {
  const p = roundTrip(pod) as typeof pod;
  assert.equal(p.spec.containers[0]!.livenessProbe.httpGet.port, 'http');
  assert.equal(p.spec.containers[0]!.readinessProbe.tcpSocket.port, 80);
  assert.equal(p.spec.containers[0]!.resources.limits.cpu, '500m');
  assert.deepEqual(p.metadata.managedFields[0]!.fieldsV1, pod.metadata.managedFields[0]!.fieldsV1);
  assert.equal((roundTrip(coreEvent) as typeof coreEvent).eventTime, '2024-01-02T03:04:05.123456Z');
  assert.equal((roundTrip(secret) as typeof secret).data.bin, 'AAH+/w==');
});

test('hasSchema answers for served kinds only', () => {
  assert.equal(hasSchema('v1', 'Pod'), true);
  assert.equal(hasSchema('rbac.authorization.k8s.io/v1', 'ClusterRoleBindingList'), true);
  assert.equal(hasSchema('apps/v1', 'DeleteOptions'), true);
  assert.equal(hasSchema('apps/v1', 'Deployment'), true);
  assert.equal(hasSchema('autoscaling/v1', 'Scale'), true);
  assert.equal(hasSchema('batch/v1', 'CronJobList'), true);
  assert.equal(hasSchema('policy/v1', 'PodDisruptionBudget'), true);
  assert.equal(hasSchema('storage.k8s.io/v1', 'StorageClass'), true);
  assert.equal(hasSchema('storage.k8s.io/v1', 'CSIDriver'), true);
  assert.equal(hasSchema('autoscaling/v2', 'HorizontalPodAutoscaler'), true);
  assert.equal(hasSchema('storage.k8s.io/v1', 'VolumeAttributesClass'), false);
  assert.equal(hasSchema('v1', 'Deployment'), false);
});

const expectError = (fn: () => unknown, code: string, message: RegExp) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ProtobufError, `not a ProtobufError: ${String(err)}`);
    assert.equal(err.code, code);
    assert.match(err.message, message);
    return true;
  });

test('a body without the k8s prefix is rejected as bad magic', () => {
  expectError(() => decodeEnvelope(Buffer.from('{"kind":"Pod"}')), 'bad-magic', /expected prefix 6b387300, got "7b226b69"/);
  expectError(() => decodeEnvelope(Buffer.alloc(0)), 'bad-magic', /prefix/);
});

test('a truncated body is rejected as malformed', () => {
  const full = encodeEnvelope(pod);
  expectError(() => decodeEnvelope(full.subarray(0, full.length - 7)), 'malformed', /truncated or malformed/);
  const raw = encodeEnvelope(configMap);
  // Cut inside the raw object but keep a consistent envelope: rewrite Unknown by hand.
  expectError(() => decodeEnvelope(Buffer.concat([raw.subarray(0, 20), Buffer.from([0x0a, 0x7f])])), 'malformed', /truncated or malformed/);
});

test('an unknown kind is rejected naming apiVersion and kind', () => {
  const buf = encodeEnvelope(configMap);
  const patched = Buffer.from(buf.toString('latin1').replace('ConfigMap', 'Deploymen'), 'latin1');
  expectError(() => decodeEnvelope(patched), 'unknown-kind', /unknown kind "v1 Deploymen"/);
  expectError(() => encodeEnvelope({ apiVersion: 'apps/v1', kind: 'Deploymen' }), 'unknown-kind', /unknown kind "apps\/v1 Deploymen"/);
});

test('a gzip contentEncoding is rejected as unsupported', () => {
  // Unknown{typeMeta{apiVersion:"v1",kind:"Pod"}, contentEncoding:"gzip"}
  const body = Buffer.from([0x0a, 0x09, 0x0a, 0x02, 0x76, 0x31, 0x12, 0x03, 0x50, 0x6f, 0x64, 0x1a, 0x04, ...Buffer.from('gzip')]);
  expectError(
    () => decodeEnvelope(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), body])),
    'unsupported-encoding',
    /contentEncoding "gzip" not supported/,
  );
});

test('encoding rejects values that do not fit the schema, naming the field', () => {
  expectError(() => encodeEnvelope({ ...configMap, data: { a: 1 } }), 'invalid-value', /ConfigMap\.data\.a: expected a string/);
  expectError(() => encodeEnvelope({ ...configMap, bogus: true }), 'invalid-value', /unknown field "ConfigMap\.bogus"/);
  expectError(() => encodeEnvelope({ ...service, spec: { ports: [{ port: 80, targetPort: 1.5 }] } }), 'invalid-value', /targetPort/);
  expectError(() => encodeEnvelope({ ...pod, metadata: { creationTimestamp: 'yesterday' } }), 'invalid-value', /not an RFC 3339 time/);
});
