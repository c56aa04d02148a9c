// The Reflector over a real MemoryStore: list, then follow; a watch that ends
// (as on 410 Gone) is followed by a re-list that catches up with what changed
// meanwhile; a failing first list rejects start, or is retried when asked.
// The ObjectSource is a thin adapter over the store with two fault switches:
// end every open watch, and fail the next N lists.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { Reflector, type ReflectedType } from '../../lib/api/reflector.js';
import { MemoryStore } from '../../backends/core/store/memory.js';
import { StoreError, type Watcher } from '../../backends/core/store/types.js';
import { pod, waitUntil } from '../store/helpers.js';

function source(store: MemoryStore) {
  const open = new Set<{ w: Watcher; onError: (e: Error) => void }>();
  let failLists = 0;
  const src: ObjectSource = {
    get: (_g, _r, ns, name) => store.get(`core/pods/${ns}/${name}`),
    lookup: (_g, _r, ns, name) => store.get(`core/pods/${ns}/${name}`),
    async list() {
      if (failLists > 0) {
        failLists--;
        throw new Error('source unavailable');
      }
      const r = await store.list('core/pods/');
      return { items: r.items, resourceVersion: String(r.rev) };
    },
    watch(_g, _r, rv, onEvent, onError) {
      const entry = { w: undefined as unknown as Watcher, onError };
      entry.w = store.watch('core/pods/', Number(rv), { event: (ev) => onEvent({ type: ev.type, object: ev.object }), error: onError });
      open.add(entry);
      return {
        stop: () => {
          entry.w.stop();
          open.delete(entry);
        },
      };
    },
  };
  return {
    src,
    breakWatches: () => {
      for (const e of [...open]) {
        e.w.stop();
        open.delete(e);
        e.onError(new StoreError('gone', 'too old resource version'));
      }
    },
    failNextLists: (n: number) => {
      failLists = n;
    },
  };
}

/** The reflector's retry timers are unref'd (a server's sockets keep it alive); here nothing else would. */
async function alive<T>(p: Promise<T>): Promise<T> {
  const t = setInterval(() => undefined, 1000);
  try {
    return await p;
  } finally {
    clearInterval(t);
  }
}

function mirror(): { type: ReflectedType; names: Map<string, KObject>; resets: number } {
  const m = { names: new Map<string, KObject>(), resets: 0, type: undefined as unknown as ReflectedType };
  m.type = {
    group: '',
    resource: 'pods',
    reset: (items) => {
      m.resets++;
      m.names = new Map(items.map((o) => [o.metadata.name!, o]));
    },
    set: (o) => {
      m.names.set(o.metadata.name!, o);
    },
    remove: (o) => {
      m.names.delete(o.metadata.name!);
    },
  };
  return m;
}

describe('Reflector', () => {
  it('lists, follows changes, and re-lists after a broken watch', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    await store.create('core/pods/a/p1', pod('a', 'p1'));
    const s = source(store);
    const m = mirror();
    const logs: string[] = [];
    const r = new Reflector(s.src, [m.type], { who: 'test', log: (l) => logs.push(l), retryMs: 5 });
    await r.start();
    assert.deepEqual([...m.names.keys()], ['p1']);
    await store.create('core/pods/a/p2', pod('a', 'p2'));
    await store.delete('core/pods/a/p1');
    await waitUntil(() => m.names.has('p2') && !m.names.has('p1'), 'the watch events');

    s.breakWatches();
    // Changes while no watch is open arrive through the re-list.
    await store.create('core/pods/a/p3', pod('a', 'p3'));
    await waitUntil(() => m.resets === 2 && m.names.has('p3'), 'the re-list');
    assert.deepEqual([...m.names.keys()].sort(), ['p2', 'p3']);
    assert.ok(
      logs.some((l) => l.startsWith('test: watch of pods ended (too old resource version)')),
      logs.join('\n'),
    );
    // Followed again after the re-list.
    await store.create('core/pods/a/p4', pod('a', 'p4'));
    await waitUntil(() => m.names.has('p4'), 'events after the re-list');
    r.stop();
  });

  it('retries failed re-lists until one succeeds', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    const s = source(store);
    const m = mirror();
    const logs: string[] = [];
    const r = new Reflector(s.src, [m.type], { who: 'test', log: (l) => logs.push(l), retryMs: 2, maxRetryMs: 8 });
    await r.start();
    s.failNextLists(3);
    s.breakWatches();
    await store.create('core/pods/a/late', pod('a', 'late'));
    await waitUntil(() => m.names.has('late'), 'the re-list after three failures');
    assert.equal(logs.filter((l) => l.includes('listing pods failed, retrying: source unavailable')).length, 3);
    r.stop();
  });

  it('rejects start when the first list fails, unless asked to retry it', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    await store.create('core/pods/a/p1', pod('a', 'p1'));
    const s = source(store);
    s.failNextLists(1);
    await assert.rejects(new Reflector(s.src, [mirror().type], { who: 'test', log: () => undefined }).start(), /source unavailable/);

    s.failNextLists(2);
    const m = mirror();
    const r = new Reflector(s.src, [m.type], { who: 'test', log: () => undefined, retryMs: 2, retryFirstList: true });
    await alive(r.start());
    assert.deepEqual([...m.names.keys()], ['p1']);
    r.stop();
  });

  it('stops following on stop()', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    const s = source(store);
    const m = mirror();
    const r = new Reflector(s.src, [m.type], { who: 'test', log: () => undefined, retryMs: 2 });
    await r.start();
    // A broken watch leaves a re-list pending: stop() must cancel it too.
    s.breakWatches();
    r.stop();
    await store.create('core/pods/a/after', pod('a', 'after'));
    await new Promise((res) => setTimeout(res, 20));
    assert.equal(m.names.has('after'), false);
    assert.equal(m.resets, 1);
  });
});
