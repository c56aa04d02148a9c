// Quota charges across processes: two `gatehouse serve` processes on one
// Redis prefix take 20 racing ConfigMap creates (10 through each) against a
// quota with room for 10; the compare-and-swap on the quota's status keeps either
// process from overwriting the other's charges, so exactly 10 are stored.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';

const skip = await redisSkipReason();
const NS = '/api/v1/namespaces/shared-quota';

describe('quota charges across processes', { skip }, () => {
  const prefix = uniquePrefix('quota');
  let a: Gatehouse;
  let b: Gatehouse;
  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`];
    // One after the other on one data directory: the second reuses the first's dev PKI (making two at once takes
    // longer than a start may on a loaded machine); the store is Redis, so the directory holds nothing else.
    a = await startGatehouse({ flags });
    b = await startGatehouse({ flags, dataDir: a.dataDir });
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('never stores more than the quota when both processes take creates at once', async () => {
    assert.equal(
      (await a.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shared-quota' } })).status,
      201,
    );
    // The root CA publisher puts kube-root-ca.crt in every namespace: it is counted too, so the quota leaves room for 10 more.
    await eventually('kube-root-ca.crt published', async () => (await a.admin.request('GET', `${NS}/configmaps/kube-root-ca.crt`)).status === 200, {
      timeoutMs: 60_000,
    });
    const q = await a.admin.request('POST', `${NS}/resourcequotas`, {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'ten' },
      spec: { hard: { 'count/configmaps': '11' } },
    });
    assert.equal(q.status, 201, q.text);
    // Filled by the leader's controller and seen in each process's watch cache (resourceVersion=0), which feeds
    // its admission's view of the namespace's quotas as it feeds that read.
    for (const g of [a, b])
      await eventually(
        'the quota filled, seen through each process',
        async () => {
          const got = (await g.admin.request('GET', `${NS}/resourcequotas/ten?resourceVersion=0`)).json;
          return got.status?.used?.['count/configmaps'] === '1';
        },
        { timeoutMs: 60_000 },
      );
    const create = (g: Gatehouse, i: number) =>
      g.admin.request('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` } });
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => create(i % 2 === 0 ? a : b, i)));
    const codes = answers.map((r) => r.status).sort();
    assert.deepEqual(codes, [...Array(10).fill(201), ...Array(10).fill(403)], answers.map((r) => r.text).join('\n'));
    const stored = (await a.admin.request('GET', `${NS}/configmaps`)).json.items.filter((c: { metadata: { name: string } }) =>
      c.metadata.name.startsWith('cm-'),
    );
    assert.equal(stored.length, 10);
    assert.equal((await b.admin.request('GET', `${NS}/resourcequotas/ten`)).json.status.used['count/configmaps'], '11');
  });
});
