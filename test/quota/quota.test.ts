// ResourceQuota and LimitRanger admission and the resourcequota controller
// against a started server: the controller fills status.hard and status.used
// and counts again after a delete; a quota refuses what exceeds it with
// kube's message (and "must specify" when it tracks cpu a pod does not
// state); LimitRange defaults let such a pod in, annotated as kube annotates
// it; min/max refusals; concurrent creates never overshoot; `__proto__` is
// data; dry runs are not charged; --disable-admission-plugins turns both off.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { KUBECTL, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';
import { Kubectl } from '../e2e/helpers.js';

const ns = (name: string) => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const quota = (name: string, hard: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ResourceQuota',
  metadata: { name },
  spec: { hard, ...extra },
});
const pod = (name: string, resources?: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'app', image: 'nginx', ...(resources ? { resources } : {}) }], ...extra },
});
const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { k: 'v' } });

async function makeNamespace(s: TestServer, name: string): Promise<void> {
  const r = await s.admin.request('POST', '/api/v1/namespaces', ns(name));
  assert.equal(r.status, 201, r.text);
}

/** Creates the quota and waits until the controller filled its status (hard as spec.hard, used counted). */
async function makeQuota(s: TestServer, namespace: string, q: ReturnType<typeof quota>): Promise<Record<string, any>> {
  const r = await s.admin.request('POST', `/api/v1/namespaces/${namespace}/resourcequotas`, q);
  assert.equal(r.status, 201, r.text);
  return eventually(`status of quota ${q.metadata.name}`, async () => {
    const got = (await s.admin.request('GET', `/api/v1/namespaces/${namespace}/resourcequotas/${q.metadata.name}`)).json;
    return got.status?.used && got.status?.hard ? got.status : undefined;
  });
}

const usedOf = async (s: TestServer, namespace: string, name: string) =>
  (await s.admin.request('GET', `/api/v1/namespaces/${namespace}/resourcequotas/${name}`)).json.status.used;

describe('ResourceQuota and LimitRanger', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s?.close());

  it('refuses the third pod under pods: 2 with kube message, and counts again after a delete', async () => {
    await makeNamespace(s, 'q-pods');
    const status = await makeQuota(s, 'q-pods', quota('compute', { pods: '2', 'count/pods': '5' }));
    assert.deepEqual(status, { hard: { pods: '2', 'count/pods': '5' }, used: { pods: '0', 'count/pods': '0' } });
    for (const name of ['a', 'b']) assert.equal((await s.admin.request('POST', '/api/v1/namespaces/q-pods/pods', pod(name))).status, 201);
    assert.deepEqual(await usedOf(s, 'q-pods', 'compute'), { pods: '2', 'count/pods': '2' });
    const third = await s.admin.request('POST', '/api/v1/namespaces/q-pods/pods', pod('c'));
    assert.equal(third.status, 403, third.text);
    assert.equal(third.json.reason, 'Forbidden');
    assert.equal(third.json.message, 'pods "c" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2');
    assert.deepEqual(third.json.details, { name: 'c', kind: 'pods' });
    // Deletion is not charged: the controller counts again.
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/q-pods/pods/a')).status, 200);
    await eventually('usage after the delete', async () => {
      const used = await usedOf(s, 'q-pods', 'compute');
      return used.pods === '1' && used['count/pods'] === '1';
    });
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces/q-pods/pods', pod('c'))).status, 201);
  });

  it('shows Used and Hard in kubectl describe quota, and kubectl create hears the refusal', NEEDS_KUBECTL, async () => {
    const k = new Kubectl(KUBECTL!, s.kubeconfig);
    const out = await k.ok(['describe', 'quota', 'compute', '-n', 'q-pods']);
    assert.match(out, /^Name:\s+compute$/m);
    assert.match(out, /^Resource\s+Used\s+Hard$/m);
    assert.match(out, /^count\/pods\s+2\s+5$/m);
    assert.match(out, /^pods\s+2\s+2$/m);
    const r = await k.run(['run', 'd', '-n', 'q-pods', '--image=nginx']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pods "d" is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2/);
  });

  it('wants cpu stated under a requests.cpu quota, and a LimitRange default supplies it', async () => {
    await makeNamespace(s, 'q-cpu');
    await makeQuota(s, 'q-cpu', quota('cpu', { 'requests.cpu': '1', 'limits.memory': '1Gi' }));
    const bare = await s.admin.request('POST', '/api/v1/namespaces/q-cpu/pods', pod('bare'));
    assert.equal(bare.status, 403, bare.text);
    assert.equal(bare.json.message, 'pods "bare" is forbidden: failed quota: cpu: must specify limits.memory for: app; requests.cpu for: app');
    const lr = await s.admin.request('POST', '/api/v1/namespaces/q-cpu/limitranges', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'defaults' },
      spec: { limits: [{ type: 'Container', default: { memory: '256Mi' }, defaultRequest: { cpu: '0.25', memory: '128Mi' }, max: { cpu: '2' } }] },
    });
    assert.equal(lr.status, 201, lr.text);
    const created = await eventually('a pod admitted with the defaults', async () => {
      const r = await s.admin.request('POST', '/api/v1/namespaces/q-cpu/pods', pod('defaulted'));
      return r.status === 201 ? r.json : undefined;
    });
    // max cpu 2 makes the default cpu limit 2 (LimitRange defaulting); each default the container lacked is noted.
    // The LimitRange was stored with its quantities canonical (0.25 → 250m), as kube stores it, and the pod gets them so.
    assert.deepEqual(created.spec.containers[0].resources, { limits: { memory: '256Mi', cpu: '2' }, requests: { cpu: '250m', memory: '128Mi' } });
    assert.equal(
      created.metadata.annotations['kubernetes.io/limit-ranger'],
      'LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app',
    );
    assert.deepEqual(await usedOf(s, 'q-cpu', 'cpu'), { 'requests.cpu': '250m', 'limits.memory': '256Mi' });
    // Three more at 250m fit exactly; the fifth goes over, in kube's words.
    for (const name of ['p2', 'p3', 'p4']) assert.equal((await s.admin.request('POST', '/api/v1/namespaces/q-cpu/pods', pod(name))).status, 201);
    const over = await s.admin.request('POST', '/api/v1/namespaces/q-cpu/pods', pod('p5'));
    assert.equal(over.status, 403, over.text);
    assert.equal(
      over.json.message,
      'pods "p5" is forbidden: exceeded quota: cpu, requested: limits.memory=256Mi,requests.cpu=250m, used: limits.memory=1Gi,requests.cpu=1, limited: limits.memory=1Gi,requests.cpu=1',
    );
    // Over the LimitRange's max: refused by LimitRanger before quota is consulted.
    const big = await s.admin.request('POST', '/api/v1/namespaces/q-cpu/pods', pod('big', { limits: { cpu: '3' }, requests: { cpu: '1500m' } }));
    assert.equal(big.status, 403, big.text);
    assert.equal(big.json.message, 'pods "big" is forbidden: maximum cpu usage per Container is 2, but limit is 3');
  });

  it('checks Pod totals, limit-to-request ratios and claims against LimitRanges, in kube words', async () => {
    await makeNamespace(s, 'lr-checks');
    const lr = await s.admin.request('POST', '/api/v1/namespaces/lr-checks/limitranges', {
      apiVersion: 'v1',
      kind: 'LimitRange',
      metadata: { name: 'checks' },
      spec: {
        limits: [
          { type: 'Pod', max: { memory: '1Gi' } },
          { type: 'Container', maxLimitRequestRatio: { cpu: '2' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ],
      },
    });
    assert.equal(lr.status, 201, lr.text);
    const twoBig = {
      ...pod('two'),
      spec: {
        containers: ['a', 'b'].map((name) => ({
          name,
          image: 'nginx',
          resources: { limits: { cpu: '1', memory: '768Mi' }, requests: { cpu: '250m', memory: '768Mi' } },
        })),
      },
    };
    const r = await eventually('the LimitRange in force', async () => {
      const got = await s.admin.request('POST', '/api/v1/namespaces/lr-checks/pods', twoBig);
      return got.status === 403 ? got : undefined;
    });
    assert.equal(
      r.json.message,
      'pods "two" is forbidden: [maximum memory usage per Pod is 1Gi, but limit is 1536Mi, cpu max limit to request ratio per Container is 2, but provided ratio is 4.000000]',
    );
    const claim = (name: string, storage: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } },
    });
    const small = await s.admin.request('POST', '/api/v1/namespaces/lr-checks/persistentvolumeclaims', claim('small', '500Mi'));
    assert.equal(small.status, 403, small.text);
    assert.equal(
      small.json.message,
      'persistentvolumeclaims "small" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi',
    );
    const big = await s.admin.request('POST', '/api/v1/namespaces/lr-checks/persistentvolumeclaims', claim('big', '20Gi'));
    assert.equal(big.json.message, 'persistentvolumeclaims "big" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces/lr-checks/persistentvolumeclaims', claim('fits', '5Gi'))).status, 201);
  });

  it('never stores more than the quota allows when 20 creates race', async () => {
    await makeNamespace(s, 'q-race');
    await makeQuota(s, 'q-race', quota('cms', { 'count/configmaps': '10', configmaps: '12' }));
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => s.admin.request('POST', '/api/v1/namespaces/q-race/configmaps', configMap(`cm-${i}`))),
    );
    const codes = answers.map((r) => r.status).sort();
    assert.deepEqual(codes, [...Array(10).fill(201), ...Array(10).fill(403)], answers.map((r) => r.text).join('\n'));
    for (const r of answers.filter((a) => a.status === 403))
      assert.match(
        r.json.message,
        /^configmaps "cm-\d+" is forbidden: exceeded quota: cms, requested: count\/configmaps=1, used: count\/configmaps=10, limited: count\/configmaps=10$/,
      );
    const stored = (await s.admin.request('GET', '/api/v1/namespaces/q-race/configmaps')).json.items;
    assert.equal(stored.length, 10);
    assert.deepEqual(await usedOf(s, 'q-race', 'cms'), { 'count/configmaps': '10', configmaps: '10' });
  });

  it('does not charge a dry run, and charges a Service update that adds a load balancer', async () => {
    await makeNamespace(s, 'q-svc');
    await makeQuota(s, 'q-svc', quota('svc', { services: '5', 'services.loadbalancers': '1', 'services.nodeports': '2' }));
    const svc = (name: string, type: string, ports = 1) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name },
      spec: { type, ports: Array.from({ length: ports }, (_, i) => ({ name: `p${i}`, port: 80 + i })) },
    });
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces/q-svc/services?dryRun=All', svc('dry', 'ClusterIP'))).status, 201);
    assert.deepEqual(await usedOf(s, 'q-svc', 'svc'), { services: '0', 'services.loadbalancers': '0', 'services.nodeports': '0' });
    const created = await s.admin.request('POST', '/api/v1/namespaces/q-svc/services', svc('web', 'ClusterIP', 3));
    assert.equal(created.status, 201, created.text);
    const lb = await s.admin.request('PUT', '/api/v1/namespaces/q-svc/services/web', { ...created.json, spec: { ...created.json.spec, type: 'LoadBalancer' } });
    assert.equal(lb.status, 403, lb.text);
    assert.equal(
      lb.json.message,
      'services "web" is forbidden: exceeded quota: svc, requested: services.nodeports=3, used: services.nodeports=0, limited: services.nodeports=2',
    );
  });

  it('keeps __proto__ in spec.hard as data: refused naming the field', async () => {
    await makeNamespace(s, 'q-proto');
    const body = `{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"odd"},"spec":{"hard":{"__proto__":"1","pods":"1"}}}`;
    const r = await s.admin.request('POST', '/api/v1/namespaces/q-proto/resourcequotas', body);
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec\.hard\[__proto__\]: Invalid value: "__proto__"/);
    assert.equal(({} as Record<string, unknown>)['pods'], undefined);
    // A pod's requests with the key: data to the evaluators too (not a quota resource, so not charged).
    await makeQuota(s, 'q-proto', quota('pods', { pods: '1' }));
    const p = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"app","image":"nginx","resources":{"requests":{"__proto__":"1"}}}]}}`;
    const created = await s.admin.request('POST', '/api/v1/namespaces/q-proto/pods', p);
    assert.ok(created.status === 201 || created.status === 422, created.text);
    assert.equal(({} as Record<string, unknown>)['1'], undefined);
  });
});

describe('ResourceQuota and LimitRanger turned off', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      flags: [
        '--controllers=*,-serviceaccount,-root-ca-cert-publisher',
        '--disable-admission-plugins=ServiceAccount,LimitRanger,ResourceQuota',
        '--resource-quota-sync-period=1s',
      ],
    });
  });
  after(() => s?.close());

  it('admits past a filled quota and leaves pods without defaults', async () => {
    await makeNamespace(s, 'off');
    await makeQuota(s, 'off', quota('one', { pods: '1' }));
    assert.equal(
      (
        await s.admin.request('POST', '/api/v1/namespaces/off/limitranges', {
          apiVersion: 'v1',
          kind: 'LimitRange',
          metadata: { name: 'lr' },
          spec: { limits: [{ type: 'Container', defaultRequest: { cpu: '100m' } }] },
        })
      ).status,
      201,
    );
    for (const name of ['a', 'b', 'c']) {
      const r = await s.admin.request('POST', '/api/v1/namespaces/off/pods', pod(name));
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.metadata.annotations?.['kubernetes.io/limit-ranger'], undefined);
    }
    // The controller still counts (it is kube-controller-manager's, not an admission plugin): creates are
    // not charged by anyone, so its periodic recount finds them, as kube's does.
    await eventually('the count of three pods', async () => (await usedOf(s, 'off', 'one')).pods === '3');
  });
});
