// The bootstrap APF objects: created at start with autoupdate-spec "true";
// a changed mandatory object is put back at the next pass (run here by
// calling the post-start hook again, as its minute timer does), a suggested
// one marked "false" is left alone; key facts are compared with kube's
// bootstrap/default.go (kubernetes/apiserver 24a394e), and a schema kube
// dropped, still annotated "true", is deleted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
type Obj = { metadata: { name: string; annotations?: Record<string, string>; resourceVersion: string }; spec: Record<string, unknown> };

const LEVELS = ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'];
const SCHEMAS: Array<[string, string, number]> = [
  ['exempt', 'exempt', 1],
  ['probes', 'exempt', 2],
  ['system-leader-election', 'leader-election', 100],
  ['system-node-high', 'node-high', 400],
  ['system-nodes', 'system', 500],
  ['kube-controller-manager', 'workload-high', 800],
  ['kube-scheduler', 'workload-high', 800],
  ['kube-system-service-accounts', 'workload-high', 900],
  ['service-accounts', 'workload-low', 9000],
  ['global-default', 'global-default', 9900],
  ['catch-all', 'catch-all', 10000],
];

describe('APF bootstrap objects', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it("creates kube's mandatory and suggested levels and schemas, annotated autoupdate-spec", async () => {
    const pl = await s.admin.request('GET', `${FC}/prioritylevelconfigurations`);
    const levels = (pl.json as { items: Obj[] }).items;
    assert.deepEqual(levels.map((o) => o.metadata.name).sort(), LEVELS);
    for (const o of levels) assert.equal(o.metadata.annotations?.['apf.kubernetes.io/autoupdate-spec'], 'true', o.metadata.name);
    const exempt = levels.find((o) => o.metadata.name === 'exempt')!;
    assert.equal(exempt.spec['type'], 'Exempt');
    const fs = await s.admin.request('GET', `${FC}/flowschemas`);
    const schemas = (fs.json as { items: Obj[] }).items;
    const got = schemas.map((o) => [o.metadata.name, (o.spec['priorityLevelConfiguration'] as { name: string }).name, o.spec['matchingPrecedence']]);
    assert.deepEqual(got.sort(), [...SCHEMAS].sort());
  });

  it("has kube's shares, lendable percents, queuing, subjects and rules", async () => {
    const get = async (p: string) => (await s.admin.request('GET', `${FC}/${p}`)).json as Obj;
    // [shares, lendablePercent, queues, handSize, queueLengthLimit] from default.go
    const want: Record<string, [number, number, number, number, number]> = {
      system: [30, 33, 64, 6, 50],
      'node-high': [40, 25, 64, 6, 50],
      'leader-election': [10, 0, 16, 4, 50],
      'workload-high': [40, 50, 128, 6, 50],
      'workload-low': [100, 90, 128, 6, 50],
      'global-default': [20, 50, 128, 6, 50],
    };
    for (const [name, [shares, lend, queues, hand, qll]] of Object.entries(want)) {
      const l = (await get(`prioritylevelconfigurations/${name}`)).spec['limited'] as Record<string, any>;
      assert.deepEqual(
        [
          l['nominalConcurrencyShares'],
          l['lendablePercent'],
          l['limitResponse'].queuing.queues,
          l['limitResponse'].queuing.handSize,
          l['limitResponse'].queuing.queueLengthLimit,
        ],
        [shares, lend, queues, hand, qll],
        name,
      );
    }
    const catchAllPL = (await get('prioritylevelconfigurations/catch-all')).spec['limited'] as Record<string, any>;
    assert.deepEqual([catchAllPL['nominalConcurrencyShares'], catchAllPL['lendablePercent'], catchAllPL['limitResponse']], [5, 0, { type: 'Reject' }]);

    const sle = (await get('flowschemas/system-leader-election')).spec as Record<string, any>;
    assert.deepEqual(sle['rules'][0].subjects, [
      { kind: 'User', user: { name: 'system:kube-controller-manager' } },
      { kind: 'User', user: { name: 'system:kube-scheduler' } },
      { kind: 'ServiceAccount', serviceAccount: { namespace: 'kube-system', name: '*' } },
    ]);
    assert.deepEqual(sle['rules'][0].resourceRules, [
      { verbs: ['get', 'create', 'update'], apiGroups: ['coordination.k8s.io'], resources: ['leases'], namespaces: ['*'] },
    ]);
    const nodeHigh = (await get('flowschemas/system-node-high')).spec as Record<string, any>;
    assert.deepEqual(nodeHigh['rules'][0].resourceRules[0], {
      verbs: ['*'],
      apiGroups: [''],
      resources: ['nodes', 'nodes/status'],
      clusterScope: true,
      namespaces: ['*'],
    });
    const catchAll = (await get('flowschemas/catch-all')).spec as Record<string, any>;
    assert.deepEqual(
      catchAll['rules'][0].subjects.map((x: any) => x.group.name),
      ['system:unauthenticated', 'system:authenticated'],
    );
    assert.deepEqual(catchAll['distinguisherMethod'], { type: 'ByUser' });
    const probes = (await get('flowschemas/probes')).spec as Record<string, any>;
    assert.equal(probes['distinguisherMethod'], undefined);
    assert.deepEqual(probes['rules'][0].nonResourceRules, [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez'] }]);
    assert.deepEqual((await get('flowschemas/kube-system-service-accounts')).spec['distinguisherMethod'], { type: 'ByNamespace' });
  });

  it("deletes a schema kube dropped while it says autoupdate-spec true, and keeps an operator's own", async () => {
    const schema = (name: string, annotations?: Record<string, string>) => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: {
        priorityLevelConfiguration: { name: 'workload-high' },
        matchingPrecedence: 150,
        rules: [
          {
            subjects: [{ kind: 'User', user: { name: 'system:kube-controller-manager' } }],
            resourceRules: [{ verbs: ['get'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*'] }],
          },
        ],
      },
    });
    for (const [name, ann] of [
      ['endpoint-controller', { 'apf.kubernetes.io/autoupdate-spec': 'True' }],
      ['workload-leader-election', { 'apf.kubernetes.io/autoupdate-spec': 'false' }],
      ['mine', undefined],
    ] as const) {
      assert.equal((await s.admin.request('POST', `${FC}/flowschemas`, schema(name, ann))).status, 201, name);
    }
    const hook = s.running.core.hooks.find((h) => h.name === 'priority-and-fairness-config-producer');
    assert.ok(hook);
    await hook.run();
    assert.equal((await s.admin.request('GET', `${FC}/flowschemas/endpoint-controller`)).status, 404);
    assert.equal((await s.admin.request('GET', `${FC}/flowschemas/workload-leader-election`)).status, 200);
    assert.equal((await s.admin.request('GET', `${FC}/flowschemas/mine`)).status, 200);
    for (const name of ['workload-leader-election', 'mine']) assert.equal((await s.admin.request('DELETE', `${FC}/flowschemas/${name}`)).status, 200);
  });

  it('puts a changed mandatory object back and leaves a suggested one its owner opted out', async () => {
    const get = async (p: string) => (await s.admin.request('GET', `${FC}/${p}`)).json as Obj;
    const catchAll = await get('prioritylevelconfigurations/catch-all');
    (catchAll.spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares'] = 99;
    assert.equal((await s.admin.request('PUT', `${FC}/prioritylevelconfigurations/catch-all`, catchAll)).status, 200);
    const wl = await get('prioritylevelconfigurations/workload-low');
    (wl.spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares'] = 7;
    wl.metadata.annotations = { 'apf.kubernetes.io/autoupdate-spec': 'false' };
    assert.equal((await s.admin.request('PUT', `${FC}/prioritylevelconfigurations/workload-low`, wl)).status, 200);
    const gd = await get('prioritylevelconfigurations/global-default');
    (gd.spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares'] = 3;
    assert.equal((await s.admin.request('PUT', `${FC}/prioritylevelconfigurations/global-default`, gd)).status, 200);

    const hook = s.running.core.hooks.find((h) => h.name === 'priority-and-fairness-config-producer');
    assert.ok(hook);
    await hook.run();
    const shares = async (n: string) =>
      ((await get(`prioritylevelconfigurations/${n}`)).spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares'];
    assert.equal(await shares('catch-all'), 5);
    assert.equal(await shares('workload-low'), 7);
    assert.equal(await shares('global-default'), 20);
  });
});
