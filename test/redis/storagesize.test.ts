// apiserver_storage_size_bytes where the store can tell: on Redis it is the
// memory the Redis server holds (INFO memory's used_memory), as kube's is
// etcd's whole database; a memory store has no database and no such series.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';
import { REDIS_URL, redisSkipReason } from '../store/fixtures/redis-env.js';

const skip = await redisSkipReason();

async function usedMemory(): Promise<number> {
  const client = new Redis(REDIS_URL);
  try {
    return Number(/^used_memory:(\d+)/m.exec(await client.info('memory'))![1]);
  } finally {
    client.disconnect();
  }
}

describe('the store size series', { skip }, () => {
  let onRedis: TestServer;
  let inMemory: TestServer;
  before(async () => {
    process.env.GATEHOUSE_TEST_STORAGE = 'redis';
    onRedis = await startTestServer();
    delete process.env.GATEHOUSE_TEST_STORAGE;
    inMemory = await startTestServer();
  });
  after(async () => {
    await inMemory?.close();
  });

  it("reports the Redis server's memory under the store's own cluster id", async () => {
    const created = await onRedis.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'sized' },
      data: { a: 'x'.repeat(100_000) },
    });
    assert.equal(created.status, 201, created.text);
    const before = await usedMemory();
    const r = await onRedis.admin.request('GET', '/metrics');
    const after = await usedMemory();
    const size = samples(parseMetrics(r.text), 'apiserver_storage_size_bytes');
    assert.equal(
      size.length,
      1,
      r.text
        .split('\n')
        .filter((l) => l.includes('storage_size'))
        .join('\n'),
    );
    assert.match(size[0]!.labels['storage_cluster_id']!, /^[0-9a-f]{16}$/);
    const value = Number(size[0]!.value);
    // Other tests write to the same Redis meanwhile: the scrape's reading lies near the two around it.
    assert.ok(value > 100_000, `${value}`);
    assert.ok(value >= Math.min(before, after) * 0.5 && value <= Math.max(before, after) * 2, `${value} against ${before}..${after}`);
  });

  it('is absent on the memory store', async () => {
    // Both servers record on this process's one registry: the Redis store's series leaves with it.
    await onRedis.close();
    const r = await inMemory.admin.request('GET', '/metrics');
    assert.equal(samples(parseMetrics(r.text), 'apiserver_storage_size_bytes').length, 0);
  });
});
