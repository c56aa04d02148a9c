// The Redis store on a private 3-master Redis Cluster (redis-server ×3 on spare
// loopback ports, joined by `redis-cli --cluster create`): the whole Store
// contract unchanged, types spread over shards, and what revisions mean across
// types and processes there. The servers are stopped by pid at the end.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster, Redis } from 'ioredis';
import { RedisStore } from '../../backends/core/store/redis.js';
import { StoreError } from '../../backends/core/store/types.js';
import { fromStoreError } from '../../backends/core/storeerrors.js';
import type { StatusError } from '../../lib/api/status.js';
import { isPrefixKey, prefixPattern, registryKey, typeKeys } from '../../backends/core/store/redis-keys.js';
import { storeContract } from '../store/contract.js';
import { Collector, pod, rv } from '../store/helpers.js';
import { uniquePrefix } from '../store/fixtures/redis-env.js';
import { RedisCluster, redisCliSkipReason, redisServerSkipReason } from './redis-server.js';

const skip = (await redisServerSkipReason()) ?? redisCliSkipReason();

/** Every key of a prefix on each master: node port → keys. */
async function keysByNode(cluster: RedisCluster, prefix: string): Promise<Map<number, string[]>> {
  const out = new Map<number, string[]>();
  for (const n of cluster.nodes) {
    const c = new Redis(n.url, { maxRetriesPerRequest: 1 });
    try {
      const keys: string[] = [];
      let cursor = '0';
      do {
        const [next, batch] = await c.scan(cursor, 'MATCH', prefixPattern(prefix), 'COUNT', 1000);
        cursor = next;
        keys.push(...batch.filter((k) => isPrefixKey(prefix, k)));
      } while (cursor !== '0');
      out.set(n.port, keys);
    } finally {
      c.disconnect();
    }
  }
  return out;
}

async function dropClusterPrefix(cluster: RedisCluster, prefix: string): Promise<void> {
  for (const [port, keys] of await keysByNode(cluster, prefix)) {
    if (keys.length === 0) continue;
    const c = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    try {
      for (const k of keys) await c.del(k); // one key per DEL: keys of several slots
    } finally {
      c.disconnect();
    }
  }
}

if (skip) {
  describe('redis store on a redis cluster', () => {
    it('runs against a private redis cluster', { skip }, () => undefined);
  });
} else {
  const cluster = await RedisCluster.start(3);
  after(async () => cluster.destroy());

  storeContract('redis cluster', async (opts) => {
    const prefix = uniquePrefix('cluster');
    const store = await RedisStore.open({ ...opts, url: cluster.url, prefix });
    assert.equal(store.cluster, true);
    return { store, cleanup: async () => dropClusterPrefix(cluster, prefix) };
  });

  describe('redis store on a redis cluster', () => {
    it('accepts redis+cluster:// with one seed', async () => {
      const prefix = uniquePrefix('seed');
      const store = await RedisStore.open({ url: `redis+cluster://127.0.0.1:${cluster.nodes[1]!.port}`, prefix, historyWindowMs: 60_000 });
      try {
        assert.equal(store.cluster, true);
        const x = await store.create('core/pods/a/x', pod('a', 'x'));
        assert.equal(rv(await store.get('core/pods/a/x')), rv(x));
        await store.check();
      } finally {
        await store.close();
        await dropClusterPrefix(cluster, prefix);
      }
    });

    it('puts each type in its own hash slot, spreading types over the shards', async () => {
      const prefix = uniquePrefix('spread');
      const store = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      const types = ['pods', 'secrets', 'configmaps', 'services', 'endpoints', 'events', 'serviceaccounts', 'namespaces', 'nodes', 'leases'];
      try {
        for (const t of types) {
          await store.create(`core/${t}/a/x`, pod('a', 'x'));
          await store.create(`core/${t}/a/y`, pod('a', 'y'));
        }
        const probe = new Cluster([{ host: '127.0.0.1', port: cluster.nodes[0]!.port }]);
        const tags = new Set<string>();
        try {
          for (const t of types) {
            const k = typeKeys(prefix, `core/${t}/`);
            // All keys of one type share a slot…
            const s = new Set(
              await Promise.all(
                [k.rev, k.last, k.feed, k.objectsStem + `core/${t}/`, k.indexStem + `core/${t}/`].map(
                  (key) => probe.cluster('KEYSLOT', key) as Promise<number>,
                ),
              ),
            );
            assert.equal(s.size, 1, `one slot for ${t}`);
            tags.add(/\{[^}]*\}/.exec(k.rev)![0]);
          }
        } finally {
          probe.disconnect();
        }
        // …under a hash tag of its own. (Not "a slot of its own": two tags hash to one of 16,384 slots by chance —
        // 10 types under a random prefix did so once in a CI run.)
        assert.equal(tags.size, types.length, 'one hash tag per type');
        // …and the types land on different masters.
        const byNode = await keysByNode(cluster, prefix);
        const typesOn = [...byNode.values()].map(
          (keys) => new Set(keys.filter((k) => k.includes(':core/')).map((k) => k.slice(k.indexOf(':') + 1, k.indexOf('}')))),
        );
        const used = typesOn.filter((s) => s.size > 0).length;
        assert.ok(used >= 2, `types spread over ${used} of 3 shards: ${typesOn.map((s) => [...s].join(' ')).join(' | ')}`);
        for (const t of types) {
          const holders = typesOn.filter((s) => s.has(`core/${t}/`)).length;
          assert.equal(holders, 1, `every key of core/${t}/ on one shard`);
        }
        const registry = await keysByNode(cluster, prefix);
        assert.ok([...registry.values()].flat().includes(registryKey(prefix)));
      } finally {
        await store.close();
        await dropClusterPrefix(cluster, prefix);
      }
    });

    it('orders writes of one type totally across two processes, and causally across types', async () => {
      const prefix = uniquePrefix('order');
      const a = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      const b = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      try {
        const w = new Collector();
        const watcher = b.watch('core/pods/', await b.currentRev(), w);
        const revs: number[] = [];
        await Promise.all(
          [a, b].map(async (s, i) => {
            for (let j = 0; j < 20; j++) revs.push(rv(await s.create(`core/pods/n/p${i}-${j}`, pod('n', `p${i}-${j}`))));
          }),
        );
        const evs = await w.waitFor(40);
        watcher.stop();
        assert.deepEqual(
          evs.map((e) => e.rev),
          [...revs].sort((x, y) => x - y),
          'every pod write once, in revision order',
        );
        // Across types, through one process: a later write has a larger revision.
        const s = await a.create('core/secrets/n/s', pod('n', 's'));
        const p = await a.update('core/pods/n/p0-0', pod('n', 'p0-0', { spec: { n: 1 } }));
        assert.ok(rv(p) > rv(s));
        // Through another process, after it read currentRev() (any type).
        await b.currentRev();
        const p2 = await b.update('core/pods/n/p0-0', pod('n', 'p0-0', { spec: { n: 2 } }));
        assert.ok(rv(p2) > rv(s));
        // A watch of another type from currentRev() misses no later write, whoever writes it.
        const from = await a.currentRev();
        const w2 = new Collector();
        const watcher2 = a.watch('core/configmaps/', from, w2);
        const c = await b.create('core/configmaps/n/c', pod('n', 'c'));
        assert.ok(rv(c) > from);
        assert.deepEqual(
          (await w2.waitFor(1)).map((e) => e.key),
          ['core/configmaps/n/c'],
        );
        watcher2.stop();
        // A list of a type is pinned to a revision every later write of that type exceeds.
        const listed = await b.list('core/secrets/');
        const s2 = await a.create('core/secrets/n/s2', pod('n', 's2'));
        assert.ok(rv(s2) > listed.rev);
        assert.deepEqual(
          (await a.list('core/secrets/', { rev: listed.rev })).items.map((o) => o.metadata.name),
          ['s'],
        );
      } finally {
        await a.close();
        await b.close();
        await dropClusterPrefix(cluster, prefix);
      }
    });

    it('a watch of a type the process opens only now, from a revision before its writes, sees them', async () => {
      const prefix = uniquePrefix('late');
      const a = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      const b = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      try {
        const from = await a.currentRev();
        // The type's first writes happen before process a ever touches it.
        await b.create('core/configmaps/n/c1', pod('n', 'c1'));
        await b.update('core/configmaps/n/c1', pod('n', 'c1', { spec: { n: 1 } }));
        const w = new Collector();
        const watcher = a.watch('core/configmaps/', from, w);
        assert.deepEqual(
          (await w.waitFor(2)).map((e) => `${e.type} ${e.key}`),
          ['ADDED core/configmaps/n/c1', 'MODIFIED core/configmaps/n/c1'],
        );
        watcher.stop();
      } finally {
        await a.close();
        await b.close();
        await dropClusterPrefix(cluster, prefix);
      }
    });

    it("refuses a watch that spans types as the caller's error (400), not an outage", async () => {
      const prefix = uniquePrefix('broad');
      const store = await RedisStore.open({ url: cluster.url, prefix, historyWindowMs: 60_000 });
      try {
        assert.throws(() => store.watch('core/', 0, new Collector()), /one resource type/);
        assert.throws(
          () => store.watch('core/', 0, new Collector()),
          (err: unknown) => err instanceof StoreError && err.code === 'invalid',
        );
        assert.equal((fromStoreError(new StoreError('invalid', 'x'), { group: '', resource: 'pods' }, '') as StatusError).code, 400);
      } finally {
        await store.close();
        await dropClusterPrefix(cluster, prefix);
      }
    });
  });
}
