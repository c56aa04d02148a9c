// core/v1 LimitRanges and ResourceQuotas and storage.k8s.io/v1's CSI kinds
// through kubectl against a started server: kube's LimitRange and CSIDriver
// defaults, `kubectl get limits,quota,csidrivers` and the other tables, quota
// status only through /status, quantities that do not parse, and the fields
// kube keeps immutable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL, tableRows } from '../helpers/kubectl-server.js';

const MANIFEST = `apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec:
  limits:
  - type: Container
    max: {cpu: "2", memory: 1Gi}
    min: {cpu: 100m}
    default: {memory: 512Mi}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: team}
spec:
  hard: {pods: "10", requests.cpu: "4", limits.memory: 8Gi}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: ebs.csi.aws.com}
spec:
  attachRequired: true
  tokenRequests: [{audience: sts.amazonaws.com}]
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: node-1}
spec:
  drivers:
  - {name: ebs.csi.aws.com, nodeID: i-0abc, topologyKeys: [topology.ebs.csi.aws.com/zone], allocatable: {count: 25}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: zone-a}
storageClassName: fast
capacity: 100Gi
nodeTopology: {matchLabels: {topology.ebs.csi.aws.com/zone: a}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: attach-1}
spec:
  attacher: ebs.csi.aws.com
  nodeName: node-1
  source: {persistentVolumeName: pv-1}
`;

describe('LimitRanges, ResourceQuotas and the CSI kinds with kubectl', NEEDS_KUBECTL, () => {
  // Without the resourcequota controller: the status these tests write by hand stays as written.
  const ctx = kubectlServer({
    flags: ['--controllers=*,-serviceaccount,-root-ca-cert-publisher,-resourcequota', '--disable-admission-plugins=ServiceAccount'],
  });

  it('applies with kube defaults and shows kube columns', async () => {
    await ctx.k.ok(['apply', '--server-side', '-f', '-'], MANIFEST);
    const diff = await ctx.k.run(['diff', '--server-side', '-f', '-'], MANIFEST);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);

    const lr = (await ctx.s.admin.request('GET', '/api/v1/namespaces/default/limitranges/defaults')).json;
    // The default limit from max, the default request from the default limit, else min.
    assert.deepEqual(lr.spec.limits[0].default, { memory: '512Mi', cpu: '2' });
    assert.deepEqual(lr.spec.limits[0].defaultRequest, { memory: '512Mi', cpu: '2' });

    const driver = (await ctx.s.admin.request('GET', '/apis/storage.k8s.io/v1/csidrivers/ebs.csi.aws.com')).json;
    assert.deepEqual(driver.spec, {
      attachRequired: true,
      podInfoOnMount: false,
      volumeLifecycleModes: ['Persistent'],
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      tokenRequests: [{ audience: 'sts.amazonaws.com' }],
      requiresRepublish: false,
      seLinuxMount: false,
    });
    const va = (await ctx.s.admin.request('GET', '/apis/storage.k8s.io/v1/volumeattachments/attach-1')).json;
    assert.deepEqual(va.status, { attached: false });

    // Several kinds in one get: one table each, names qualified by kind, as kubectl prints them from kube.
    const sections = (await ctx.k.ok(['get', 'hpa,limits,quota,csidrivers', '-A']))
      .trim()
      .split(/\n\s*\n/)
      .map((s) => tableRows(s));
    assert.deepEqual(
      sections.map((s) => s[0]),
      [
        ['NAMESPACE', 'NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE'],
        ['NAMESPACE', 'NAME', 'CREATED AT'],
        ['NAMESPACE', 'NAME', 'AGE', 'REQUEST', 'LIMIT'],
        // -A adds the column to the cluster-scoped table too, empty.
        ['NAMESPACE', 'NAME', 'ATTACHREQUIRED', 'PODINFOONMOUNT', 'STORAGECAPACITY', 'TOKENREQUESTS', 'REQUIRESREPUBLISH', 'MODES', 'AGE'],
      ],
    );
    assert.deepEqual(sections[0]![1]!.slice(0, 7), [
      'default',
      'horizontalpodautoscaler.autoscaling/web',
      'Deployment/web',
      'cpu: <unknown>/80%',
      '1',
      '4',
      '0',
    ]);
    assert.equal(sections[1]![1]![1], 'limitrange/defaults');
    assert.equal(sections[2]![1]![1], 'resourcequota/team');
    assert.equal(sections[3]![1]![0], 'csidriver.storage.k8s.io/ebs.csi.aws.com');

    const limits = tableRows(await ctx.k.ok(['get', 'limits']));
    assert.deepEqual(limits[0], ['NAME', 'CREATED AT']);
    assert.equal(limits[1]![0], 'defaults');
    assert.match(limits[1]![1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const drivers = tableRows(await ctx.k.ok(['get', 'csidrivers']));
    assert.deepEqual(drivers[0], ['NAME', 'ATTACHREQUIRED', 'PODINFOONMOUNT', 'STORAGECAPACITY', 'TOKENREQUESTS', 'REQUIRESREPUBLISH', 'MODES', 'AGE']);
    assert.deepEqual(drivers[1]!.slice(0, 7), ['ebs.csi.aws.com', 'true', 'false', 'false', 'sts.amazonaws.com', 'false', 'Persistent']);
    assert.deepEqual(tableRows(await ctx.k.ok(['get', 'csinodes']))[1]!.slice(0, 2), ['node-1', '1']);
    const cap = tableRows(await ctx.k.ok(['get', 'csistoragecapacities']));
    assert.deepEqual(cap, [
      ['NAME', 'STORAGECLASSNAME', 'CAPACITY'],
      ['zone-a', 'fast', '100Gi'],
    ]);
    const attach = tableRows(await ctx.k.ok(['get', 'volumeattachments']));
    assert.deepEqual(attach[0], ['NAME', 'ATTACHER', 'PV', 'NODE', 'ATTACHED', 'AGE']);
    assert.deepEqual(attach[1]!.slice(0, 5), ['attach-1', 'ebs.csi.aws.com', 'pv-1', 'node-1', 'false']);
  });

  it('takes quota and attachment status only through /status', async () => {
    const quota = '/api/v1/namespaces/default/resourcequotas/team';
    const q = (await ctx.s.admin.request('GET', quota)).json;
    const status = { hard: { pods: '10', 'requests.cpu': '4', 'limits.memory': '8Gi' }, used: { pods: '3', 'requests.cpu': '500m', 'limits.memory': '1Gi' } };
    const main = await ctx.s.admin.request('PUT', quota, { ...q, status });
    assert.equal(main.status, 200, main.text);
    // The empty status Go writes; a main write does not fill it.
    assert.deepEqual(main.json.status, {});
    const st = await ctx.s.admin.request('PUT', `${quota}/status`, { ...main.json, status });
    assert.equal(st.status, 200, st.text);
    const table = tableRows(await ctx.k.ok(['get', 'quota']));
    assert.deepEqual(table[0], ['NAME', 'AGE', 'REQUEST', 'LIMIT']);
    assert.deepEqual([table[1]![0], ...table[1]!.slice(2)], ['team', 'pods: 3/10, requests.cpu: 500m/4', 'limits.memory: 1Gi/8Gi']);

    await ctx.k.ok(['patch', 'volumeattachment', 'attach-1', '--subresource=status', '--type=merge', '-p', '{"status":{"attached":true}}']);
    assert.deepEqual(tableRows(await ctx.k.ok(['get', 'volumeattachments']))[1]!.slice(0, 5), ['attach-1', 'ebs.csi.aws.com', 'pv-1', 'node-1', 'true']);
  });

  it('refuses quantities that do not parse, naming the field, and changes kube keeps immutable', async () => {
    let r = await ctx.k.run(['patch', 'quota', 'team', '--type=merge', '-p', '{"spec":{"hard":{"pods":"ten","secrets":"-1"}}}']);
    assert.match(r.stderr, /spec.hard\[pods\]: Invalid value: "ten": quantities must match the regular expression/);
    assert.match(r.stderr, /spec.hard\[secrets\]: Invalid value: "-1": must be greater than or equal to 0/);
    r = await ctx.k.run(['patch', 'limits', 'defaults', '--type=json', '-p', '[{"op":"add","path":"/spec/limits/0/min/memory","value":"2Gi"}]']);
    assert.match(r.stderr, /spec.limits\[0\].min\[memory\]: Invalid value: "2Gi": min value 2Gi is greater than max value 1Gi/);
    r = await ctx.k.run(['patch', 'csidriver', 'ebs.csi.aws.com', '--type=merge', '-p', '{"spec":{"attachRequired":false,"fsGroupPolicy":"File"}}']);
    assert.match(r.stderr, /spec.attachedRequired: Invalid value: false: field is immutable/);
    assert.match(r.stderr, /spec.fsGroupPolicy: Invalid value: "File": field is immutable/);
    r = await ctx.k.run(['patch', 'csistoragecapacity', 'zone-a', '--type=merge', '-p', '{"storageClassName":"slow","capacity":"lots"}']);
    assert.match(r.stderr, /storageClassName: Invalid value: "slow": field is immutable/);
    assert.match(r.stderr, /capacity: Invalid value: "lots": quantities must match the regular expression/);
    r = await ctx.k.run(['patch', 'volumeattachment', 'attach-1', '--type=merge', '-p', '{"spec":{"nodeName":"node-2"}}']);
    assert.match(r.stderr, /spec: Invalid value: .*: field is immutable/);
    r = await ctx.k.run(['patch', 'csinode', 'node-1', '--type=json', '-p', '[{"op":"replace","path":"/spec/drivers/0/nodeID","value":"i-0def"}]']);
    assert.match(r.stderr, /spec.drivers\[0\].nodeID: Invalid value: "i-0def": field is immutable/);
    r = await ctx.k.run(
      ['create', '-f', '-'],
      'apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata: {name: neither}\nspec: {attacher: x.example.com, nodeName: node-1, source: {}}\n',
    );
    assert.match(r.stderr, /spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName/);

    r = await ctx.k.run(
      ['create', '-f', '-'],
      'apiVersion: storage.k8s.io/v1\nkind: CSIStorageCapacity\nmetadata: {name: odd}\nstorageClassName: fast\nnodeTopology: {matchExpressions: [{key: zone, operator: Near}]}\n',
    );
    assert.match(r.stderr, /nodeTopology: Invalid value: .*"Near" is not a valid label selector operator/);
    r = await ctx.k.run(
      ['create', '-f', '-'],
      'apiVersion: v1\nkind: LimitRange\nmetadata: {name: pvc}\nspec: {limits: [{type: PersistentVolumeClaim, default: {storage: 1Gi}}]}\n',
    );
    assert.match(r.stderr, /spec.limits\[0\].limits: Required value: either minimum or maximum storage value is required, but neither was provided/);

    await ctx.k.ok(['delete', '-f', '-'], MANIFEST);
    assert.equal((await ctx.s.admin.request('GET', '/apis/storage.k8s.io/v1/csidrivers')).json.items.length, 0);
  });
});
