// The Store contract suite against the machine's Redis (REDIS_URL), each test under its own prefix.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import { RedisStore } from '../../backends/core/store/redis.js';
import { WRITE_SHA, runWrite } from '../../backends/core/store/redis-scripts.js';
import { loadState } from '../../backends/core/store/redis-state.js';
import { redisKeys, typeKeys } from '../../backends/core/store/redis-keys.js';
import { StoreError, getCachedFirst } from '../../backends/core/store/types.js';
import { storeContract } from './contract.js';
import { Collector, pod, rv } from './helpers.js';
import { REDIS_URL, dropPrefix, prefixFootprint, redisSkipReason, uniquePrefix } from './fixtures/redis-env.js';
import { eventually } from '../helpers/eventually.js';
import { goJson, jsonAnswerText, listItemBytes } from '../../lib/api/json.js';
import type { KObject } from '../../lib/api/meta.js';

/** How many times f calls JSON.stringify (f must not await). */
function stringifies(f: () => void): number {
  const real = JSON.stringify;
  let n = 0;
  JSON.stringify = ((...args: Parameters<typeof real>) => {
    n++;
    return real(...args);
  }) as typeof real;
  try {
    f();
  } finally {
    JSON.stringify = real;
  }
  return n;
}

const skip = await redisSkipReason();

if (skip) {
  describe('redis store', () => {
    it('runs against a reachable redis', { skip }, () => undefined);
  });
} else {
  storeContract('redis', async (opts) => {
    const prefix = uniquePrefix('contract');
    const store = await RedisStore.open({ ...opts, url: REDIS_URL, prefix });
    return { store, cleanup: async () => void (await dropPrefix(prefix)) };
  });

  describe('redis store specifics', () => {
    before(() => undefined);

    it('shares writes, conflicts and watches between two stores on one prefix', async () => {
      const prefix = uniquePrefix('two');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      try {
        const seen: number[] = [];
        const w = b.watch('core/pods/', await b.currentRev(), { event: (e) => seen.push(e.rev), error: (e) => assert.fail(e.message) });
        const x = await a.create('core/pods/a/x', pod('a', 'x'));
        assert.equal(rv(await b.get('core/pods/a/x')), rv(x), 'a consistent read on b sees a write acknowledged by a');
        await b.update('core/pods/a/x', pod('a', 'x', { spec: { n: 1 } }), rv(x));
        await assert.rejects(a.update('core/pods/a/x', pod('a', 'x', { spec: { n: 2 } }), rv(x)), /was modified/);
        const page = await a.list('core/pods/');
        assert.equal(page.rev, await b.currentRev());
        await a.delete('core/pods/a/x');
        assert.equal(await b.get('core/pods/a/x'), undefined);
        try {
          await eventually('three events', () => seen.length >= 3, { timeoutMs: 5000, intervalMs: 5 });
        } finally {
          w.stop();
        }
        assert.deepEqual(seen, [rv(x), rv(x) + 1, rv(x) + 2]);
      } finally {
        await a.close();
        await b.close();
        await dropPrefix(prefix);
      }
    });

    it("the writing store's watchers hear its write before it is answered, once, and after every earlier write", async () => {
      const prefix = uniquePrefix('ownfirst');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      try {
        const seen: string[] = [];
        const w = a.watch('core/pods/', await a.currentRev(), {
          event: (e) => seen.push(`${e.type} ${e.object.metadata.name} ${e.rev}`),
          error: (e) => assert.fail(e.message),
        });
        await new Promise((r) => setImmediate(r));
        // a's feed reads nothing meanwhile: what a's watchers hear comes from the writes themselves.
        const feed = (a as unknown as { single: { blocking: { stream: { pause(): void; resume(): void } } } }).single.blocking.stream;
        feed.pause();
        const x = await a.create('core/pods/a/x', pod('a', 'x'));
        assert.deepEqual(seen, [`ADDED x ${rv(x)}`], 'heard when the create resolved, not a feed round trip later');
        const u = await a.update('core/pods/a/x', pod('a', 'x', { spec: { n: 1 } }), rv(x));
        await a.delete('core/pods/a/x');
        assert.deepEqual(seen, [`ADDED x ${rv(x)}`, `MODIFIED x ${rv(u)}`, `DELETED x ${rv(u) + 1}`]);
        feed.resume();
        // b's write comes between: a's next write does not follow a's cache, so it waits for the feed, in order.
        const y = await b.create('core/pods/a/y', pod('a', 'y'));
        const z = await a.create('core/pods/a/z', pod('a', 'z'));
        try {
          await eventually('five events', () => seen.length >= 5, { timeoutMs: 5000, intervalMs: 5 });
          await new Promise((r) => setTimeout(r, 50));
        } finally {
          w.stop();
        }
        assert.deepEqual(seen.slice(3), [`ADDED y ${rv(y)}`, `ADDED z ${rv(z)}`], 'no event twice, none out of order');
        assert.equal(rv(await b.get('core/pods/a/z')), rv(z));
      } finally {
        await a.close();
        await b.close();
        await dropPrefix(prefix);
      }
    });

    it('getCachedFirst finds what another store just wrote, before its own cache has it', async () => {
      const prefix = uniquePrefix('cachedfirst');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      try {
        const keys = Array.from({ length: 20 }, (_, i) => `core/secrets/n/s${i}`);
        const made = await Promise.all(keys.map((k, i) => a.create(k, pod('n', `s${i}`))));
        const read = await Promise.all(keys.map((k) => getCachedFirst(b, k)));
        assert.deepEqual(
          read.map((o) => o && rv(o)),
          made.map(rv),
        );
        assert.equal(await getCachedFirst(b, 'core/secrets/n/none'), undefined);
      } finally {
        await a.close();
        await b.close();
        await dropPrefix(prefix);
      }
    });

    it('loads a snapshot written by another store when it opens', async () => {
      const prefix = uniquePrefix('snap');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      try {
        for (let i = 0; i < 5; i++) await a.create(`core/pods/n/p${i}`, pod('n', `p${i}`));
        await a.delete('core/pods/n/p2');
        await a.create('core/secrets/n/s', pod('n', 's'));
        const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
        try {
          assert.deepEqual(await b.list('core/pods/'), await a.list('core/pods/'));
          assert.equal(await b.currentRev(), await a.currentRev());
        } finally {
          await b.close();
        }
      } finally {
        await a.close();
        await dropPrefix(prefix);
      }
    });

    it('builds a cache from the snapshot (a reopen) whose objects keep their stored bytes as list bytes, or from the feed; both answer as serializing them gives', async () => {
      const prefix = uniquePrefix('loadbytes');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      const c = new Redis(REDIS_URL);
      // Contents JSON.stringify and Go write differently, escapes, non-ASCII, integer-like keys, members in
      // other orders, an empty resourceVersion elsewhere in the text, a key holding a quote; and enough big
      // objects that the snapshot's reply spans many socket reads (values split across them are copied by
      // the reply parser).
      const odd: KObject[] = [
        pod('n', 'plain'),
        pod('n', 'escaped', { spec: { s: '<b>&</b> \u2028' } }),
        pod('n', 'unicode', { spec: { s: 'quote " backslash \\ é 日本 😀 \ud800', m: { b: 1, 2: 'two', 1: 'one' }, e: {}, n: [0.1, 1e21] } }),
        { metadata: { name: 'meta-first', namespace: 'n', uid: 'u-1', labels: { a: 'b' } }, apiVersion: 'v1', kind: 'Pod' },
        { spec: { first: true }, apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'n', name: 'spec-first' } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { labels: { a: 'b' }, namespace: 'n', name: 'labels-first' } },
        { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'n', name: 'with-rv', resourceVersion: '7', annotations: { 'resourceVersion"': '' } } },
        { apiVersion: 'v1', kind: 'Pod', spec: { resourceVersion: '' }, metadata: { namespace: 'n', name: 'rv-twice' } },
      ];
      for (let i = 0; i < 150; i++) odd.push(pod('n', `big-${String(i).padStart(3, '0')}`, { spec: { s: `${i} é `.repeat(400 + i) } }));
      const serialized = new Set(['escaped', 'rv-twice']); // a character Go escapes; a second empty resourceVersion
      try {
        for (const o of odd) await a.create(`core/pods/n/${o.metadata.name}`, o);
        await a.update('core/pods/n/plain', pod('n', 'plain', { spec: { n: 2 } }));
        await a.delete('core/pods/n/big-007');
        const check = (items: KObject[], replay: boolean): void => {
          assert.equal(items.length, odd.length - 1);
          for (const o of items) {
            const name = `${o.metadata.name} (from the ${replay ? 'feed' : 'snapshot'})`;
            let bytes = '';
            const n = stringifies(() => void (bytes = listItemBytes(o).toString('utf8')));
            // The feed's entries are read as text (Buffers cost its build more than its first lists save).
            if (!replay) assert.equal(n === 0, !serialized.has(o.metadata.name!), `${name}: list bytes kept from the stored ones`);
            const want = goJson(o);
            assert.equal(bytes, `${want},`, name);
            assert.equal(jsonAnswerText(o), `${want}\n`, name);
          }
          assert.equal(goJson(items.find((o) => o.metadata.name === 'plain')).includes('"n":2'), true);
        };
        // A reopen: a second store on the prefix builds its cache from the snapshot (its own connection, auto-pipelined).
        const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
        try {
          check((await b.list('core/pods/')).items, false);
        } finally {
          await b.close();
        }
        // A Redis Cluster domain's first open replays the feed when it holds the whole history.
        const state = await loadState(c, redisKeys(prefix), { historyWindowMs: 60_000 }, true);
        try {
          check(state.list('core/pods/').items, true);
        } finally {
          state.close(new StoreError('unreachable', 'test done'));
        }
      } finally {
        c.disconnect();
        await a.close();
        await dropPrefix(prefix);
      }
    });

    it("loads a snapshot that outlasts the client's command bound (a large store's reply under load)", async () => {
      const prefix = uniquePrefix('snapbound');
      const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      // A client whose commands are bounded at 50 ms, connected before Redis pauses.
      const c = new Redis(REDIS_URL, { commandTimeout: 50 });
      const admin = new Redis(REDIS_URL);
      try {
        await a.create('core/pods/ns/p', pod('ns', 'p'));
        await c.ping();
        // Every client's commands wait 300 ms: six times the bound.
        await admin.call('CLIENT', 'PAUSE', '300', 'ALL');
        const [loaded, other] = await Promise.allSettled([loadState(c, redisKeys(prefix), { historyWindowMs: 60_000 }), c.get(`${prefix}nothing`)]);
        // The bound holds for other commands (the pause is long enough to test anything)…
        assert.equal(other.status, 'rejected');
        assert.match(String((other as PromiseRejectedResult).reason), /timed out/);
        // …and the snapshot waits it out.
        assert.equal(loaded.status, 'fulfilled', String((loaded as PromiseRejectedResult).reason));
        const state = (loaded as PromiseFulfilledResult<Awaited<ReturnType<typeof loadState>>>).value;
        try {
          assert.deepEqual(
            state.list('core/pods/').items.map((o) => o.metadata.name),
            ['p'],
          );
        } finally {
          state.close(new StoreError('unreachable', 'test done'));
        }
      } finally {
        c.disconnect();
        admin.disconnect();
        await a.close();
        await dropPrefix(prefix);
      }
    });

    it('keeps redis memory bounded under repeated updates once history is compacted', async () => {
      const prefix = uniquePrefix('mem');
      let now = 1_700_000_000_000;
      const store = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 1000, clock: () => now, compactIntervalMs: 3_600_000 });
      try {
        for (let i = 0; i < 10; i++) await store.create(`core/configmaps/a/c${i}`, pod('a', `c${i}`));
        for (let round = 0; round < 20; round++) {
          for (let i = 0; i < 10; i++) await store.update(`core/configmaps/a/c${i}`, pod('a', `c${i}`, { spec: { n: round } }));
        }
        for (let i = 5; i < 10; i++) await store.delete(`core/configmaps/a/c${i}`);
        now += 5000;
        await store.update('core/configmaps/a/c0', pod('a', 'c0'));
        const removed = await store.compact();
        assert.ok(removed >= 215, `removed ${removed} feed entries`);
        const fp = await prefixFootprint(prefix);
        assert.equal(fp.keys, 5, 'rev, feed, types, one hash and one index');
        assert.equal((await store.list('core/configmaps/')).items.length, 5);
        assert.throws(() => store.watch('core/configmaps/', 3, { event: () => undefined, error: () => undefined }), /too old/);
      } finally {
        await store.close();
        await dropPrefix(prefix);
      }
    });

    it('writes after Redis forgot its scripts (SCRIPT FLUSH): the write script is sent again and cached', async () => {
      const prefix = uniquePrefix('noscript');
      const store = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
      const admin = new Redis(REDIS_URL);
      try {
        const a = await store.create('core/configmaps/n/a', pod('n', 'a'));
        assert.deepEqual(await admin.script('EXISTS', WRITE_SHA), [1]);
        await admin.script('FLUSH');
        assert.deepEqual(await admin.script('EXISTS', WRITE_SHA), [0]);
        const b = await store.create('core/configmaps/n/b', pod('n', 'b'));
        assert.ok(rv(b) > rv(a));
        assert.deepEqual(await admin.script('EXISTS', WRITE_SHA), [1], 'EVAL cached it again');
        await assert.rejects(store.create('core/configmaps/n/b', pod('n', 'b')), /already exists/, "the script's own answers still arrive");
        assert.deepEqual(
          (await store.list('core/configmaps/')).items.map((o) => o.metadata.name),
          ['a', 'b'],
        );
      } finally {
        admin.disconnect();
        await store.close();
        await dropPrefix(prefix);
      }
    });

    it('a domain opening on first use while its first write lands keeps that write for a watch from before it', async () => {
      // Redis Cluster opens a type's domain on first use; here the type's first write lands
      // between the read of its newest revision (still 0) and the snapshot. The cache must
      // not start after that write, or a watch from an earlier revision would be gone.
      const prefix = uniquePrefix('firstwrite');
      const keys = typeKeys(prefix, 'core/configmaps/');
      const real = new Redis(REDIS_URL);
      let raced = 0;
      const racing = new Proxy(real, {
        get(target, p) {
          if (p === 'get') {
            return async (k: string) => {
              const v = await target.get(k);
              if (raced++ === 0)
                await runWrite(target, keys, 'core/configmaps/', 'c', 'core/configmaps/n/c', JSON.stringify(pod('n', 'c')), undefined, Date.now(), 43);
              return v;
            };
          }
          const v = Reflect.get(target, p, target) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        },
      });
      try {
        const state = await loadState(racing, keys, { historyWindowMs: 60_000 }, true);
        try {
          assert.equal(raced, 1, 'the write raced the open');
          assert.equal(state.rev, 44);
          const seen = new Collector();
          const w = state.watch('core/configmaps/', 43, seen);
          const evs = await seen.waitFor(1);
          w.stop();
          assert.deepEqual(
            evs.map((e) => `${e.type} ${e.key} ${e.rev}`),
            ['ADDED core/configmaps/n/c 44'],
          );
        } finally {
          state.close(new StoreError('unreachable', 'test over'));
        }
      } finally {
        real.disconnect();
        await dropPrefix(prefix);
      }
    });
  });
}
