// defaults(obj): kube's structural defaulting — absent properties, non-nullable
// nulls, inside items and additionalProperties, defaults of defaults, copies.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCrdSchema, type CrdVersionRef } from '../../lib/crdschema/index.js';
import type { KObject } from '../../lib/api/meta.js';

const REF: CrdVersionRef = { group: 'g.example.com', version: 'v1', kind: 'Thing', listKind: 'ThingList', plural: 'things' };
const spec = (properties: Record<string, unknown>) => ({ type: 'object', properties: { spec: { type: 'object', properties } } });

function defaulted(schema: unknown, obj: Record<string, unknown>): Record<string, unknown> {
  const c = compileCrdSchema(schema, REF);
  c.defaults(obj as unknown as KObject);
  return obj;
}

const CASES: Array<[string, unknown, Record<string, unknown>, Record<string, unknown>]> = [
  ['an absent property', spec({ replicas: { type: 'integer', default: 1 } }), { spec: {} }, { spec: { replicas: 1 } }],
  ['a present property is kept', spec({ replicas: { type: 'integer', default: 1 } }), { spec: { replicas: 3 } }, { spec: { replicas: 3 } }],
  ['an absent parent is not created', spec({ replicas: { type: 'integer', default: 1 } }), {}, {}],
  [
    'a parent default, then its members',
    {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          default: {},
          properties: { a: { type: 'string', default: 'x' }, b: { type: 'object', properties: { c: { type: 'integer', default: 2 } } } },
        },
      },
    },
    {},
    { spec: { a: 'x' } },
  ],
  ['a null that is not nullable', spec({ a: { type: 'string', default: 'x' } }), { spec: { a: null } }, { spec: { a: 'x' } }],
  ['a nullable null stays null', spec({ a: { type: 'string', nullable: true, default: 'x' } }), { spec: { a: null } }, { spec: { a: null } }],
  [
    'inside items',
    spec({ l: { type: 'array', items: { type: 'object', properties: { p: { type: 'string', default: 'TCP' } } } } }),
    { spec: { l: [{}, { p: 'UDP' }] } },
    { spec: { l: [{ p: 'TCP' }, { p: 'UDP' }] } },
  ],
  ['null items', spec({ l: { type: 'array', items: { type: 'string', default: 'd' } } }), { spec: { l: ['a', null] } }, { spec: { l: ['a', 'd'] } }],
  [
    'inside additionalProperties',
    spec({ m: { type: 'object', additionalProperties: { type: 'object', properties: { on: { type: 'boolean', default: true } } } } }),
    { spec: { m: { a: {}, b: { on: false } } } },
    { spec: { m: { a: { on: true }, b: { on: false } } } },
  ],
  [
    'a property named __proto__',
    JSON.parse('{"type":"object","properties":{"spec":{"type":"object","properties":{"__proto__":{"type":"string","default":"p"}}}}}'),
    { spec: {} },
    JSON.parse('{"spec":{"__proto__":"p"}}'),
  ],
];

describe('defaults', () => {
  for (const [name, schema, obj, want] of CASES) {
    it(name, () => assert.deepEqual(defaulted(schema, obj), want));
  }

  it('gives every object its own copy of a default', () => {
    const c = compileCrdSchema(spec({ o: { type: 'object', default: { l: ['a'] }, properties: { l: { type: 'array', items: { type: 'string' } } } } }), REF);
    const a = { spec: {} } as unknown as KObject;
    const b = { spec: {} } as unknown as KObject;
    c.defaults(a);
    c.defaults(b);
    (a as unknown as { spec: { o: { l: string[] } } }).spec.o.l.push('b');
    assert.deepEqual((b as unknown as { spec: unknown }).spec, { o: { l: ['a'] } });
  });

  it('leaves the prototype of an object alone', () => {
    const obj = defaulted(
      JSON.parse(
        '{"type":"object","properties":{"spec":{"type":"object","properties":{"__proto__":{"type":"object","properties":{"polluted":{"type":"integer"}},"default":{"polluted":1}}}}}}',
      ),
      { spec: {} },
    );
    const s = obj.spec as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(s), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(s, '__proto__')?.value, { polluted: 1 });
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('serves a default pruned by its own schema (a legacy stored one may hold unknown fields)', () => {
    const obj = defaulted(spec({ o: { type: 'object', default: { a: 'x', junk: 1 }, properties: { a: { type: 'string' } } } }), { spec: {} });
    assert.deepEqual(obj.spec, { o: { a: 'x' } });
  });

  it('does nothing without defaults', () => {
    const obj = { spec: { a: 1 } };
    assert.deepEqual(defaulted(spec({ a: { type: 'integer' } }), obj), { spec: { a: 1 } });
  });
});
