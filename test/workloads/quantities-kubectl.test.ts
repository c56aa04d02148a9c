// Quantities stored in kube's canonical form, as kube-apiserver's decode and
// encode leaves them: in pods, ResourceQuotas (spec and /status), LimitRanges,
// PersistentVolumeClaims and Nodes, through kubectl and the API; a write that
// only spells an amount differently changes nothing; custom resources keep
// what the client wrote.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from '../crd/fixtures.js';

const NS = '/api/v1/namespaces/default';
const MERGE = { 'content-type': 'application/merge-patch+json' };

describe('quantities stored as kube-apiserver writes them', NEEDS_KUBECTL, () => {
  // Without the resourcequota controller: the quota status these tests write by hand, and their revisions, stay as written.
  const ctx = kubectlServer({
    flags: ['--controllers=*,-serviceaccount,-root-ca-cert-publisher,-resourcequota', '--disable-admission-plugins=ServiceAccount'],
  });

  it('writes a pod’s requests and limits canonically, kubectl reading them back so', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'q-pod' },
      spec: {
        containers: [{ name: 'a', image: 'nginx', resources: { requests: { cpu: '0.5', memory: '1.5Gi' }, limits: { cpu: '1000m', memory: 2147483648 } } }],
      },
    };
    await ctx.k.ok(['create', '-f', '-'], JSON.stringify(pod));
    const got = JSON.parse(await ctx.k.ok(['get', 'pod', 'q-pod', '-o', 'jsonpath={.spec.containers[0].resources}']));
    assert.deepEqual(got, { requests: { cpu: '500m', memory: '1536Mi' }, limits: { cpu: '1', memory: '2147483648' } });
    // A number is decimal SI: 2^30 × 2 is written as the digits, never as 2Gi.
  });

  it('writes a ResourceQuota’s hard and used, a LimitRange, a PVC and a Node canonically', async () => {
    const quota = await ctx.s.admin.request('POST', `${NS}/resourcequotas`, {
      metadata: { name: 'q' },
      spec: { hard: { 'requests.cpu': '2000m', 'requests.memory': '1024Mi', pods: '10', 'requests.storage': '1e3' } },
    });
    assert.equal(quota.status, 201, quota.text);
    assert.deepEqual(quota.json.spec.hard, { 'requests.cpu': '2', 'requests.memory': '1Gi', pods: '10', 'requests.storage': '1e3' });
    const st = await ctx.s.admin.request('PATCH', `${NS}/resourcequotas/q/status`, { status: { hard: { pods: '10' }, used: { pods: '0.000' } } }, MERGE);
    assert.equal(st.status, 200, st.text);
    assert.deepEqual(st.json.status.used, { pods: '0' });

    const lr = await ctx.s.admin.request('POST', `${NS}/limitranges`, {
      metadata: { name: 'lr' },
      spec: { limits: [{ type: 'Container', max: { cpu: '2.5' }, default: { memory: '0.5Gi' } }] },
    });
    assert.equal(lr.status, 201, lr.text);
    assert.equal(lr.json.spec.limits[0].max.cpu, '2500m');
    assert.equal(lr.json.spec.limits[0].default.memory, '512Mi');

    const pvc = await ctx.s.admin.request('POST', `${NS}/persistentvolumeclaims`, {
      metadata: { name: 'pvc' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1000Mi' } } },
    });
    assert.equal(pvc.status, 201, pvc.text);
    assert.equal(pvc.json.spec.resources.requests.storage, '1000Mi', 'already canonical: kept');
    const grown = await ctx.s.admin.request('PATCH', `${NS}/persistentvolumeclaims/pvc`, { spec: { resources: { requests: { storage: '2048Mi' } } } }, MERGE);
    assert.equal(grown.json.spec.resources.requests.storage, '2Gi');

    const node = await ctx.s.admin.request('POST', '/api/v1/nodes', {
      metadata: { name: 'q-node' },
      status: { capacity: { cpu: '4000m', memory: '8388608Ki' } },
    });
    assert.equal(node.status, 201, node.text);
    assert.deepEqual(node.json.status.capacity, { cpu: '4', memory: '8Gi' });
  });

  it('stores nothing new when an update only spells an amount differently', async () => {
    const created = await ctx.s.admin.request('POST', `${NS}/resourcequotas`, { metadata: { name: 'same' }, spec: { hard: { 'limits.cpu': '1' } } });
    const rv = created.json.metadata.resourceVersion;
    const again = await ctx.s.admin.request('PATCH', `${NS}/resourcequotas/same`, { spec: { hard: { 'limits.cpu': '1000m' } } }, MERGE);
    assert.equal(again.status, 200, again.text);
    assert.equal(again.json.metadata.resourceVersion, rv);
    assert.equal(again.json.spec.hard['limits.cpu'], '1');
  });

  it('leaves a custom resource as the client wrote it', async () => {
    const crd = await ctx.s.admin.request('POST', CRD_PATH, crontabCrd());
    assert.equal(crd.status, 201, crd.text);
    const path = '/apis/stable.example.com/v1/namespaces/default/crontabs';
    await waitEstablished(ctx.s, 'crontabs.stable.example.com', path);
    const r = await ctx.s.admin.request('POST', path, crontab('ct', { cronSpec: '1000m', image: '1.5Gi' }));
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.spec, { cronSpec: '1000m', image: '1.5Gi' });
  });
});
