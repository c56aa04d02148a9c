// validate(obj): the OpenAPI value checks of a custom resource with
// kube-apiserver's field paths and messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCrdSchema, type CrdVersionRef } from '../../lib/crdschema/index.js';
import { goFloat } from '../../lib/crdschema/render.js';
import type { KObject } from '../../lib/api/meta.js';

const REF: CrdVersionRef = { group: 'g.example.com', version: 'v1', kind: 'Thing', listKind: 'ThingList', plural: 'things' };
const spec = (name: string, schema: Record<string, unknown>) => ({ type: 'object', properties: { spec: { type: 'object', properties: { [name]: schema } } } });

function check(schema: unknown, obj: unknown): string[] {
  return compileCrdSchema(schema, REF)
    .validate(obj as KObject, undefined)
    .map((c) => `${c.field}: ${c.message}`);
}

const f = (name: string, schema: Record<string, unknown>, value: unknown): [unknown, unknown] => [spec(name, schema), { spec: { [name]: value } }];

const CASES: Array<[string, [unknown, unknown], string[]]> = [
  [
    'maximum',
    f('replicas', { type: 'integer', maximum: 10 }, 11),
    ['spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10'],
  ],
  ['maximum met', f('replicas', { type: 'integer', maximum: 10 }, 10), []],
  [
    'exclusive maximum',
    f('r', { type: 'integer', maximum: 10, exclusiveMaximum: true }, 10),
    ['spec.r: Invalid value: 10: spec.r in body should be less than 10'],
  ],
  ['minimum', f('r', { type: 'number', minimum: 0.5 }, 0.25), ['spec.r: Invalid value: 0.25: spec.r in body should be greater than or equal to 0.5']],
  [
    'exclusive minimum',
    f('r', { type: 'integer', minimum: 0, exclusiveMinimum: true }, 0),
    ['spec.r: Invalid value: 0: spec.r in body should be greater than 0'],
  ],
  [
    'a large bound printed as Go prints a float',
    f('r', { type: 'integer', maximum: 1000000 }, 1000001),
    ['spec.r: Invalid value: 1000001: spec.r in body should be less than or equal to 1e+06'],
  ],
  ['multipleOf', f('r', { type: 'integer', multipleOf: 5 }, 7), ['spec.r: Invalid value: 7: spec.r in body should be a multiple of 5']],
  ['multipleOf of a decimal', f('r', { type: 'number', multipleOf: 0.1 }, 0.3), []],
  ['type integer', f('r', { type: 'integer' }, 'x'), ['spec.r: Invalid value: "string": spec.r in body must be of type integer: "string"']],
  ['type integer given a fraction', f('r', { type: 'integer' }, 1.5), ['spec.r: Invalid value: "number": spec.r in body must be of type integer: "number"']],
  ['type number given an integer', f('r', { type: 'number' }, 1), []],
  ['type object', f('o', { type: 'object' }, [1]), ['spec.o: Invalid value: "array": spec.o in body must be of type object: "array"']],
  ['null where not nullable', f('s', { type: 'string' }, null), ['spec.s: Invalid value: "null": spec.s in body must be of type string: "null"']],
  ['null where nullable', f('s', { type: 'string', nullable: true }, null), []],
  [
    'int-or-string',
    f('p', { 'x-kubernetes-int-or-string': true }, true),
    ['spec.p: Invalid value: "boolean": spec.p in body must be of type integer,string: "boolean"'],
  ],
  ['int-or-string given a string', f('p', { 'x-kubernetes-int-or-string': true }, '80%'), []],
  ['enum', f('e', { type: 'string', enum: ['a', 'b'] }, 'x'), ['spec.e: Unsupported value: "x": supported values: "a", "b"']],
  ['enum of integers', f('e', { type: 'integer', enum: [1, 2] }, 3), ['spec.e: Unsupported value: 3: supported values: "1", "2"']],
  ['pattern', f('s', { type: 'string', pattern: '^[a-z]+$' }, 'A1'), ['spec.s: Invalid value: "A1": spec.s in body should match \'^[a-z]+$\'']],
  ['pattern unanchored, as Go matches', f('s', { type: 'string', pattern: '[0-9]' }, 'ab1'), []],
  ['maxLength', f('s', { type: 'string', maxLength: 3 }, 'abcd'), ['spec.s: Too long: may not be more than 3 bytes']],
  ['maxLength counts characters', f('s', { type: 'string', maxLength: 3 }, 'äöü'), []],
  ['minLength', f('s', { type: 'string', minLength: 3 }, 'ab'), ['spec.s: Invalid value: "ab": spec.s in body should be at least 3 chars long']],
  ['maxItems', f('l', { type: 'array', items: { type: 'string' }, maxItems: 1 }, ['a', 'b']), ['spec.l: Too many: 2: must have at most 1 item']],
  [
    'minItems',
    f('l', { type: 'array', items: { type: 'string' }, minItems: 2 }, ['a']),
    ['spec.l: Invalid value: ["a"]: spec.l in body should have at least 2 items'],
  ],
  [
    'items',
    f('l', { type: 'array', items: { type: 'integer', minimum: 0 } }, [1, -1]),
    ['spec.l[1]: Invalid value: -1: spec.l[1] in body should be greater than or equal to 0'],
  ],
  [
    'maxProperties',
    f('m', { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1 }, { a: 'x', b: 'y' }),
    ['spec.m: Too many: 2: must have at most 1 item'],
  ],
  [
    'minProperties',
    f('m', { type: 'object', additionalProperties: { type: 'string' }, minProperties: 2 }, { a: 'x' }),
    ['spec.m: Invalid value: {"a":"x"}: spec.m in body should have at least 2 properties'],
  ],
  [
    'additionalProperties',
    f('m', { type: 'object', additionalProperties: { type: 'string' } }, { a: 1 }),
    ['spec.m.a: Invalid value: "integer": spec.m.a in body must be of type string: "integer"'],
  ],
  [
    'required',
    f('o', { type: 'object', required: ['a', 'b'], properties: { a: { type: 'string' }, b: { type: 'string' } } }, { a: 'x' }),
    ['spec.o.b: Required value'],
  ],
  [
    'embedded resource needs apiVersion and kind',
    f('t', { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true }, { kind: 'Pod' }),
    ['spec.t.apiVersion: Required value: must not be empty'],
  ],
  [
    'embedded resource: kind, apiVersion and metadata checked as kube does',
    f(
      't',
      { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      { apiVersion: 'a/b/c', kind: 'my_kind', metadata: { name: 'a/b', labels: { 'bad key!': 'v' } } },
    ),
    [
      'spec.t.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      "spec.t.kind: Invalid value: \"my_kind\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
      'spec.t.metadata.name: Invalid value: "a/b": may not contain \'/\'',
      "spec.t.metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ],
  ],
  [
    'embedded resource in mixed case',
    f(
      't',
      { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    ),
    [],
  ],
  [
    'anyOf',
    f('s', { type: 'string', anyOf: [{ maxLength: 1 }, { pattern: '^x' }] }, 'ab'),
    ['<nil>: Invalid value: "": "spec.s" must validate at least one schema (anyOf)', 'spec.s: Too long: may not be more than 1 byte'],
  ],
  ['anyOf met', f('s', { type: 'string', anyOf: [{ maxLength: 1 }, { pattern: '^x' }] }, 'xy'), []],
  [
    'oneOf',
    f('s', { type: 'string', oneOf: [{ maxLength: 5 }, { pattern: '^x' }] }, 'xy'),
    ['<nil>: Invalid value: "": "spec.s" must validate one and only one schema (oneOf). Found 2 valid alternatives'],
  ],
  [
    'a set holding a value twice',
    f('l', { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } }, ['a', 'b', 'a', 'a']),
    ['spec.l[2]: Duplicate value: "a"'],
  ],
  [
    'a map list holding a key twice',
    f(
      'l',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['n', 'p'],
        items: { type: 'object', required: ['n', 'p'], properties: { n: { type: 'string' }, p: { type: 'integer' }, v: { type: 'string' } } },
      },
      [
        { n: 'a', p: 1, v: 'x' },
        { n: 'a', p: 2 },
        { n: 'a', p: 1, v: 'y' },
      ],
    ),
    ['spec.l[2]: Duplicate value: {"n":"a","p":1}'],
  ],
  [
    'a map list item that is not an object',
    f(
      'l',
      {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['n'],
        items: { type: 'object', required: ['n'], properties: { n: { type: 'string' } } },
      },
      [{ n: 'a' }, 'x'],
    ),
    [
      'spec.l[1]: Invalid value: "x": must be an object for an array of list-type map',
      'spec.l[1]: Invalid value: "string": spec.l[1] in body must be of type object: "string"',
    ],
  ],
  ['not', f('s', { type: 'string', not: { pattern: '^x' } }, 'xy'), ['<nil>: Invalid value: "": "spec.s" must not validate the schema (not)']],
];

const FORMATS: Array<[string, string, boolean]> = [
  ['int32', '5', true],
  ['uuid', '123e4567-e89b-12d3-a456-426614174000', true],
  ['uuid', 'nope', false],
  ['date', '2024-02-29', true],
  ['date', '2023-02-29', false],
  ['date-time', '2024-01-02T03:04:05Z', true],
  ['date-time', '2024-01-02 x', false],
  ['byte', 'aGVsbG8=', true],
  ['byte', 'a', false],
  ['ipv4', '10.0.0.1', true],
  ['ipv4', '::1', false],
  ['ipv6', '::1', true],
  ['ipv6', '10.0.0.1', false],
  ['cidr', '10.0.0.0/8', true],
  ['cidr', '10.0.0.0/33', false],
  ['mac', '01:23:45:67:89:ab', true],
  ['mac', '01:23', false],
  ['hostname', 'a.example.com', true],
  ['hostname', '-a.com', false],
  ['uri', 'https://example.com/x', true],
  ['uri', 'example', false],
  ['email', 'a@example.com', true],
  ['email', 'nope', false],
  ['duration', '1h30m', true],
  ['duration', '5 days', true],
  ['duration', 'soon', false],
  ['unknown-format', 'anything', true],
];

describe('validate: OpenAPI value checks', () => {
  for (const [name, [schema, obj], want] of CASES) it(name, () => assert.deepEqual(check(schema, obj), want));

  for (const [format, value, ok] of FORMATS) {
    it(`format ${format}: ${JSON.stringify(value)} ${ok ? 'accepted' : 'refused'}`, () => {
      const want = ok ? [] : [`spec.v: Invalid value: ${JSON.stringify(value)}: spec.v in body must be of type ${format}: ${JSON.stringify(value)}`];
      assert.deepEqual(check(spec('v', { type: 'string', format }), { spec: { v: value } }), want);
    });
  }

  it('reports every problem of one object, in the walk order', () => {
    const schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['a'],
          properties: { a: { type: 'string' }, b: { type: 'integer', maximum: 1 }, c: { type: 'string', enum: ['x'] } },
        },
      },
    };
    assert.deepEqual(check(schema, { spec: { b: 2, c: 'y' } }), [
      'spec.a: Required value',
      'spec.b: Invalid value: 2: spec.b in body should be less than or equal to 1',
      'spec.c: Unsupported value: "y": supported values: "x"',
    ]);
  });

  it('prints numbers as Go does', () => {
    assert.deepEqual([1, 10, 0.5, 123456, 1e6, 1234567, 1e-5, 2.5e21].map(goFloat), ['1', '10', '0.5', '123456', '1e+06', '1.234567e+06', '1e-05', '2.5e+21']);
  });
});

describe('validate: ratcheting on update (unchanged values are not checked)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          name: { type: 'string', maxLength: 3 },
          size: { type: 'integer', maximum: 10 },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['n'],
            items: { type: 'object', required: ['n'], properties: { n: { type: 'string' }, p: { type: 'integer', maximum: 100 } } },
          },
          tags: { type: 'array', items: { type: 'string', maxLength: 2 } },
        },
      },
    },
  };
  const v = (obj: unknown, old?: unknown) =>
    compileCrdSchema(schema, REF)
      .validate(obj as KObject, old as KObject | undefined)
      .map((c) => `${c.field}: ${c.message}`);

  it('accepts an old invalid value left alone, refuses a changed one', () => {
    const old = { spec: { name: 'toolong', size: 5 } };
    assert.deepEqual(v({ spec: { name: 'toolong', size: 6 } }, old), []);
    assert.deepEqual(v({ spec: { name: 'toolong2', size: 6 } }, old), ['spec.name: Too long: may not be more than 3 bytes']);
    assert.deepEqual(v({ spec: { name: 'toolong', size: 6 } }), ['spec.name: Too long: may not be more than 3 bytes']);
  });

  it('correlates map-list items by key, not atomic-list items', () => {
    const old = { spec: { ports: [{ n: 'a', p: 500 }], tags: ['long'] } };
    assert.deepEqual(
      v(
        {
          spec: {
            ports: [
              { n: 'b', p: 1 },
              { n: 'a', p: 500 },
            ],
            tags: ['long'],
          },
        },
        old,
      ),
      [],
    );
    assert.deepEqual(v({ spec: { ports: [{ n: 'a', p: 500 }], tags: ['long', 'x'] } }, old), ['spec.tags[0]: Too long: may not be more than 2 bytes']);
  });
});
