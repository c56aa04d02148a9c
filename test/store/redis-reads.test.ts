// Consistent reads of the Redis store across stores on one real Redis (each
// RedisStore has its own connections, watch cache and feed reader, as a
// separate process would): a write acknowledged by one is seen by a read on
// the other under each resourceVersion form; revision checks are shared;
// a broken feed never yields stale data for a "most recent" read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import { RedisStore } from '../../backends/core/store/redis.js';
import { StoreError } from '../../backends/core/store/types.js';
import { pod, rv, waitUntil } from './helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from './fixtures/redis-env.js';

const skip = await redisSkipReason();

async function pair(what: string): Promise<{ a: RedisStore; b: RedisStore; done: () => Promise<void> }> {
  const prefix = uniquePrefix(what);
  const a = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
  const b = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
  return {
    a,
    b,
    done: async () => {
      await a.close();
      await b.close();
      await dropPrefix(prefix);
    },
  };
}

/** The spec.n of an object (what each write changes). */
const nOf = (o: unknown): number => (o as { spec?: { n?: number } } | undefined)?.spec?.n ?? -1;

describe('redis store: consistent reads across stores', { skip }, () => {
  it('a write acknowledged by one store is seen by the other under each resourceVersion form', async () => {
    const { a, b, done } = await pair('rvtable');
    try {
      const key = 'core/pods/n/x';
      const made = await a.create(key, pod('n', 'x', { spec: { n: 0 } }));
      // Fill b's cache up to the create, so each row below starts from a known cache.
      await b.get(key);
      const cases: { form: string; read: (written: number) => Promise<{ n: number; rev: number } | 'any'> }[] = [
        {
          form: 'GET resourceVersion=""',
          read: async () => {
            const o = await b.get(key);
            return { n: nOf(o), rev: rv(o) };
          },
        },
        {
          form: 'LIST resourceVersion=""',
          read: async () => {
            const l = await b.list('core/pods/n/');
            return { n: nOf(l.items[0]), rev: l.rev };
          },
        },
        {
          form: 'GET resourceVersion=<written> (NotOlderThan)',
          read: async (w) => {
            const o = await b.get(key, w);
            return { n: nOf(o), rev: rv(o) };
          },
        },
        {
          form: 'LIST resourceVersion=<written> (NotOlderThan)',
          read: async (w) => {
            const l = await b.list('core/pods/n/', { minRev: w });
            return { n: nOf(l.items[0]), rev: l.rev };
          },
        },
        {
          form: 'LIST resourceVersion=<written>, resourceVersionMatch=Exact',
          read: async (w) => {
            const l = await b.list('core/pods/n/', { rev: w });
            return { n: nOf(l.items[0]), rev: l.rev };
          },
        },
        // "0": whatever b's cache holds, at once; it need not have the write yet.
        {
          form: 'GET resourceVersion="0"',
          read: async () => {
            await b.get(key, 0);
            return 'any';
          },
        },
        {
          form: 'LIST resourceVersion="0"',
          read: async () => {
            await b.list('core/pods/n/', { minRev: 0 });
            return 'any';
          },
        },
      ];
      let cur = made;
      for (const [i, c] of cases.entries()) {
        cur = await a.update(key, pod('n', 'x', { spec: { n: i + 1 } }), rv(cur));
        const checks = b.readStats().checks;
        const got = await c.read(rv(cur));
        if (got === 'any') {
          assert.equal(b.readStats().checks, checks, `${c.form}: answered from the cache without a revision check`);
          continue;
        }
        assert.equal(got.n, i + 1, `${c.form}: sees the write acknowledged by the other store`);
        assert.ok(got.rev >= rv(cur), `${c.form}: read at ${got.rev}, the write was at ${rv(cur)}`);
      }
      // Exact on an older revision answers the state then, not the newest.
      const older = await b.list('core/pods/n/', { rev: rv(cur) - 1 });
      assert.equal(older.rev, rv(cur) - 1);
      assert.equal(nOf(older.items[0]), cases.length - 1);
    } finally {
      await done();
    }
  });

  it("continue pages stay at the first page's revision while the other store writes", async () => {
    const { a, b, done } = await pair('continue');
    try {
      for (let i = 0; i < 6; i++) await a.create(`core/pods/n/p${i}`, pod('n', `p${i}`));
      const first = await b.list('core/pods/n/', { limit: 3 });
      assert.deepEqual(
        first.items.map((o) => o.metadata.name),
        ['p0', 'p1', 'p2'],
      );
      await a.delete('core/pods/n/p4');
      await a.create('core/pods/n/p3a', pod('n', 'p3a'));
      const next = await b.list('core/pods/n/', { limit: 3, rev: first.rev, after: first.continueAfter! });
      assert.equal(next.rev, first.rev);
      assert.deepEqual(
        next.items.map((o) => o.metadata.name),
        ['p3', 'p4', 'p5'],
        'the snapshot of the first page, not the newer state',
      );
      const now = await b.list('core/pods/n/');
      assert.deepEqual(
        now.items.map((o) => o.metadata.name),
        ['p0', 'p1', 'p2', 'p3', 'p3a', 'p5'],
      );
    } finally {
      await done();
    }
  });

  it('never answers a read with state older than a write acknowledged before it began, while other reads keep checks in flight', async () => {
    const { a, b, done } = await pair('linear');
    try {
      // b's replies come late, as over a slow network: a revision check answered by Redis
      // before a's write may reach b after a's acknowledgement, and b's feed lags behind.
      const slow = (client: Redis, method: 'get' | 'xread', ms: number): void => {
        const orig = (client[method] as (...args: unknown[]) => Promise<unknown>).bind(client);
        Object.defineProperty(client, method, {
          value: async (...args: unknown[]) => {
            const r = await orig(...args);
            await new Promise((res) => setTimeout(res, ms));
            return r;
          },
        });
      };
      const inner = b as unknown as { client: Redis; single: { blocking: Redis } };
      slow(inner.client, 'get', 5);
      slow(inner.single.blocking, 'xread', 15);
      const key = 'core/configmaps/n/c';
      let cur = await a.create(key, pod('n', 'c', { spec: { n: 0 } }));
      let stop = false;
      // A steady stream of reads on b, so a revision check is almost always in flight when a write is acknowledged.
      const background = (async () => {
        let n = 0;
        while (!stop) {
          await Promise.all([b.get(key), b.list('core/configmaps/n/')]);
          n++;
        }
        return n;
      })();
      for (let i = 1; i <= 60; i++) {
        // Two writes back to back: b's feed read woken by the first may still be on its way
        // when the reads below begin, carrying the first write only.
        cur = await a.update(key, pod('n', 'c', { spec: { n: 2 * i - 1 } }), rv(cur));
        cur = await a.update(key, pod('n', 'c', { spec: { n: 2 * i } }), rv(cur));
        const [got, page] = await Promise.all([b.get(key), b.list('core/configmaps/n/')]);
        assert.equal(nOf(got), 2 * i, `GET after write ${2 * i}`);
        assert.equal(nOf(page.items[0]), 2 * i, `LIST after write ${2 * i}`);
        // Let a background check start, so the next write finds one in flight.
        await new Promise((res) => setTimeout(res, 1 + (i % 4)));
      }
      stop = true;
      assert.ok((await background) > 0);
    } finally {
      await done();
    }
  });

  it('shares revision checks: many concurrent reads send few checks', async () => {
    const { a, b, done } = await pair('coalesce');
    try {
      await a.create('core/pods/n/x', pod('n', 'x'));
      await b.get('core/pods/n/x');
      const before = b.readStats();
      // 200 reads arriving in one turn: the first starts a check, the rest arrived after it and share the next.
      const got = await Promise.all(Array.from({ length: 200 }, (_, i) => (i % 2 ? b.get('core/pods/n/x') : b.list('core/pods/'))));
      assert.equal(got.length, 200);
      const after = b.readStats();
      assert.ok(after.checks - before.checks + (after.byFeed - before.byFeed) > 0);
      assert.ok(after.checks - before.checks <= 2, `200 reads sent ${after.checks - before.checks} revision checks`);
    } finally {
      await done();
    }
  });

  it('counts what Redis saw: the GETs of the revision key are the checks the store reports', async () => {
    const { a, b, done } = await pair('monitor');
    // MONITOR spoken directly on a socket: every command Redis runs, one line each.
    const { hostname: host, port } = new URL(REDIS_URL);
    const mon = connect(Number(port || 6379), host || '127.0.0.1');
    try {
      await a.create('core/pods/n/x', pod('n', 'x'));
      await b.get('core/pods/n/x');
      const revKey = (b as unknown as { single: { keys: { rev: string } } }).single.keys.rev;
      let text = '';
      mon.setEncoding('utf8');
      mon.on('data', (chunk: string) => {
        text += chunk;
      });
      mon.write('MONITOR\r\n');
      await waitUntil(() => text.startsWith('+OK'), 'MONITOR to start');
      const seen = (): number => text.split('\n').filter((l) => l.includes(`"get" "${revKey}"`) || l.includes(`"GET" "${revKey}"`)).length;
      const before = b.readStats().checks;
      for (let round = 0; round < 5; round++) await Promise.all(Array.from({ length: 100 }, () => b.get('core/pods/n/x')));
      const checks = b.readStats().checks - before;
      // MONITOR lines arrive on their own connection: wait until Redis's count reaches the store's.
      await waitUntil(() => seen() >= checks, `${checks} monitored GETs of ${revKey}`);
      assert.ok(checks <= 10, `500 reads in 5 bursts sent ${checks} checks`);
      assert.equal(seen(), checks, `redis saw ${seen()} GETs of ${revKey}, the store counted ${checks}`);
    } finally {
      mon.destroy();
      await done();
    }
  });

  it('a broken feed never yields stale data for resourceVersion="": reads fail with unreachable until the feed is back, then see every write', async () => {
    const { a, b, done } = await pair('brokenfeed');
    const admin = new Redis(REDIS_URL);
    try {
      const key = 'core/pods/n/x';
      let cur = await a.create(key, pod('n', 'x', { spec: { n: 0 } }));
      await b.get(key);
      const blocking = (b as unknown as { single: { blocking: Redis } }).single.blocking;
      const port = (blocking as unknown as { stream: { localPort: number } }).stream.localPort;
      let failures = 0;
      let fresh = 0;
      for (let i = 1; i <= 40; i++) {
        if (i === 1 || i === 20) await admin.client('KILL', 'ADDR', `127.0.0.1:${port}`).catch(() => undefined);
        cur = await a.update(key, pod('n', 'x', { spec: { n: i } }), rv(cur));
        try {
          const got = await b.get(key);
          assert.equal(nOf(got), i, `write ${i}: a "most recent" read answered older state`);
          fresh++;
        } catch (err) {
          assert.ok(err instanceof StoreError && err.code === 'unreachable', `write ${i}: ${String(err)}`);
          failures++;
        }
      }
      assert.equal(failures + fresh, 40);
      // Back: every later read sees the newest write.
      let ok = false;
      for (let tries = 0; tries < 200 && !ok; tries++) {
        try {
          ok = nOf(await b.get(key)) === 40;
        } catch {
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      assert.ok(ok, 'b serves again once its feed is back');
    } finally {
      admin.disconnect();
      await done();
    }
  });

  it('fails reads waiting on the cache at once when the feed breaks, as unreachable (503 with Retry-After over HTTP)', async () => {
    const { a, b, done } = await pair('downwait');
    const admin = new Redis(REDIS_URL);
    try {
      const key = 'core/pods/n/x';
      await a.create(key, pod('n', 'x'));
      await b.get(key);
      const state = b.state;
      // A read for a revision the cache has not reached waits on the feed …
      const waiting = b.get(key, state.rev + 1000).then(
        () => 'answered',
        (err: unknown) => err,
      );
      const blocking = (b as unknown as { single: { blocking: Redis } }).single.blocking;
      const port = (blocking as unknown as { stream: { localPort: number } }).stream.localPort;
      await admin.client('KILL', 'ADDR', `127.0.0.1:${port}`);
      // … and ends with unreachable when the feed breaks, not at its own timeout.
      const err = await waiting;
      assert.ok(err instanceof StoreError, String(err));
      assert.equal(err.code, 'unreachable');
    } finally {
      admin.disconnect();
      await done();
    }
  });
});
