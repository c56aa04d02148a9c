// The bootstrap APF objects: created at start with autoupdate-spec "true";
// a changed mandatory object is put back at the next pass (run here by
// calling the post-start hook again, as its minute timer does), a suggested
// one marked "false" is left alone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';

const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';
type Obj = { metadata: { name: string; annotations?: Record<string, string>; resourceVersion: string }; spec: Record<string, unknown> };

const LEVELS = ['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low'];
const SCHEMAS: Array<[string, string, number]> = [
  ['exempt', 'exempt', 1], ['probes', 'exempt', 2], ['system-leader-election', 'leader-election', 100], ['endpoint-controller', 'workload-high', 150],
  ['workload-leader-election', 'leader-election', 200], ['system-node-high', 'node-high', 400], ['system-nodes', 'system', 500],
  ['kube-controller-manager', 'workload-high', 800], ['kube-scheduler', 'workload-high', 800], ['kube-system-service-accounts', 'workload-high', 900],
  ['service-accounts', 'workload-low', 9000], ['global-default', 'global-default', 9900], ['catch-all', 'catch-all', 10000],
];

describe('APF bootstrap objects', () => {
  let s: TestServer;
  before(async () => { s = await startTestServer(); });
  after(async () => { await s.close(); });

  it('creates kube\'s mandatory and suggested levels and schemas, annotated autoupdate-spec', async () => {
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
    const shares = async (n: string) => ((await get(`prioritylevelconfigurations/${n}`)).spec['limited'] as Record<string, unknown>)['nominalConcurrencyShares'];
    assert.equal(await shares('catch-all'), 5);
    assert.equal(await shares('workload-low'), 7);
    assert.equal(await shares('global-default'), 20);
  });
});
