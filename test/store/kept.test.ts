// One form per object (backends/core/store/kept.ts): a state given a write's
// text keeps the text, parses it when asked, and answers every read, list,
// replayed event and old revision with the object the text stands for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParsedCache } from '../../backends/core/store/kept.js';
import { StoreState } from '../../backends/core/store/state.js';
import { storedCopy } from '../../backends/core/store/objects.js';
import { toJson } from '../../lib/api/json.js';
import type { KObject } from '../../lib/api/meta.js';
import type { StoreEvent } from '../../backends/core/store/types.js';

const KEY = (i: number) => `core/configmaps/ns/cm-${String(i).padStart(5, '0')}`;

function configMap(i: number, value: string): KObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'ns', labels: {} }, data: { v: value } } as unknown as KObject;
}

/** Commits a put as the memory store does: the stored copy and its text. */
function put(state: StoreState, i: number, value: string): KObject {
  const rev = state.rev + 1;
  const stored = storedCopy(configMap(i, value), rev);
  state.commit(KEY(i), rev, stored, undefined, JSON.stringify(stored));
  return stored;
}

describe('ParsedCache', () => {
  it('answers a text with its frozen object, once parsed, and never an entry parsed from another text', () => {
    const cache = new ParsedCache();
    const a = cache.objectOf('k', '{"a":{"b":1}}');
    assert.deepEqual(a, { a: { b: 1 } });
    assert.ok(Object.isFrozen(a) && Object.isFrozen((a as unknown as { a: object }).a));
    assert.equal(toJson(a), '{"a":{"b":1}}');
    // Same string (as a state keeps one): the same object.
    const text = JSON.stringify({ x: 'y' });
    assert.equal(cache.objectOf('k2', text), cache.objectOf('k2', text));
    // Another string under the same key: parsed again.
    const b = cache.objectOf('k2', JSON.stringify({ x: 'z' }));
    assert.deepEqual(b, { x: 'z' });
    // An object is its own answer.
    const o = Object.freeze({ metadata: {} }) as unknown as KObject;
    assert.equal(cache.objectOf('k3', o), o);
  });

  it('keeps a recent key across a generation turn, bounded', () => {
    const cache = new ParsedCache();
    const hot = JSON.stringify({ hot: true });
    const first = cache.objectOf('hot', hot);
    for (let i = 0; i < 2048; i++) cache.objectOf(`k${i}`, JSON.stringify({ i }));
    // The older generation still has it: found, and moved to the newer.
    assert.equal(cache.objectOf('hot', hot), first);
    for (let i = 0; i < 5000; i++) cache.objectOf(`j${i}`, JSON.stringify({ i }));
    assert.notEqual(cache.objectOf('hot', hot), first);
    assert.deepEqual(cache.objectOf('hot', hot), { hot: true });
  });
});

describe('StoreState with kept texts', () => {
  it('answers gets, lists, replayed events and old revisions with the objects the texts stand for', async () => {
    const state = new StoreState({ historyWindowMs: 60_000 });
    const live: StoreEvent[] = [];
    state.watch('core/configmaps/', 0, { event: (ev) => live.push(ev), error: () => assert.fail() });
    const a1 = put(state, 1, 'one');
    put(state, 2, 'two');
    // The write's own object answers the next get (no parse).
    assert.equal(state.get(KEY(1)), a1);
    const a2 = put(state, 1, 'uno');
    const atTwo = state.list('core/configmaps/', { rev: 2 });
    assert.deepEqual(
      atTwo.items.map((o) => (o as unknown as { data: { v: string } }).data.v),
      ['one', 'two'],
    );
    assert.equal(toJson(atTwo.items[0]!), toJson(a1));
    const deleted = state.commit(KEY(2), state.rev + 1, undefined);
    assert.equal(deleted.object.metadata.resourceVersion, '4');
    assert.equal((deleted.prev as unknown as { data: { v: string } }).data.v, 'two');

    const replay: StoreEvent[] = [];
    state.watch('core/configmaps/', 0, { event: (ev) => replay.push(ev), error: () => assert.fail() });
    await new Promise((r) => setTimeout(r, 10)); // watchers are sent their events from a queue
    assert.equal(live.length, 4);
    const shape = (evs: StoreEvent[]) => evs.map((ev) => [ev.type, ev.key, ev.rev, toJson(ev.object), ev.prev && toJson(ev.prev)]);
    assert.deepEqual(shape(replay), shape(live));
    assert.equal(replay[2]!.prev!.metadata.resourceVersion, '1');
    assert.ok(replay.every((ev) => Object.isFrozen(ev) && Object.isFrozen(ev.object)));

    const now = state.list('core/configmaps/');
    assert.deepEqual(now.items.map(toJson), [toJson(a2)]);
    assert.deepEqual(
      [...state.entries()].map(([k, o]) => [k, toJson(o)]),
      [[KEY(1), toJson(a2)]],
    );
    assert.equal(state.get(KEY(2)), undefined);
  });
});
