import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinRegistry } from '../../lib/registry/index.js';
import { DEFAULT_COLUMNS, humanDuration } from '../../lib/registry/columns.js';
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';

const reg = builtinRegistry();
const NOW = Date.parse('2025-06-01T12:00:00Z');
const ago = (s: number) => new Date(NOW - s * 1000).toISOString().replace('.000Z', 'Z');

/** A row as kube-apiserver's Table has it: every column, in order. */
function row(t: ResourceType, o: KObject): Record<string, unknown> {
  return Object.fromEntries((t.columns ?? DEFAULT_COLUMNS).map((c) => [c.name, c.cell(o, NOW)]));
}

test('durations render like kubectl', () => {
  const s = 1000,
    m = 60 * s,
    h = 60 * m,
    d = 24 * h;
  const cases: Array<[number, string]> = [
    [-3 * s, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 2 * s, '3m2s'],
    [10 * m + 30 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [4 * h + 5 * m, '4h5m'],
    [20 * h, '20h'],
    [47 * h, '47h'],
    [2 * d + 3 * h, '2d3h'],
    [5 * d, '5d'],
    [30 * d, '30d'],
    [800 * d, '2y70d'],
    [365 * 3 * d, '3y'],
    [365 * 9 * d, '9y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms}ms`);
});

test("column names follow kube-apiserver's printers", () => {
  const names = (plural: string, group = '') => reg.lookup(group, 'v1', plural)!.columns!.map((c) => (c.priority ? `${c.name}*` : c.name));
  assert.deepEqual(names('pods'), ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP*', 'Node*', 'Nominated Node*', 'Readiness Gates*']);
  assert.deepEqual(names('configmaps'), ['Name', 'Data', 'Age']);
  assert.deepEqual(names('secrets'), ['Name', 'Type', 'Data', 'Age']);
  assert.deepEqual(names('namespaces'), ['Name', 'Status', 'Age']);
  assert.deepEqual(names('serviceaccounts'), ['Name', 'Secrets', 'Age']);
  assert.deepEqual(names('nodes'), [
    'Name',
    'Status',
    'Roles',
    'Age',
    'Version',
    'Internal-IP*',
    'External-IP*',
    'OS-Image*',
    'Kernel-Version*',
    'Container-Runtime*',
  ]);
  assert.deepEqual(names('services'), ['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age', 'Selector*']);
  assert.deepEqual(names('endpoints'), ['Name', 'Endpoints', 'Age']);
  assert.deepEqual(names('events'), ['Last Seen', 'Type', 'Reason', 'Object', 'Subobject*', 'Source*', 'Message', 'First Seen*', 'Count*', 'Name*']);
  assert.deepEqual(names('leases', 'coordination.k8s.io'), ['Name', 'Holder', 'Age']);
  assert.deepEqual(names('endpointslices', 'discovery.k8s.io'), ['Name', 'AddressType', 'Ports', 'Endpoints', 'Age']);
  assert.deepEqual(names('rolebindings', 'rbac.authorization.k8s.io'), ['Name', 'Role', 'Age', 'Users*', 'Groups*', 'ServiceAccounts*']);
  assert.deepEqual(names('clusterroles', 'rbac.authorization.k8s.io'), ['Name', 'Created At']);
  assert.deepEqual(names('apiservices', 'apiregistration.k8s.io'), ['Name', 'Service', 'Available', 'Age']);
  assert.equal(reg.lookup('', 'v1', 'pods')!.columns![0]!.format, 'name');
});

test('a running pod shows ready containers, restarts with their age, and its node', () => {
  const pod: KObject = {
    metadata: { name: 'web-1', creationTimestamp: ago(3 * 3600 + 120) },
    spec: { nodeName: 'node-a', containers: [{ name: 'app' }, { name: 'proxy' }] },
    status: {
      phase: 'Running',
      podIPs: [{ ip: '10.1.0.7' }],
      conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [
        { name: 'app', ready: true, restartCount: 2, state: { running: {} }, lastState: { terminated: { finishedAt: ago(300) } } },
        { name: 'proxy', ready: false, restartCount: 1, state: { running: {} } },
      ],
    },
  };
  assert.deepEqual(row(reg.lookup('', 'v1', 'pods')!, pod), {
    Name: 'web-1',
    Ready: '1/2',
    Status: 'Running',
    Restarts: '3 (5m ago)',
    Age: '3h2m',
    IP: '10.1.0.7',
    Node: 'node-a',
    'Nominated Node': '<none>',
    'Readiness Gates': '<none>',
  });
});

test('pod status reflects waiting containers, init containers and deletion', () => {
  const pods = reg.lookup('', 'v1', 'pods')!;
  const status = (o: KObject) => row(pods, o)['Status'];
  const base = { metadata: { name: 'p' }, spec: { containers: [{ name: 'app' }] } };
  assert.equal(status({ ...base, status: { phase: 'Pending' } }), 'Pending');
  assert.equal(
    status({ ...base, status: { phase: 'Running', containerStatuses: [{ name: 'app', state: { waiting: { reason: 'CrashLoopBackOff' } } }] } }),
    'CrashLoopBackOff',
  );
  assert.equal(
    status({ ...base, status: { phase: 'Succeeded', containerStatuses: [{ name: 'app', state: { terminated: { reason: 'Completed', exitCode: 0 } } }] } }),
    'Completed',
  );
  assert.equal(
    status({ ...base, status: { phase: 'Failed', containerStatuses: [{ name: 'app', state: { terminated: { exitCode: 137, signal: 9 } } }] } }),
    'Signal:9',
  );
  const init = { metadata: { name: 'p' }, spec: { initContainers: [{ name: 'a' }, { name: 'b' }], containers: [{ name: 'app' }] } };
  assert.equal(
    status({
      ...init,
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'a', state: { terminated: { exitCode: 0 } } },
          { name: 'b', state: { running: {} } },
        ],
      },
    }),
    'Init:1/2',
  );
  assert.equal(
    status({ ...init, status: { phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { waiting: { reason: 'ImagePullBackOff' } } }] } }),
    'Init:ImagePullBackOff',
  );
  assert.equal(status({ metadata: { name: 'p', deletionTimestamp: ago(1) }, spec: base.spec, status: { phase: 'Running' } }), 'Terminating');
  // Sidecars (restartable init containers) count towards Ready.
  const sidecar = {
    metadata: { name: 'p' },
    spec: { initContainers: [{ name: 's', restartPolicy: 'Always' }], containers: [{ name: 'app' }] },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Initialized', status: 'True' }],
      initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} } }],
      containerStatuses: [{ name: 'app', ready: true, state: { running: {} } }],
    },
  };
  assert.equal(row(pods, sidecar)['Ready'], '2/2');
});

test('nodes, services and endpoints render like kubectl get', () => {
  const node: KObject = {
    metadata: {
      name: 'n1',
      creationTimestamp: ago(2 * 86400 + 3 * 3600),
      labels: { 'node-role.kubernetes.io/control-plane': '', 'kubernetes.io/role': 'master' },
    },
    spec: { unschedulable: true },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      nodeInfo: { kubeletVersion: 'v1.33.0' },
      addresses: [{ type: 'InternalIP', address: '10.0.0.1' }],
    },
  };
  const n = row(reg.lookup('', 'v1', 'nodes')!, node);
  assert.deepEqual(
    [n['Status'], n['Roles'], n['Age'], n['Version'], n['Internal-IP'], n['External-IP'], n['OS-Image']],
    ['Ready,SchedulingDisabled', 'control-plane,master', '2d3h', 'v1.33.0', '10.0.0.1', '<none>', '<unknown>'],
  );
  const svc: KObject = {
    metadata: { name: 'web', creationTimestamp: ago(45) },
    spec: {
      type: 'NodePort',
      clusterIPs: ['10.96.0.10'],
      ports: [
        { port: 80, nodePort: 30080, protocol: 'TCP' },
        { port: 53, protocol: 'UDP' },
      ],
      selector: { tier: 'web', app: 'x' },
    },
  };
  assert.deepEqual(row(reg.lookup('', 'v1', 'services')!, svc), {
    Name: 'web',
    Type: 'NodePort',
    'Cluster-IP': '10.96.0.10',
    'External-IP': '<none>',
    'Port(s)': '80:30080/TCP,53/UDP',
    Age: '45s',
    Selector: 'app=x,tier=web',
  });
  const lb = row(reg.lookup('', 'v1', 'services')!, { metadata: { name: 'lb' }, spec: { type: 'LoadBalancer' } });
  assert.deepEqual([lb['External-IP'], lb['Port(s)'], lb['Cluster-IP'], lb['Age']], ['<pending>', '<none>', '<none>', '<unknown>']);
  const ep: KObject = { metadata: { name: 'web' }, subsets: [{ addresses: [{ ip: '10.1.0.1' }, { ip: '10.1.0.2' }], ports: [{ port: 80 }, { port: 443 }] }] };
  assert.equal(row(reg.lookup('', 'v1', 'endpoints')!, ep)['Endpoints'], '10.1.0.1:80,10.1.0.2:80,10.1.0.1:443 + 1 more...');
});

test('events show when they were last seen, the object and the count', () => {
  const core: KObject = {
    metadata: { name: 'web.1' },
    involvedObject: { kind: 'Pod', name: 'web', fieldPath: 'spec.containers{app}' },
    type: 'Warning',
    reason: 'BackOff',
    message: ' Back-off restarting \n',
    source: { component: 'kubelet', host: 'node-a' },
    firstTimestamp: ago(600),
    lastTimestamp: ago(30),
    count: 7,
  };
  assert.deepEqual(row(reg.lookup('', 'v1', 'events')!, core), {
    'Last Seen': '30s',
    Type: 'Warning',
    Reason: 'BackOff',
    Object: 'pod/web',
    Subobject: 'spec.containers{app}',
    Source: 'kubelet, node-a',
    Message: 'Back-off restarting',
    'First Seen': '10m',
    Count: 7,
    Name: 'web.1',
  });
  const v1: KObject = {
    metadata: { name: 'n.1' },
    regarding: { kind: 'Node', name: 'n1' },
    type: 'Normal',
    reason: 'Ready',
    note: 'ok',
    reportingController: 'kubelet',
    reportingInstance: 'n1',
    eventTime: ago(90),
  };
  const r = row(reg.lookup('events.k8s.io', 'v1', 'events')!, v1);
  assert.deepEqual([r['Last Seen'], r['First Seen'], r['Object'], r['Source'], r['Count'], r['Message']], ['90s', '90s', 'node/n1', 'kubelet, n1', 1, 'ok']);
  const series = row(reg.lookup('events.k8s.io', 'v1', 'events')!, { ...v1, series: { count: 4, lastObservedTime: ago(5) } });
  assert.deepEqual([series['Last Seen'], series['Count']], ['5s', 4]);
});

test('configmaps, secrets, bindings, leases and apiservices render their summaries', () => {
  assert.equal(row(reg.lookup('', 'v1', 'configmaps')!, { metadata: { name: 'c' }, data: { a: '1', b: '2' }, binaryData: { c: 'eA==' } })['Data'], 3);
  assert.deepEqual(row(reg.lookup('', 'v1', 'secrets')!, { metadata: { name: 's' }, type: 'Opaque', data: { a: 'eA==' } }), {
    Name: 's',
    Type: 'Opaque',
    Data: 1,
    Age: '<unknown>',
  });
  const rb = row(reg.lookup('rbac.authorization.k8s.io', 'v1', 'rolebindings')!, {
    metadata: { name: 'rb' },
    roleRef: { kind: 'ClusterRole', name: 'admin' },
    subjects: [
      { kind: 'User', name: 'alice' },
      { kind: 'User', name: 'bob' },
      { kind: 'Group', name: 'devs' },
      { kind: 'ServiceAccount', namespace: 'ci', name: 'bot' },
    ],
  });
  assert.deepEqual([rb['Role'], rb['Users'], rb['Groups'], rb['ServiceAccounts']], ['ClusterRole/admin', 'alice, bob', 'devs', 'ci:bot']);
  assert.equal(
    row(reg.lookup('rbac.authorization.k8s.io', 'v1', 'roles')!, { metadata: { name: 'r', creationTimestamp: '2025-01-02T03:04:05Z' } })['Created At'],
    '2025-01-02T03:04:05Z',
  );
  assert.equal(row(reg.lookup('coordination.k8s.io', 'v1', 'leases')!, { metadata: { name: 'l' }, spec: { holderIdentity: 'node-a' } })['Holder'], 'node-a');
  const apis = reg.lookup('apiregistration.k8s.io', 'v1', 'apiservices')!;
  assert.deepEqual(row(apis, { metadata: { name: 'v1.' } }), { Name: 'v1.', Service: 'Local', Available: 'Unknown', Age: '<unknown>' });
  const remote = row(apis, {
    metadata: { name: 'v1.x' },
    spec: { service: { namespace: 'ns', name: 'api' } },
    status: { conditions: [{ type: 'Available', status: 'False', reason: 'MissingEndpoints' }] },
  });
  assert.deepEqual([remote['Service'], remote['Available']], ['ns/api', 'False (MissingEndpoints)']);
  const slice = row(reg.lookup('discovery.k8s.io', 'v1', 'endpointslices')!, {
    metadata: { name: 'e' },
    addressType: 'IPv4',
    ports: [{ port: 80 }, { name: 'dns' }],
    endpoints: [],
  });
  assert.deepEqual([slice['Ports'], slice['Endpoints']], ['80,dns', '<unset>']);
});

test('persistent volumes and claims show capacity only once bound', () => {
  const pv = row(reg.lookup('', 'v1', 'persistentvolumes')!, {
    metadata: { name: 'pv1' },
    spec: {
      capacity: { storage: '10Gi' },
      accessModes: ['ReadWriteMany', 'ReadWriteOnce'],
      persistentVolumeReclaimPolicy: 'Retain',
      claimRef: { namespace: 'db', name: 'data' },
      storageClassName: 'fast',
    },
    status: { phase: 'Bound' },
  });
  assert.deepEqual(
    [pv['Capacity'], pv['Access Modes'], pv['Status'], pv['Claim'], pv['StorageClass'], pv['VolumeAttributesClass'], pv['VolumeMode']],
    ['10Gi', 'RWO,RWX', 'Bound', 'db/data', 'fast', '<unset>', '<unset>'],
  );
  const pvcs = reg.lookup('', 'v1', 'persistentvolumeclaims')!;
  const pending = row(pvcs, { metadata: { name: 'c' }, spec: { resources: { requests: { storage: '1Gi' } } }, status: { phase: 'Pending' } });
  assert.deepEqual([pending['Status'], pending['Volume'], pending['Capacity'], pending['Access Modes']], ['Pending', '', '', '']);
  const bound = row(pvcs, {
    metadata: { name: 'c' },
    spec: { volumeName: 'pv1' },
    status: { phase: 'Bound', capacity: { storage: '10Gi' }, accessModes: ['ReadWriteOnce'] },
  });
  assert.deepEqual([bound['Capacity'], bound['Access Modes']], ['10Gi', 'RWO']);
});
