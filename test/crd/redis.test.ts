// Two `gatehouse serve` processes on one Redis: a CRD created through one is
// served by the other without a restart (its registry follows the store's CRDs),
// custom resources written through either are read and watched through the
// other, and deleting the CRD through one takes the type away from both.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';
import { CRD_PATH, crontab, crontabCrd } from './fixtures.js';
import { until } from '../gc/helpers.js';

const skip = await redisSkipReason();
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';

describe('custom resources across two processes on one redis', { skip }, () => {
  const prefix = uniquePrefix('crd');
  let a: Gatehouse;
  let b: Gatehouse;

  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`];
    [a, b] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('serves through the other process a CRD created through one, in discovery too', async () => {
    assert.equal((await b.admin.request('GET', CT)).status, 404);
    const created = await a.admin.request('POST', CRD_PATH, crontabCrd());
    assert.equal(created.status, 201, created.text);
    await until('process b serving crontabs', async () => ((await b.admin.request('GET', CT)).status === 200 ? true : undefined), 15_000);
    const list = await b.admin.request('GET', '/apis/stable.example.com/v1');
    assert.equal(list.status, 200);
    assert.ok(list.json.resources.some((r: { name: string }) => r.name === 'crontabs'));
    const apis = await b.admin.request('GET', '/apis');
    assert.ok(apis.json.groups.some((g: { name: string }) => g.name === 'stable.example.com'));
  });

  it('reads and watches through one process the custom resources written through the other', async () => {
    await until('process a serving crontabs', async () => ((await a.admin.request('GET', CT)).status === 200 ? true : undefined), 15_000);
    const from = (await a.admin.request('GET', CT)).json.metadata.resourceVersion as string;
    const w = await a.admin.watch(`${CT}?watch=1&resourceVersion=${from}`);
    try {
      const c = await b.admin.request('POST', CT, crontab('x', { image: 'i', replicas: 1 }));
      assert.equal(c.status, 201, c.text);
      const s = await b.admin.request('PATCH', `${CT}/x/scale`, { spec: { replicas: 3 } }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(s.status, 200, s.text);
      const evs = await w.take(2, 10_000);
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec.replicas}`),
        ['ADDED x 1', 'MODIFIED x 3'],
      );
      const read = await a.admin.request('GET', `${CT}/x`);
      assert.equal(read.json.metadata.generation, 2);
    } finally {
      w.stop();
    }
  });

  it('takes the type away from both processes when the CRD is deleted through one', async () => {
    const d = await b.admin.request('DELETE', `${CRD_PATH}/crontabs.stable.example.com`);
    assert.equal(d.status, 200, d.text);
    await until(
      'the CRD and its objects gone',
      async () => ((await a.admin.request('GET', `${CRD_PATH}/crontabs.stable.example.com`)).status === 404 ? true : undefined),
      15_000,
    );
    for (const p of [a, b]) await until('crontabs unserved', async () => ((await p.admin.request('GET', CT)).status === 404 ? true : undefined), 15_000);
    const apis = await a.admin.request('GET', '/apis');
    assert.ok(!apis.json.groups.some((g: { name: string }) => g.name === 'stable.example.com'));
  });
});
