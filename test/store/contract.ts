// The behavioural suite every Store must pass (memory, file, and later redis).
// It depends on the Store interface only.
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject } from '../../lib/api/meta.js';
import type { Store } from '../../backends/core/store/types.js';
import { StoreError, guaranteedUpdate } from '../../backends/core/store/types.js';
import { Collector, fakeClock, pod, rv } from './helpers.js';
import { MAX_STORED_BYTES } from '../../backends/core/store/preconditions.js';

export interface ContractStoreOptions {
  historyWindowMs: number;
  clock: () => number;
  /** How long get(key, minRev) waits for a future revision; the suite keeps it small. */
  tooLargeWaitMs: number;
}

export type MakeStore = (opts: ContractStoreOptions) => Promise<{ store: Store; cleanup(): Promise<void> }>;

const WINDOW = 4000;

function code(c: string): (err: unknown) => boolean {
  return (err) => {
    assert.ok(err instanceof StoreError, `expected StoreError, got ${String(err)}`);
    assert.equal(err.code, c, err.message);
    return true;
  };
}

const names = (items: readonly KObject[]): string[] => items.map((o) => o.metadata.name ?? '');

export function storeContract(name: string, makeStore: MakeStore): void {
  describe(`${name} store contract`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    let clock: ReturnType<typeof fakeClock>;

    beforeEach(async () => {
      clock = fakeClock();
      ({ store, cleanup } = await makeStore({ historyWindowMs: WINDOW, clock: clock.now, tooLargeWaitMs: 200 }));
    });
    afterEach(async () => {
      await store.close();
      await cleanup();
    });

    async function seed(ns: string, count: number): Promise<KObject[]> {
      const out: KObject[] = [];
      for (let i = 0; i < count; i++) out.push(await store.create(`core/pods/${ns}/p${String(i).padStart(2, '0')}`, pod(ns, `p${String(i).padStart(2, '0')}`)));
      return out;
    }

    describe('writes', () => {
      it('creates an object and refuses a second create of the same key', async () => {
        const created = await store.create('core/pods/a/x', pod('a', 'x'));
        assert.equal(created.metadata.name, 'x');
        await assert.rejects(store.create('core/pods/a/x', pod('a', 'x')), code('exists'));
      });

      it('gets the stored object and undefined for a missing key', async () => {
        const created = await store.create('core/pods/a/x', pod('a', 'x', { spec: { n: 7 } }));
        assert.deepEqual(await store.get('core/pods/a/x'), created);
        assert.equal(await store.get('core/pods/a/missing'), undefined);
      });

      it('stamps objects with their revision and freezes them deeply', async () => {
        const input = pod('a', 'x');
        const created = await store.create('core/pods/a/x', input);
        assert.equal(input.metadata.resourceVersion, undefined, 'the caller object is not changed');
        assert.equal(created.metadata.resourceVersion, String(await store.currentRev()));
        assert.ok(Object.isFrozen(created) && Object.isFrozen(created.metadata) && Object.isFrozen(created.spec));
        assert.throws(() => {
          (created.spec as { n: number }).n = 5;
        }, TypeError);
        const read = await store.get('core/pods/a/x');
        assert.ok(read && Object.isFrozen(read.metadata));
        assert.equal((read.spec as { n: number }).n, 0);
      });

      it('gives every write a strictly greater revision', async () => {
        const start = await store.currentRev();
        const a = await store.create('core/pods/a/x', pod('a', 'x'));
        const b = await store.update('core/pods/a/x', pod('a', 'x', { spec: { n: 1 } }));
        const c = await store.create('core/secrets/a/s', pod('a', 's'));
        const d = await store.delete('core/pods/a/x');
        assert.ok(start < rv(a) && rv(a) < rv(b) && rv(b) < rv(c) && rv(c) < rv(d));
        assert.equal(await store.currentRev(), rv(d));
      });

      it('updates without a precondition and rejects a missing key', async () => {
        await store.create('core/pods/a/x', pod('a', 'x'));
        const updated = await store.update('core/pods/a/x', pod('a', 'x', { spec: { n: 2 } }));
        assert.deepEqual(updated.spec, { n: 2 });
        await assert.rejects(store.update('core/pods/a/y', pod('a', 'y')), code('not-found'));
      });

      it('updates with the expected revision and conflicts with a stale one', async () => {
        const created = await store.create('core/pods/a/x', pod('a', 'x'));
        const updated = await store.update('core/pods/a/x', pod('a', 'x', { spec: { n: 1 } }), rv(created));
        await assert.rejects(store.update('core/pods/a/x', pod('a', 'x', { spec: { n: 9 } }), rv(created)), code('conflict'));
        assert.deepEqual((await store.get('core/pods/a/x'))?.spec, updated.spec);
      });

      it('deletes with a precondition and returns the last state at the deletion revision', async () => {
        const created = await store.create('core/pods/a/x', pod('a', 'x', { spec: { n: 3 } }));
        await assert.rejects(store.delete('core/pods/a/x', rv(created) + 100), code('conflict'));
        const deleted = await store.delete('core/pods/a/x', rv(created));
        assert.deepEqual(deleted.spec, { n: 3 });
        assert.equal(rv(deleted), await store.currentRev());
        assert.ok(rv(deleted) > rv(created));
        assert.equal(await store.get('core/pods/a/x'), undefined);
        await assert.rejects(store.delete('core/pods/a/x'), code('not-found'));
      });

      it("refuses an object whose stored form is over etcd's 1.5 MiB request limit, writing nothing", async () => {
        // A kind with no protobuf form (as a custom resource) is measured by its JSON.
        const widget = (name: string, spec: object): KObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { namespace: 'a', name }, spec });
        const w = new Collector();
        const watcher = store.watch('core/pods/', await store.currentRev(), w);
        const under = await store.create('core/pods/a/x', widget('x', { s: 'x'.repeat(MAX_STORED_BYTES - 200) }));
        const rev = await store.currentRev();
        // Multi-byte text counts by its UTF-8 bytes: 600 000 three-byte characters are 1.8 MB in under 0.6 M units.
        for (const big of ['x'.repeat(MAX_STORED_BYTES), '€'.repeat(600_000)]) {
          await assert.rejects(store.create('core/pods/a/y', widget('y', { s: big })), (err) => {
            code('entity-too-large')(err);
            return (err as Error).message === 'etcdserver: request is too large';
          });
          await assert.rejects(store.update('core/pods/a/x', widget('x', { s: big }), rv(under)), code('entity-too-large'));
        }
        assert.equal(await store.currentRev(), rev, 'no revision taken');
        assert.equal(await store.get('core/pods/a/y'), undefined);
        assert.deepEqual(await store.get('core/pods/a/x'), under);
        const after = await store.update('core/pods/a/x', widget('x', { n: 1 }), rv(under));
        assert.equal(rv(after), rev + 1, 'the next write takes the next revision');
        await w.waitFor(2);
        assert.deepEqual(
          w.events.map((e) => [e.type, e.rev]),
          [
            ['ADDED', rv(under)],
            ['MODIFIED', rev + 1],
          ],
        );
        watcher.stop();
      });

      it('lets exactly one of many concurrent compare-and-swap writers win', async () => {
        const created = await store.create('core/pods/a/x', pod('a', 'x'));
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => store.update('core/pods/a/x', pod('a', 'x', { spec: { n: i } }), rv(created))),
        );
        const won = results.filter((r) => r.status === 'fulfilled');
        assert.equal(won.length, 1);
        for (const r of results) if (r.status === 'rejected') code('conflict')(r.reason);
      });

      it('applies every concurrent guaranteedUpdate exactly once', async () => {
        await store.create('core/configmaps/a/c', { metadata: { name: 'c' }, data: { n: 0 } });
        const bump = (cur: KObject): KObject => ({ ...cur, data: { n: (cur.data as { n: number }).n + 1 } });
        await Promise.all(Array.from({ length: 8 }, () => guaranteedUpdate(store, 'core/configmaps/a/c', bump)));
        assert.deepEqual((await store.get('core/configmaps/a/c'))?.data, { n: 8 });
        assert.equal(await guaranteedUpdate(store, 'core/configmaps/a/none', bump), undefined);
        const same = await store.get('core/configmaps/a/c');
        assert.equal(await guaranteedUpdate(store, 'core/configmaps/a/c', () => null), same);
      });
    });

    describe('lists', () => {
      it('lists one namespace or all namespaces of a type in key order', async () => {
        await seed('b', 2);
        await seed('a', 3);
        await store.create('core/secrets/a/s', pod('a', 's'));
        const all = await store.list('core/pods/');
        assert.deepEqual(
          all.items.map((o) => o.metadata.namespace + '/' + o.metadata.name),
          ['a/p00', 'a/p01', 'a/p02', 'b/p00', 'b/p01'],
        );
        assert.equal(all.rev, await store.currentRev());
        assert.equal(all.remaining, 0);
        assert.equal(all.continueAfter, undefined);
        assert.deepEqual(names((await store.list('core/pods/b/')).items), ['p00', 'p01']);
        assert.deepEqual((await store.list('core/pods/c/')).items, []);
      });

      it('pages with limit and after, reporting remaining and continueAfter', async () => {
        await seed('a', 5);
        await seed('b', 1);
        const p1 = await store.list('core/pods/a/', { limit: 2 });
        assert.deepEqual(names(p1.items), ['p00', 'p01']);
        assert.equal(p1.remaining, 3);
        assert.equal(p1.continueAfter, 'core/pods/a/p01');
        const p2 = await store.list('core/pods/a/', { limit: 2, after: p1.continueAfter!, rev: p1.rev });
        assert.deepEqual(names(p2.items), ['p02', 'p03']);
        const p3 = await store.list('core/pods/a/', { limit: 2, after: p2.continueAfter!, rev: p1.rev });
        assert.deepEqual(names(p3.items), ['p04']);
        assert.equal(p3.continueAfter, undefined);
        assert.equal(p3.remaining, 0);
        const exact = await store.list('core/pods/a/', { limit: 5 });
        assert.equal(exact.continueAfter, undefined, 'no continue when nothing follows');
      });

      it('filters items, counting only matches toward the limit', async () => {
        await seed('a', 6);
        const even = (o: KObject): boolean => Number(o.metadata.name!.slice(1)) % 2 === 0;
        const p1 = await store.list('core/pods/', { filter: even, limit: 2 });
        assert.deepEqual(names(p1.items), ['p00', 'p02']);
        assert.equal(p1.continueAfter, 'core/pods/a/p02');
        assert.equal(p1.remaining, undefined);
        const p2 = await store.list('core/pods/', { filter: even, limit: 2, after: p1.continueAfter!, rev: p1.rev });
        assert.deepEqual(names(p2.items), ['p04']);
        assert.equal(p2.continueAfter, undefined, 'p05 follows but does not match');
      });

      it('pages a consistent snapshot at an older revision while writes happen between pages', async () => {
        const seeded = await seed('a', 6);
        const p1 = await store.list('core/pods/', { limit: 2 });
        await store.delete('core/pods/a/p02');
        await store.update('core/pods/a/p03', pod('a', 'p03', { spec: { n: 99 } }));
        await store.create('core/pods/a/p025', pod('a', 'p025'));
        await store.create('core/pods/b/p00', pod('b', 'p00'));
        const p2 = await store.list('core/pods/', { limit: 2, after: p1.continueAfter!, rev: p1.rev });
        assert.equal(p2.rev, p1.rev);
        assert.deepEqual(names(p2.items), ['p02', 'p03']);
        assert.deepEqual(p2.items[1], seeded[3], 'the old state of the modified object');
        assert.equal(p2.remaining, 2);
        const p3 = await store.list('core/pods/', { limit: 10, after: p2.continueAfter!, rev: p1.rev });
        assert.deepEqual(names(p3.items), ['p04', 'p05']);
        const now = await store.list('core/pods/');
        assert.deepEqual(names(now.items), ['p00', 'p01', 'p025', 'p03', 'p04', 'p05', 'p00']);
      });

      it('reads an older revision of one namespace that other types changed since', async () => {
        await seed('a', 2);
        const rev = await store.currentRev();
        await store.create('core/secrets/a/s', pod('a', 's'));
        const old = await store.list('core/pods/a/', { rev });
        assert.deepEqual(names(old.items), ['p00', 'p01']);
        assert.equal(old.rev, rev);
      });

      it('refuses a list at a revision newer than the store', async () => {
        await seed('a', 1);
        await assert.rejects(store.list('core/pods/', { rev: (await store.currentRev()) + 10 }), code('too-large'));
      });
    });

    describe('watches', () => {
      it('replays history after the revision, then delivers live events in order', async () => {
        const [p0] = await seed('a', 2);
        const w = new Collector();
        const watcher = store.watch('core/pods/', rv(p0), w);
        await w.waitFor(1);
        await store.update('core/pods/a/p00', pod('a', 'p00', { spec: { n: 1 } }));
        await store.delete('core/pods/a/p01');
        const evs = await w.waitFor(3);
        watcher.stop();
        assert.deepEqual(
          evs.map((e) => [e.type, e.key]),
          [
            ['ADDED', 'core/pods/a/p01'],
            ['MODIFIED', 'core/pods/a/p00'],
            ['DELETED', 'core/pods/a/p01'],
          ],
        );
        for (let i = 1; i < evs.length; i++) assert.ok(evs[i]!.rev > evs[i - 1]!.rev);
        for (const e of evs) assert.equal(rv(e.object), e.rev);
        assert.deepEqual(evs[1]!.prev, p0);
        assert.equal(evs[2]!.object.metadata.name, 'p01', 'DELETED carries the last state');
        assert.equal(w.errors.length, 0);
      });

      it('delivers only the events under the watched prefix', async () => {
        const w = new Collector();
        const watcher = store.watch('core/pods/b/', await store.currentRev(), w);
        await store.create('core/pods/a/x', pod('a', 'x'));
        await store.create('core/pods/b/y', pod('b', 'y'));
        await store.create('core/secrets/b/z', pod('b', 'z'));
        await store.create('core/pods/bb/q', pod('bb', 'q'));
        await store.create('core/pods/b/y2', pod('b', 'y2'));
        const evs = await w.waitFor(2);
        await store.create('core/pods/b/y3', pod('b', 'y3'));
        await w.waitFor(3);
        watcher.stop();
        await store.create('core/pods/b/y4', pod('b', 'y4'));
        assert.deepEqual(
          evs.map((e) => e.key),
          ['core/pods/b/y', 'core/pods/b/y2', 'core/pods/b/y3'],
        );
      });

      it('watches one exact key', async () => {
        const w = new Collector();
        const watcher = store.watch('core/pods/a/x', 0, w);
        await store.create('core/pods/a/x', pod('a', 'x'));
        await store.create('core/pods/a/y', pod('a', 'y'));
        await store.delete('core/pods/a/x');
        const evs = await w.waitFor(2);
        watcher.stop();
        assert.deepEqual(
          evs.map((e) => e.type + ' ' + e.key),
          ['ADDED core/pods/a/x', 'DELETED core/pods/a/x'],
        );
      });

      it('accepts a watch from a future revision and sends only later events', async () => {
        await seed('a', 1);
        const w = new Collector();
        const from = (await store.currentRev()) + 1;
        const watcher = store.watch('core/pods/', from, w);
        await store.create('core/pods/a/skipped', pod('a', 'skipped'));
        await store.create('core/pods/a/seen', pod('a', 'seen'));
        const evs = await w.waitFor(1);
        watcher.stop();
        assert.deepEqual(
          evs.map((e) => e.key),
          ['core/pods/a/seen'],
        );
      });

      it('answers gone for a watch or list older than the history window', async () => {
        await seed('a', 3);
        const old = await store.currentRev();
        clock.advance(WINDOW + 1000);
        await store.create('core/pods/a/new', pod('a', 'new'));
        const fresh = await store.currentRev();
        assert.throws(() => store.watch('core/pods/', old - 1, new Collector()), code('gone'));
        await assert.rejects(store.list('core/pods/', { rev: old - 1 }), code('gone'));
        const w = new Collector();
        const watcher = store.watch('core/pods/', fresh - 1, w);
        assert.deepEqual(
          (await w.waitFor(1)).map((e) => e.key),
          ['core/pods/a/new'],
        );
        watcher.stop();
      });

      it('keeps history inside the window', async () => {
        await seed('a', 2);
        clock.advance(WINDOW - 1000);
        const w = new Collector();
        const watcher = store.watch('core/pods/', 0, w);
        assert.equal((await w.waitFor(2)).length, 2);
        watcher.stop();
      });
    });

    describe('revisions', () => {
      it('waits briefly for a future revision on get, then answers too-large', async () => {
        await seed('a', 1);
        const rev = await store.currentRev();
        await assert.rejects(store.get('core/pods/a/p00', rev + 5), code('too-large'));
        await assert.rejects(store.waitForRev(rev + 5, 50), code('too-large'));
        const later = store.get('core/pods/a/p01', rev + 1);
        await store.create('core/pods/a/p01', pod('a', 'p01'));
        assert.equal((await later)?.metadata.name, 'p01');
        await store.waitForRev(rev, 10);
      });

      it('lists with minRev from its watch cache: at least that revision, waiting briefly for a future one, then too-large', async () => {
        await seed('a', 2);
        const rev = await store.currentRev();
        const now = await store.list('core/pods/', { minRev: rev });
        assert.ok(now.rev >= rev);
        assert.deepEqual(names(now.items), ['p00', 'p01']);
        await assert.rejects(store.list('core/pods/', { minRev: rev + 5 }), code('too-large'));
        const later = store.list('core/pods/', { minRev: rev + 1 });
        await store.create('core/pods/a/p02', pod('a', 'p02'));
        assert.deepEqual(names((await later).items), ['p00', 'p01', 'p02']);
        assert.ok((await store.list('core/pods/', { minRev: 0 })).rev >= rev + 1);
      });

      it('passes its health check while open', async () => {
        await store.check();
      });
    });
  });
}
