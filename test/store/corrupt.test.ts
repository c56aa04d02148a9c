// Per-object corruption in the stores: get and list name the key with
// `corrupt`, writes do not pass over it, deleteCorrupt removes it with a
// DELETED event. Memory injects through its test hook; Redis holds a real
// undecodable value read at open. The file store cannot hold one (every
// record is CRC-checked JSON and a bad record fails the open), so its
// deleteCorrupt is a plain delete.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { MemoryStore } from '../../backends/core/store/memory.js';
import { RedisStore } from '../../backends/core/store/redis.js';
import { redisKeys } from '../../backends/core/store/redis-keys.js';
import { StoreError, type Store, type StoreEvent } from '../../backends/core/store/types.js';
import { pod } from './helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from './fixtures/redis-env.js';
import { eventually } from '../helpers/eventually.js';

const corrupt = (err: unknown) => err instanceof StoreError && err.code === 'corrupt' && /Key: core\/pods\/a\/bad/.test(err.message);

async function checkCorrupt(store: Store): Promise<void> {
  await assert.rejects(store.get('core/pods/a/bad'), corrupt);
  await assert.rejects(store.list('core/pods/'), corrupt);
  assert.equal((await store.list('core/pods/b/')).items.length, 1, 'other namespaces list');
  await assert.rejects(store.create('core/pods/a/bad', pod('a', 'bad')), (e) => e instanceof StoreError && e.code === 'exists');
  const events: StoreEvent[] = [];
  const w = store.watch('core/pods/', await store.currentRev(), { event: (e) => events.push(e), error: () => undefined });
  await store.deleteCorrupt('core/pods/a/bad');
  try {
    await eventually('the DELETED event', () => events.length > 0, { timeoutMs: 3000, intervalMs: 10 });
  } finally {
    w.stop();
  }
  assert.equal(events[0]?.type, 'DELETED');
  assert.equal(events[0]?.object.metadata.name, 'bad');
  assert.equal(events[0]?.object.metadata.namespace, 'a');
  assert.equal(await store.get('core/pods/a/bad'), undefined);
  assert.equal((await store.list('core/pods/')).items.length, 2);
  await assert.rejects(store.deleteCorrupt('core/pods/a/bad'), (e) => e instanceof StoreError && e.code === 'not-found');
}

describe('corrupt objects in the memory store', () => {
  it('reports the corrupt key on get and list and removes it with deleteCorrupt', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    await store.create('core/pods/a/ok', pod('a', 'ok'));
    await store.create('core/pods/a/bad', pod('a', 'bad'));
    await store.create('core/pods/b/x', pod('b', 'x'));
    store.injectCorrupt('core/pods/a/bad');
    await checkCorrupt(store);
    await store.close();
  });
});

const skip = await redisSkipReason();
describe('corrupt objects in the redis store', { skip: skip ?? false }, () => {
  it('marks an undecodable value corrupt at open and removes it with deleteCorrupt', async () => {
    const prefix = uniquePrefix('corrupt');
    const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
    await a.create('core/pods/a/ok', pod('a', 'ok'));
    const bad = await a.create('core/pods/a/bad', pod('a', 'bad'));
    await a.create('core/pods/b/x', pod('b', 'x'));
    await a.close();
    const redis = new Redis(REDIS_URL);
    await redis.hset(`${redisKeys(prefix).objectsStem}core/pods/`, 'core/pods/a/bad', `${bad.metadata.resourceVersion} {not json`);
    redis.disconnect();
    const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
    try {
      await checkCorrupt(b);
    } finally {
      await b.close();
      await dropPrefix(prefix);
    }
  });
});
