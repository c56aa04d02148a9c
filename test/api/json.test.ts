import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  cloneJson,
  deepFreezeJson,
  freezeStored,
  frozenJsonCopy,
  jsonAnswerText,
  jsonEqual,
  listItemBytes,
  membersEqual,
  rememberJson,
  toJson,
} from '../../lib/api/json.js';
import { isDeepFrozen } from '../helpers/frozen.js';

test('frozenJsonCopy holds what a JSON round trip would', () => {
  class Point {
    constructor(readonly x: number) {}
  }
  const cases: unknown[] = [
    { a: 1, b: 'x', c: true, d: null, e: [1, 'two', null, { f: [] }] },
    { dropped: undefined, fn: () => 1, sym: Symbol('s'), kept: 0 },
    [undefined, () => 1, Symbol('s'), NaN, Infinity, -Infinity, -0],
    { when: new Date(0), nested: { p: new Point(3) } },
    { withToJSON: { toJSON: () => 'replaced' } },
    { ['__proto__']: { polluted: true }, ok: 1 },
    'text',
    42,
    null,
  ];
  // Keys named __proto__ must stay own data members, as JSON.parse makes them.
  cases.push(JSON.parse('{"__proto__": {"x": 1}, "y": [1, {"__proto__": 2}]}'));
  for (const c of cases) {
    const copy = frozenJsonCopy(c);
    assert.equal(JSON.stringify(copy), JSON.stringify(JSON.parse(JSON.stringify(c))));
    assert.deepEqual(copy, JSON.parse(JSON.stringify(c)));
    assert.ok(isDeepFrozen(copy));
    assert.equal(Object.getPrototypeOf({}).polluted, undefined);
  }
});

test('frozenJsonCopy copies what the caller can change and shares frozen parts', () => {
  const shared = Object.freeze({ s: Object.freeze([1, 2]) });
  const input = { mutable: { a: [1] }, shared };
  const copy = frozenJsonCopy(input);
  input.mutable.a.push(2);
  assert.deepEqual(copy.mutable, { a: [1] });
  assert.equal(copy.shared, shared);
});

test('frozenJsonCopy of a cyclic value fails as JSON.stringify does', () => {
  const a: Record<string, unknown> = {};
  a['self'] = a;
  assert.throws(() => frozenJsonCopy(a), TypeError);
});

test('jsonEqual compares as parsed JSON: key order ignored, undefined members absent', () => {
  assert.ok(jsonEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(jsonEqual({ a: 1, u: undefined }, { a: 1 }));
  assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: null }));
  assert.ok(!jsonEqual([1, 2], [2, 1]));
  assert.ok(!jsonEqual([], {}));
  assert.ok(!jsonEqual({ a: '1' }, { a: 1 }));
  assert.ok(!jsonEqual(null, {}));
});

test('membersEqual skips the named members on both sides', () => {
  const skip = new Set(['resourceVersion']);
  assert.ok(membersEqual({ name: 'a', resourceVersion: '1' }, { name: 'a', resourceVersion: '2' }, skip));
  assert.ok(membersEqual({ name: 'a', resourceVersion: '1' }, { name: 'a' }, skip));
  assert.ok(!membersEqual({ name: 'a' }, { name: 'b', resourceVersion: '1' }, skip));
});

test('a frozen object answers the same text and list bytes whichever is asked first (one encoding kept, decoded for the other)', () => {
  const make = () => deepFreezeJson({ kind: 'ConfigMap', metadata: { name: 'x' }, data: { html: '<a href="&">', line: '\u2028', ü: 'ß' } });
  const want = JSON.stringify(make()).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  assert.ok(want.includes('\\u003c') && want.includes('\\u2028'));
  const orders: ((o: object) => void)[][] = [
    [(o) => jsonAnswerText(o), (o) => listItemBytes(o)],
    [(o) => listItemBytes(o), (o) => jsonAnswerText(o)],
    [(o) => rememberJson(o, JSON.stringify(o)), (o) => listItemBytes(o)],
  ];
  for (const steps of orders) {
    const o = make();
    for (const step of steps) step(o);
    for (let i = 0; i < 2; i++) {
      assert.equal(jsonAnswerText(o), want + '\n');
      assert.equal(toJson(o), want);
      assert.equal(listItemBytes(o).toString('utf8'), want + ',');
    }
  }
  // Not frozen: never memoized, always the object's current text.
  const open: Record<string, unknown> = { a: 1 };
  assert.equal(listItemBytes(open).toString(), '{"a":1},');
  open['a'] = 2;
  assert.equal(jsonAnswerText(open), '{"a":2}\n');
});

test('cloneJson gives what structuredClone gives, unfrozen and unshared with its input', () => {
  const shared = { s: 1 };
  const live = frozenJsonCopy({ apiVersion: 'v1', metadata: { name: 'a', labels: { x: 'y' } }, data: { k: 'v' }, list: [1, { a: [] }] });
  const cases: unknown[] = [
    live,
    { kept: undefined, n: null, deep: { a: [undefined, 2] } },
    { one: shared, two: shared },
    { ['__proto__']: { polluted: true }, ok: 1 },
    { when: new Date(0) }, // not JSON-shaped: structuredClone's own copy
    'text',
    null,
  ];
  for (const v of cases) {
    const c = cloneJson(v);
    assert.deepStrictEqual(c, structuredClone(v));
    if (typeof v === 'object' && v !== null) {
      assert.notEqual(c, v);
      assert.equal(Object.isFrozen(c), false);
    }
  }
  const c = cloneJson(live) as { metadata: { labels: Record<string, string> } };
  c.metadata.labels['x'] = 'changed';
  assert.equal((live as { metadata: { labels: Record<string, string> } }).metadata.labels['x'], 'y');
  const pair = cloneJson(cases[2]) as { one: object; two: object };
  assert.equal(pair.one, pair.two, 'shared references stay shared, as structuredClone keeps them');
  assert.equal(Object.hasOwn(cloneJson(cases[3]) as object, '__proto__'), true, '__proto__ is data');
  assert.equal(Object.getPrototypeOf(cloneJson(cases[3])), Object.prototype);
  let deep: unknown = 0;
  for (let i = 0; i < 2000; i++) deep = [deep];
  assert.equal(JSON.stringify(cloneJson(deep)), JSON.stringify(deep), 'deep nesting (a JSON patch may copy a subtree into itself)');
});

test('freezeStored freezes a parsed value in place with what it parsed, its empty objects one shared object', () => {
  // An own `__proto__` member (JSON.parse makes one) is data, also when its empty object is replaced.
  const text = (i: number) =>
    `{"metadata":{"name":"n${i}","creationTimestamp":"2026-11-29T19:56:01Z","labels":{},"__proto__":{}},` +
    `"managedFields":[{"time":"2026-11-29T19:56:01Z","fieldsV1":{"f:data":{".":{},"f:a":{}}}},{}],"list":["2026-11-29T19:56:01Z",[],{}]}`;
  const a = freezeStored(JSON.parse(text(1)) as Record<string, any>);
  const b = freezeStored(JSON.parse(text(2)) as Record<string, any>);
  assert.deepEqual(a, JSON.parse(text(1)));
  assert.ok(isDeepFrozen(a) && isDeepFrozen(b));
  assert.equal(Object.getPrototypeOf(a.metadata), Object.prototype, 'an own __proto__ member stays data');
  assert.equal(Object.getOwnPropertyDescriptor(a.metadata, '__proto__')?.value, a.metadata.labels);
  assert.equal(a.metadata.labels, b.managedFields[0].fieldsV1['f:data']['.'], 'one empty object');
  assert.equal(a.managedFields[1], a.list[2]);
  assert.notEqual(a.list[1], a.list[2], 'arrays are not objects');
  assert.equal(JSON.stringify(a), JSON.stringify(JSON.parse(text(1))));
  assert.equal(freezeStored(JSON.parse('{}')), freezeStored(JSON.parse('{}')));
});
