// One form per object (backends/core/store/kept.ts): a state given a write's
// list bytes keeps the bytes, parses them when asked, and answers every read,
// list, replayed event and old revision with the object they stand for; a page
// of kept bytes carries them as its pieces and parses its items only when read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ParsedCache } from '../../backends/core/store/kept.js';
import { StoreState } from '../../backends/core/store/state.js';
import { storedCopy } from '../../backends/core/store/objects.js';
import { keptJsonBytes, listItemBytes, toJson } from '../../lib/api/json.js';
import type { KObject } from '../../lib/api/meta.js';
import type { StoreEvent } from '../../backends/core/store/types.js';
import { labelJsonCheck, matchesLabels, parseLabelSelector } from '../../lib/api/selectors.js';

const KEY = (i: number) => `core/configmaps/ns/cm-${String(i).padStart(5, '0')}`;

function configMap(i: number, value: string): KObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: 'ns', labels: {} }, data: { v: value } } as unknown as KObject;
}

/** Commits a put as the memory store does: the stored copy and its kept bytes. */
function put(state: StoreState, i: number, value: string): KObject {
  const rev = state.rev + 1;
  const stored = storedCopy(configMap(i, value), rev);
  state.commit(KEY(i), rev, stored, undefined, keptJsonBytes(stored, JSON.stringify(stored)));
  return stored;
}

/** The kept bytes of a value (a fresh object each call). */
const bytesOf = (v: unknown): Buffer => keptJsonBytes(Object.freeze({}), JSON.stringify(v));

describe('ParsedCache', () => {
  it('answers kept bytes with their frozen object, once parsed, and never an entry parsed from other bytes', () => {
    const cache = new ParsedCache();
    const a = cache.objectOf('k', bytesOf({ a: { b: 1 } }));
    assert.deepEqual(a, { a: { b: 1 } });
    assert.ok(Object.isFrozen(a) && Object.isFrozen((a as unknown as { a: object }).a));
    assert.equal(toJson(a), '{"a":{"b":1}}');
    // Same bytes (as a state keeps them): the same object.
    const bytes = bytesOf({ x: 'y' });
    assert.equal(cache.objectOf('k2', bytes), cache.objectOf('k2', bytes));
    // Other bytes under the same key, even of equal JSON: parsed again.
    assert.notEqual(cache.objectOf('k2', bytesOf({ x: 'y' })), cache.objectOf('k2', bytes));
    const b = cache.objectOf('k2', bytesOf({ x: 'z' }));
    assert.deepEqual(b, { x: 'z' });
    // An object is its own answer.
    const o = Object.freeze({ metadata: {} }) as unknown as KObject;
    assert.equal(cache.objectOf('k3', o), o);
  });

  it('keeps a recent key across a generation turn, bounded', () => {
    const cache = new ParsedCache();
    const hot = bytesOf({ hot: true });
    const first = cache.objectOf('hot', hot);
    for (let i = 0; i < 2048; i++) cache.objectOf(`k${i}`, bytesOf({ i }));
    // The older generation still has it: found, and moved to the newer.
    assert.equal(cache.objectOf('hot', hot), first);
    for (let i = 0; i < 5000; i++) cache.objectOf(`j${i}`, bytesOf({ i }));
    assert.notEqual(cache.objectOf('hot', hot), first);
    assert.deepEqual(cache.objectOf('hot', hot), { hot: true });
  });
});

describe('keptJsonBytes', () => {
  it('keeps goJson bytes and a comma for texts of every width, across the packing slabs', () => {
    const values = ['plain', 'é and ü', '日本語', '😀 emoji', 'a<b>&c\u2028\u2029', 'x'.repeat(3000), '\ud800 lone'];
    for (let i = 0; i < 400; i++) {
      const v = { i, s: values[i % values.length]!.repeat(1 + (i % 5)) };
      const json = JSON.stringify(v);
      const piece = keptJsonBytes(Object.freeze({}), json);
      assert.equal(piece.toString('utf8'), json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + ',');
    }
  });
});

describe('StoreState with kept bytes', () => {
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

  it('gives a page without a filter its kept bytes as pieces, its items parsed only when read', () => {
    const state = new StoreState({ historyWindowMs: 60_000 });
    const written = [put(state, 1, 'a<b>&c\u2028'), put(state, 2, 'two'), put(state, 3, 'three')];
    const page = state.list('core/configmaps/', { limit: 2 });
    assert.equal(page.pieces?.length, 2);
    // The pieces are the written objects' list bytes (Go-escaped), and not among what a copy or comparison sees.
    assert.deepEqual(page.pieces!.map(String), [listItemBytes(written[0]!), listItemBytes(written[1]!)].map(String));
    assert.ok(page.pieces![0]!.includes('a\\u003cb\\u003e\\u0026c\\u2028'));
    assert.deepEqual(Object.keys(page).sort(), ['continueAfter', 'items', 'remaining', 'rev']);
    assert.equal(page.continueAfter, KEY(2));
    assert.equal(page.remaining, 1);
    assert.deepEqual(page.items.map(toJson), written.slice(0, 2).map(toJson));
    assert.equal(page.items, page.items);
    // A parsed item's bytes are the kept ones (nothing encoded again).
    assert.equal(listItemBytes(state.list('core/configmaps/', { after: KEY(2) }).items[0]!), state.list('core/configmaps/', { after: KEY(2) }).pieces![0]);
    // With a filter: items only, as before.
    const filtered = state.list('core/configmaps/', { filter: (o) => o.metadata.name !== 'cm-2' });
    assert.equal(filtered.pieces, undefined);
    assert.deepEqual(filtered.items.map(toJson), [written[0]!, written[2]!].map(toJson));
    // Past the end, or empty: no pieces.
    assert.equal(state.list('core/configmaps/', { after: KEY(3) }).pieces, undefined);
    assert.deepEqual(state.list('core/configmaps/', { after: KEY(9) }), { rev: 3, items: [], remaining: 0 });
  });

  it('skips, by their kept bytes, the objects a label selector surely refuses, with the same pages as without', () => {
    const state = new StoreState({ historyWindowMs: 60_000 });
    for (let i = 0; i < 20; i++) {
      const rev = state.rev + 1;
      const obj = configMap(i, String(i));
      (obj.metadata as { labels: Record<string, string> }).labels = { app: i % 3 === 0 ? 'web' : 'db' };
      const stored = storedCopy(obj, rev);
      state.commit(KEY(i), rev, stored, undefined, keptJsonBytes(stored, JSON.stringify(stored)));
    }
    const sel = parseLabelSelector('app=web');
    const filter = (o: KObject) => matchesLabels(sel, o.metadata.labels);
    const seen: Buffer[] = [];
    const check = labelJsonCheck(sel)!;
    const mayMatchJson = (json: Buffer) => (seen.push(json), check(json));
    const names = (r: { items: KObject[] }) => r.items.map((o) => o.metadata.name);
    for (const limit of [undefined, 2, 3]) {
      const opts = limit === undefined ? {} : { limit };
      let withCheck = state.list('core/configmaps/', { ...opts, filter, mayMatchJson });
      let without = state.list('core/configmaps/', { ...opts, filter });
      assert.deepEqual(names(withCheck), names(without));
      assert.equal(withCheck.continueAfter, without.continueAfter);
      while (without.continueAfter !== undefined) {
        withCheck = state.list('core/configmaps/', { ...opts, filter, mayMatchJson, after: withCheck.continueAfter! });
        without = state.list('core/configmaps/', { ...opts, filter, after: without.continueAfter });
        assert.deepEqual(names(withCheck), names(without));
        assert.equal(withCheck.continueAfter, without.continueAfter);
      }
    }
    assert.deepEqual(names(state.list('core/configmaps/', { filter, mayMatchJson })), ['cm-0', 'cm-3', 'cm-6', 'cm-9', 'cm-12', 'cm-15', 'cm-18']);
    assert.ok(seen.length > 0 && seen.every((b) => Buffer.isBuffer(b)));
  });

  it('replays a recent event as the event its live watchers got (their encodings shared)', async () => {
    const state = new StoreState({ historyWindowMs: 60_000 });
    const live: StoreEvent[] = [];
    state.watch('core/configmaps/', 0, { event: (ev) => live.push(ev), error: () => assert.fail() });
    put(state, 1, 'one');
    put(state, 1, 'uno');
    const replay: StoreEvent[] = [];
    state.watch('core/configmaps/', 0, { event: (ev) => replay.push(ev), error: () => assert.fail() });
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(replay.length, 2);
    assert.ok(replay.every((ev, i) => ev === live[i]));
  });
});
