// x-kubernetes-validations: compile errors and estimated cost at CRD write,
// then passing, failing, transition and over-budget rules per request, with
// kube's fields, reasons and messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCrdSchema, compileCrdSchema, type CrdVersionRef, type ValidateOptions } from '../../lib/crdschema/index.js';
import type { KObject } from '../../lib/api/meta.js';

const REF: CrdVersionRef = { group: 'g.example.com', version: 'v1', kind: 'Thing', listKind: 'ThingList', plural: 'things' };
const F = 'spec.versions[0].schema.openAPIV3Schema';
const lines = (cs: Array<{ field?: string; message?: string }>) => cs.map((c) => `${c.field}: ${c.message}`);

function withRules(rules: unknown[], properties: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        'x-kubernetes-validations': rules,
        ...extra,
        properties: {
          replicas: { type: 'integer' },
          minReplicas: { type: 'integer' },
          maxReplicas: { type: 'integer' },
          name: { type: 'string', maxLength: 63 },
          ratio: { type: 'number' },
          ...properties,
        },
      },
    },
  };
}

// Rules here are judged by cost units only: no wall-clock net (RULE_TIMEOUT_MS in production, its
// check tested with an injected clock in test/cel/regexurl.test.ts), so a loaded machine cannot
// turn a cost answer into a timeout.
const run = (schema: unknown, obj: unknown, old?: unknown, o?: ValidateOptions) =>
  lines(compileCrdSchema(schema, REF).validate(obj as KObject, old as KObject | undefined, { timeoutMs: Infinity, ...o }));

describe('x-kubernetes-validations at CRD write', () => {
  const CASES: Array<[string, unknown, string[] | RegExp]> = [
    ['a rule that compiles', withRules([{ rule: 'self.minReplicas <= self.maxReplicas' }]), []],
    [
      'a syntax error',
      withRules([{ rule: 'self.minReplicas <= ' }]),
      /^spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: \{"rule":"self\.minReplicas <= "\}: compilation failed: /,
    ],
    [
      'an undeclared variable',
      withRules([{ rule: 'other.x == 1' }]),
      [`${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"other.x == 1"}: compilation failed: undeclared reference to "other"`],
    ],
    [
      'a messageExpression that does not compile',
      withRules([{ rule: 'true', messageExpression: '"x" +' }]),
      /x-kubernetes-validations\[0\]\.messageExpression: Invalid value: .*messageExpression compilation failed: /,
    ],
    [
      'oldSelf under an atomic list',
      withRules([], { l: { type: 'array', items: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] } } }),
      [
        `${F}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within ${F}.properties[spec].properties[l]`,
      ],
    ],
    [
      'oldSelf under a map list',
      withRules([], {
        l: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['k'],
          items: { type: 'object', required: ['k'], properties: { k: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'self == oldSelf' }] },
        },
      }),
      [],
    ],
    [
      'a rule whose result is dyn, not bool (a field under x-kubernetes-preserve-unknown-fields)',
      withRules([{ rule: 'self.extra' }], {}, { 'x-kubernetes-preserve-unknown-fields': true }),
      [`${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.extra"}: cel expression must evaluate to a bool`],
    ],
    [
      'a messageExpression whose result is dyn, not string',
      withRules([{ rule: 'true', messageExpression: 'self.extra' }], {}, { 'x-kubernetes-preserve-unknown-fields': true }),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: {"messageExpression":"self.extra","rule":"true"}: messageExpression must evaluate to a string`,
      ],
    ],
    ['a dyn field compared with a bool: bool', withRules([{ rule: 'self.extra == true' }], {}, { 'x-kubernetes-preserve-unknown-fields': true }), []],
    [
      "object types named as kube names them: the node's self type, its fields, list items and map values",
      withRules([{ rule: 'self.nested + 1 == 2 || self.l[0] == 1 || self.m["k"] == 1' }], {
        nested: { type: 'object', properties: { a: { type: 'string' } } },
        l: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        m: { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } },
      }),
      /compilation failed: ERROR: <input>:1:13: found no matching overload for '_\+_' applied to '\(selfType\d+\.nested, int\)'/,
    ],
    [
      'a list item and a map value named',
      withRules([{ rule: 'self.l[0] + self.m["k"] == 1' }], {
        l: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } } } },
        m: { type: 'object', additionalProperties: { type: 'object', properties: { a: { type: 'string' } } } },
      }),
      /found no matching overload for '_\+_' applied to '\(selfType(\d+)\.l\.@idx, selfType\1\.m\.@elem\)'/,
    ],
    [
      'optionalOldSelf without oldSelf',
      withRules([{ rule: 'true', optionalOldSelf: true }]),
      [`${F}.properties[spec].x-kubernetes-validations[0].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule`],
    ],
    [
      'a field the schema does not declare',
      withRules([{ rule: 'self.replicsa > 0' }]),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.replicsa > 0"}: compilation failed: ERROR: <input>:1:5: undefined field 'replicsa'\n | self.replicsa > 0\n | ....^`,
      ],
    ],
    [
      'an undeclared field inside a loop over items',
      withRules([{ rule: 'self.l.all(x, x.nmae != "")' }], { l: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } } }),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.l.all(x, x.nmae != \\"\\")"}: compilation failed: ERROR: <input>:1:16: undefined field 'nmae'\n | self.l.all(x, x.nmae != "")\n | ...............^`,
      ],
    ],
    [
      'any field under preserve-unknown-fields or a map',
      withRules([{ rule: 'self.free.anything == 1 && self.m.key == "v"' }], {
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        m: { type: 'object', additionalProperties: { type: 'string' } },
      }),
      [],
    ],
    [
      'escaped property names',
      withRules([{ rule: 'self.foo__dash__bar == 1 && self.__namespace__ == "x"' }], { 'foo-bar': { type: 'integer' }, namespace: { type: 'string' } }),
      [],
    ],
    [
      'a bounded nested loop',
      withRules([{ rule: 'self.l.all(a, self.l.all(b, a == b || a != b))' }], {
        l: { type: 'array', maxItems: 100, items: { type: 'string', maxLength: 10 } },
      }),
      [],
    ],
    [
      'an unbounded nested loop',
      withRules([{ rule: 'self.l.all(a, self.l.all(b, a == b || a != b))' }], { l: { type: 'array', items: { type: 'string' } } }),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`,
      ],
    ],
    ['one loop over an unbounded list', withRules([{ rule: 'self.l.all(a, a != "")' }], { l: { type: 'array', items: { type: 'string' } } }), []],
    [
      'a rule on items of an unbounded list, looping over an unbounded list',
      withRules([], {
        l: {
          type: 'array',
          items: {
            type: 'object',
            properties: { m: { type: 'array', items: { type: 'string' } } },
            'x-kubernetes-validations': [{ rule: 'self.m.all(x, x != "")' }],
          },
        },
      }),
      /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/,
    ],
    [
      'a loop over a list literal (prometheus-operator\'s "at most one of")',
      withRules([{ rule: '[has(self.replicas), has(self.name), has(self.ratio)].filter(x, x).size() <= 1' }]),
      [],
    ],
    [
      'a cheap rule under two unbounded lists (counted by what fits in a request, as kube does)',
      withRules([], {
        l: {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              m: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { a: { type: 'string' }, b: { type: 'string' } },
                  'x-kubernetes-validations': [{ rule: '!has(self.a) || has(self.b)' }],
                },
              },
            },
          },
        },
      }),
      [],
    ],
    ['a regex over an unbounded string, once', withRules([{ rule: 'self.image.matches("^[a-z0-9./-]+$")' }], { image: { type: 'string' } }), []],
    [
      'a regex over every unbounded string of an unbounded list',
      withRules([{ rule: 'self.tags.all(t, t.matches("^[a-z0-9./-]+$"))' }], { tags: { type: 'array', items: { type: 'string' } } }),
      /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/,
    ],
    [
      'the same regex with maxItems and maxLength',
      withRules([{ rule: 'self.tags.all(t, t.matches("^[a-z0-9./-]+$"))' }], {
        tags: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 63 } },
      }),
      [],
    ],
    [
      'an expensive messageExpression',
      withRules([{ rule: 'true', messageExpression: 'self.tags.map(a, self.tags.map(b, a + b).join(",")).join(",")' }], {
        tags: { type: 'array', items: { type: 'string' } },
      }),
      /x-kubernetes-validations\[0\]\.messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x/,
    ],
    [
      "a format rule (gateway-api's experimental CRDs)",
      withRules([
        { rule: '!format.dns1123Label().validate(self.name).hasValue()', messageExpression: 'format.dns1123Label().validate(self.name).value().join(", ")' },
      ]),
      [],
    ],
    [
      'a format given a non-string',
      withRules([{ rule: '!format.dns1123Label().validate(self.replicas).hasValue()' }]),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"!format.dns1123Label().validate(self.replicas).hasValue()"}: compilation failed: ERROR: <input>:1:32: found no matching overload for 'validate' applied to 'kubernetes.NamedFormat.(int)'\n | !format.dns1123Label().validate(self.replicas).hasValue()\n | ...............................^`,
      ],
    ],
    [
      'a regex find rule',
      withRules([{ rule: 'self.image.find("^[a-z0-9.-]+") != "" && self.image.findAll("[0-9]+", 3).size() <= 3' }], { image: { type: 'string' } }),
      [],
    ],
    [
      'findAll given a string limit',
      withRules([{ rule: 'self.name.findAll("a", "2").size() == 0' }]),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.name.findAll(\\"a\\", \\"2\\").size() == 0"}: compilation failed: ERROR: <input>:1:18: found no matching overload for 'findAll' applied to 'string.(string, string)'\n | self.name.findAll("a", "2").size() == 0\n | .................^`,
      ],
    ],
    [
      'find with a constant pattern that does not compile (kube compiles it when it builds the program)',
      withRules([{ rule: 'self.name.find("(a") == ""' }]),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.name.find(\\"(a\\") == \\"\\""}: program instantiation failed: error parsing regexp: missing closing ): \`(a\``,
      ],
    ],
    [
      'findAll with a bad constant pattern inside a loop',
      withRules([{ rule: 'self.tags.all(t, t.findAll("a**", 2).size() == 0)' }], {
        tags: { type: 'array', maxItems: 5, items: { type: 'string', maxLength: 10 } },
      }),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.tags.all(t, t.findAll(\\"a**\\", 2).size() == 0)"}: program instantiation failed: error parsing regexp: invalid nested repetition operator: \`**\``,
      ],
    ],
    [
      'findAll over every unbounded string of an unbounded list',
      withRules([{ rule: 'self.tags.all(t, t.findAll("[a-z]+[0-9]+").size() < 3)' }], { tags: { type: 'array', items: { type: 'string' } } }),
      /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x/,
    ],
    [
      'a URL rule',
      withRules([{ rule: 'isURL(self.endpoint) && url(self.endpoint).getScheme() == "https" && url(self.endpoint).getQuery().size() == 0' }], {
        endpoint: { type: 'string', maxLength: 2048 },
      }),
      [],
    ],
    [
      'a URL getter on a string',
      withRules([{ rule: 'self.name.getHost() == "a"' }]),
      [
        `${F}.properties[spec].x-kubernetes-validations[0].rule: Invalid value: {"rule":"self.name.getHost() == \\"a\\""}: compilation failed: ERROR: <input>:1:18: found no matching overload for 'getHost' applied to 'string.()'\n | self.name.getHost() == \"a\"\n | .................^`,
      ],
    ],
    [
      'no CEL errors while the schema is wrong',
      withRules([{ rule: 'self.x >' }], { bad: { type: 'array' } }),
      [`${F}.properties[spec].properties[bad].items: Required value: must be specified`],
    ],
  ];
  for (const [name, schema, want] of CASES) {
    it(name, () => {
      const got = lines(checkCrdSchema(schema, F));
      if (want instanceof RegExp) {
        assert.equal(got.length, 1, got.join('\n'));
        assert.match(got[0]!, want);
      } else assert.deepEqual(got, want);
    });
  }
});

describe('x-kubernetes-validations per request', () => {
  it('passes and fails with the rule as message and the node as field', () => {
    const s = withRules([{ rule: 'self.minReplicas <= self.maxReplicas' }]);
    assert.deepEqual(run(s, { spec: { minReplicas: 1, maxReplicas: 3 } }), []);
    assert.deepEqual(run(s, { spec: { minReplicas: 5, maxReplicas: 3 } }), [
      'spec: Invalid value: "object": failed rule: self.minReplicas <= self.maxReplicas',
    ]);
  });

  it('types integers as int and numbers as double', () => {
    const s = withRules([{ rule: 'self.replicas + 1 == 4 && self.ratio * 2.0 == 1.0' }]);
    assert.deepEqual(run(s, { spec: { replicas: 3, ratio: 0.5 } }), []);
    const whole = withRules([{ rule: 'self.ratio == 2.0' }]);
    assert.deepEqual(run(whole, { spec: { ratio: 2 } }), []);
  });

  it('uses message, messageExpression, reason and fieldPath', () => {
    const s = withRules([
      { rule: 'self.replicas < 10', message: 'too many replicas', reason: 'FieldValueForbidden', fieldPath: '.replicas' },
      { rule: 'self.name.startsWith("a")', messageExpression: '"name " + self.name + " must start with a"', reason: 'FieldValueRequired' },
      { rule: 'self.name != "abc"', reason: 'FieldValueDuplicate' },
    ]);
    assert.deepEqual(run(s, { spec: { replicas: 12, name: 'bcd' } }), [
      'spec.replicas: Forbidden: too many replicas',
      'spec: Required value: name bcd must start with a',
    ]);
    // kube 1.33's field.Duplicate carries the node's type and no detail.
    assert.deepEqual(run(s, { spec: { replicas: 1, name: 'abc' } }), ['spec: Duplicate value: "object"']);
  });

  it('runs rules on every item and map value, with the item path', () => {
    const s = withRules([], {
      l: { type: 'array', items: { type: 'integer', 'x-kubernetes-validations': [{ rule: 'self >= 0', message: 'negative' }] } },
      m: { type: 'object', additionalProperties: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.size() < 3' }] } },
    });
    assert.deepEqual(run(s, { spec: { l: [1, -1, 2, -2], m: { a: 'x', b: 'long' } } }), [
      'spec.l[1]: Invalid value: "integer": negative',
      'spec.l[3]: Invalid value: "integer": negative',
      'spec.m.b: Invalid value: "string": failed rule: self.size() < 3',
    ]);
  });

  it('runs transition rules only on update, when the old value exists', () => {
    const s = withRules([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'name is immutable' }] } });
    assert.deepEqual(run(s, { spec: { name: 'a' } }), []);
    assert.deepEqual(run(s, { spec: { name: 'a' } }, { spec: { name: 'a' } }), []);
    assert.deepEqual(run(s, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec.name: Invalid value: "string": name is immutable']);
    assert.deepEqual(run(s, { spec: { name: 'b' } }, { spec: {} }), []);
  });

  it('ratchets: rules without oldSelf skip an unchanged value on update', () => {
    const s = withRules([], { name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self.startsWith("a")', message: 'must start with a' }] } });
    assert.deepEqual(run(s, { spec: { name: 'bad', replicas: 2 } }, { spec: { name: 'bad', replicas: 1 } }), []);
    assert.deepEqual(run(s, { spec: { name: 'worse' } }, { spec: { name: 'bad' } }), ['spec.name: Invalid value: "string": must start with a']);
  });

  it('correlates map-list items by their keys for oldSelf', () => {
    const s = withRules([], {
      l: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['k'],
        items: {
          type: 'object',
          required: ['k'],
          properties: { k: { type: 'string' }, v: { type: 'integer' } },
          'x-kubernetes-validations': [{ rule: 'self.v >= oldSelf.v', message: 'v may only grow' }],
        },
      },
    });
    const old = {
      spec: {
        l: [
          { k: 'a', v: 5 },
          { k: 'b', v: 5 },
        ],
      },
    };
    assert.deepEqual(
      run(
        s,
        {
          spec: {
            l: [
              { k: 'b', v: 6 },
              { k: 'a', v: 4 },
              { k: 'c', v: 0 },
            ],
          },
        },
        old,
      ),
      ['spec.l[1]: Invalid value: "object": v may only grow'],
    );
  });

  it('optionalOldSelf: the rule runs on create with an absent oldSelf', () => {
    const s = withRules([], {
      name: {
        type: 'string',
        'x-kubernetes-validations': [{ rule: '!oldSelf.hasValue() || self == oldSelf.value()', optionalOldSelf: true, message: 'immutable' }],
      },
    });
    assert.deepEqual(run(s, { spec: { name: 'a' } }), []);
    assert.deepEqual(run(s, { spec: { name: 'b' } }, { spec: { name: 'a' } }), ['spec.name: Invalid value: "string": immutable']);
    const create = withRules([], {
      name: { type: 'string', 'x-kubernetes-validations': [{ rule: 'oldSelf.hasValue()', optionalOldSelf: true, message: 'only on update' }] },
    });
    assert.deepEqual(run(create, { spec: { name: 'a' } }), ['spec.name: Invalid value: "string": only on update']);
  });

  it('shows the root rule name and generateName of metadata only', () => {
    const s = { type: 'object', 'x-kubernetes-validations': [{ rule: 'self.metadata.name.startsWith("x")' }], properties: { spec: { type: 'object' } } };
    assert.deepEqual(lines(checkCrdSchema(s, F)), []);
    assert.deepEqual(run(s, { metadata: { name: 'xa', labels: { a: 'b' } }, spec: {} }), []);
    assert.deepEqual(run(s, { metadata: { name: 'ya' }, spec: {} }), ['<nil>: Invalid value: "object": failed rule: self.metadata.name.startsWith("x")']);
    const labels = { ...s, 'x-kubernetes-validations': [{ rule: 'has(self.metadata.labels)' }] };
    assert.deepEqual(lines(checkCrdSchema(labels, F)), [
      `${F}.x-kubernetes-validations[0].rule: Invalid value: {"rule":"has(self.metadata.labels)"}: compilation failed: ERROR: <input>:1:18: undefined field 'labels'\n | has(self.metadata.labels)\n | .................^`,
    ]);
  });

  it('stops a rule over its per-call limit and an object over its budget', () => {
    const s = withRules([{ rule: 'self.l.all(a, self.l.all(b, true))' }], { l: { type: 'array', maxItems: 200, items: { type: 'integer' } } });
    const l = Array.from({ length: 200 }, (_, i) => i);
    assert.deepEqual(run(s, { spec: { l } }, undefined, { perCallLimit: 1_000, budget: 1_000_000 }), [
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.l.all(a, self.l.all(b, true))`,
    ]);
    // No rule runs after that one, as in kube.
    const two = withRules([{ rule: 'self.l.all(a, self.l.all(b, true))' }, { rule: 'false' }], {
      l: { type: 'array', maxItems: 200, items: { type: 'integer' } },
    });
    assert.equal(run(two, { spec: { l } }, undefined, { perCallLimit: 1_000, budget: 1_000_000 }).length, 1);
    assert.equal(run(two, { spec: { l: [1] } }, undefined, { perCallLimit: 1_000, budget: 1_000_000 }).length, 1);
    assert.deepEqual(run(s, { spec: { l } }, undefined, { perCallLimit: 1_000, budget: 500 }), [
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    assert.deepEqual(run(s, { spec: { l: [1, 2, 3] } }, undefined, { perCallLimit: 1_000, budget: 500 }), []);
  });

  it("counts kube's cost units, not loop iterations: string work by size against the 10^6 per-call limit", () => {
    const rule = "self.l.all(a, self.l.all(b, a + b != ''))";
    const s = withRules([{ rule }], { l: { type: 'array', items: { type: 'string' } } });
    const strings = (n: number) => Array.from({ length: n }, (_, i) => `${i}`.padStart(60, 'x'));
    // 100 × 100 iterations, each concatenating 120 characters (cost 12) and a few nodes: well under 10^6.
    assert.deepEqual(run(s, { spec: { l: strings(100) } }), []);
    // 300 × 300 = 90,000 iterations (under 10^6 iterations) but ≈ 1.5 × 10^6 in cost units.
    assert.deepEqual(run(s, { spec: { l: strings(300) } }), [
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${rule}`,
    ]);
  });

  it('charges a messageExpression to the budget: over the per-call limit or the budget, no further rule runs', () => {
    const messageExpression = "self.l.map(a, self.l.map(b, a + b).join(',')).join(';')";
    const s = withRules(
      [
        { rule: 'false', messageExpression },
        { rule: 'false', message: 'second' },
      ],
      { l: { type: 'array', items: { type: 'string' } } },
    );
    const l = Array.from({ length: 40 }, (_, i) => `${i}`.padStart(20, 'x'));
    assert.deepEqual(run(s, { spec: { l: ['a', 'b'] } }), ['spec: Invalid value: "object": aa,ab;ba,bb', 'spec: Invalid value: "object": second']);
    assert.deepEqual(run(s, { spec: { l } }, undefined, { perCallLimit: 1_000, budget: 1_000_000 }), [
      `spec: Invalid value: "object": no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(messageExpression)}`,
    ]);
    assert.deepEqual(run(s, { spec: { l } }, undefined, { perCallLimit: 1_000_000, budget: 1_000 }), [
      'spec: Invalid value: "object": messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
    ]);
  });

  it('gives rules date and date-time strings as timestamps and duration strings as durations (strfmt layouts)', () => {
    const s = withRules(
      [
        { rule: "self.since > timestamp('2020-01-01T00:00:00Z') && self.since.getFullYear() < 2030", message: 'since in the 2020s' },
        { rule: "self.day == timestamp('2021-03-04T00:00:00Z')", message: 'day' },
        { rule: "self.timeout >= duration('1m') && self.timeout <= duration('168h')", message: 'timeout between a minute and a week' },
      ],
      { since: { type: 'string', format: 'date-time' }, day: { type: 'string', format: 'date' }, timeout: { type: 'string', format: 'duration' } },
    );
    assert.deepEqual(run(s, { spec: { since: '2021-03-04T05:06:07.5+02:00', day: '2021-03-04', timeout: '1h30m' } }), []);
    assert.deepEqual(run(s, { spec: { since: '2021-03-04 05:06:07', day: '2021-03-04', timeout: '5 days' } }), []);
    assert.deepEqual(run(s, { spec: { since: '2019-12-31T23:59:59Z', day: '2021-03-05', timeout: '2w' } }), [
      'spec: Invalid value: "object": since in the 2020s',
      'spec: Invalid value: "object": day',
      'spec: Invalid value: "object": timeout between a minute and a week',
    ]);
    assert.deepEqual(run(s, { spec: { since: '2030-01-01T00:00:00Z', day: '2021-03-04', timeout: '1.5s' } }), [
      'spec: Invalid value: "object": since in the 2020s',
      'spec: Invalid value: "object": timeout between a minute and a week',
    ]);
  });

  it('has the Kubernetes libraries: quantity, IP/CIDR, lists', () => {
    const s = withRules(
      [
        { rule: 'quantity(self.memory).isLessThan(quantity("2Gi"))', message: 'memory must be below 2Gi' },
        { rule: 'cidr("10.0.0.0/8").containsIP(self.address)', message: 'address outside 10.0.0.0/8' },
        { rule: 'self.ports.isSorted()', message: 'ports must be sorted' },
      ],
      { memory: { type: 'string' }, address: { type: 'string' }, ports: { type: 'array', items: { type: 'integer' } } },
    );
    assert.deepEqual(run(s, { spec: { memory: '1536Mi', address: '10.1.2.3', ports: [1, 2] } }), []);
    assert.deepEqual(run(s, { spec: { memory: '3Gi', address: '192.168.0.1', ports: [2, 1] } }), [
      'spec: Invalid value: "object": memory must be below 2Gi',
      'spec: Invalid value: "object": address outside 10.0.0.0/8',
      'spec: Invalid value: "object": ports must be sorted',
    ]);
  });

  it("has kube's format library: validate gives kube's messages, none when valid", () => {
    const rule = withRules([{ rule: '!format.dns1123Label().validate(self.name).hasValue()' }]);
    assert.deepEqual(run(rule, { spec: { name: 'my-name' } }), []);
    assert.deepEqual(run(rule, { spec: { name: 'Bad.Name' } }), [
      'spec: Invalid value: "object": failed rule: !format.dns1123Label().validate(self.name).hasValue()',
    ]);
    const s = withRules([], {
      name: {
        type: 'string',
        maxLength: 63,
        'x-kubernetes-validations': [
          { rule: '!format.dns1123Label().validate(self).hasValue()', message: 'must be a DNS label' },
          { rule: '!format.named("labelValue").value().validate(self).hasValue()', messageExpression: 'format.labelValue().validate(self).value().join("; ")' },
        ],
      },
    });
    assert.deepEqual(run(s, { spec: { name: 'my-name' } }), []);
    assert.deepEqual(run(s, { spec: { name: 'My_Name' } }), ['spec.name: Invalid value: "string": must be a DNS label']);
    assert.deepEqual(run(s, { spec: { name: 'bad value' } }), [
      'spec.name: Invalid value: "string": must be a DNS label',
      "spec.name: Invalid value: \"string\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });

  it("has kube's regex library: find and findAll on the request's strings, Illegal regex for a bad pattern", () => {
    const s = withRules(
      [
        { rule: 'self.image.find("^[a-z0-9.-]+/") != ""', messageExpression: '"image has no registry: " + self.image' },
        { rule: 'self.image.findAll("[0-9]+").size() <= 2', message: 'too many numbers' },
      ],
      { image: { type: 'string', maxLength: 256 }, pattern: { type: 'string', maxLength: 64 } },
    );
    assert.deepEqual(run(s, { spec: { image: 'registry.example/app:1.2' } }), []);
    assert.deepEqual(run(s, { spec: { image: 'app:1.2.3' } }), [
      'spec: Invalid value: "object": image has no registry: app:1.2.3',
      'spec: Invalid value: "object": too many numbers',
    ]);
    // A client's pattern: a bad one fails the rule with kube's words.
    const p = withRules([{ rule: 'self.image.find(self.pattern) == self.image' }], {
      image: { type: 'string', maxLength: 256 },
      pattern: { type: 'string', maxLength: 64 },
    });
    assert.deepEqual(run(p, { spec: { image: 'abc', pattern: '[a-z]+' } }), []);
    assert.deepEqual(run(p, { spec: { image: 'abc', pattern: '(a' } }), [
      'spec: Invalid value: "object": Illegal regex: error parsing regexp: missing closing ): `(a` evaluating rule: self.image.find(self.pattern) == self.image',
    ]);
  });

  it("has kube's URL library: url() and its getters on the request's strings, kube's error for a non-URL", () => {
    const s = withRules([], {
      endpoint: {
        type: 'string',
        maxLength: 2048,
        'x-kubernetes-validations': [
          { rule: 'url(self).getScheme() == "https"', message: 'must be https' },
          { rule: 'url(self).getPort() == "" || int(url(self).getPort()) < 10000', messageExpression: '"port too high: " + url(self).getPort()' },
        ],
      },
    });
    assert.deepEqual(run(s, { spec: { endpoint: 'https://api.example:8443/v1?x=1' } }), []);
    assert.deepEqual(run(s, { spec: { endpoint: 'http://api.example:20000/' } }), [
      'spec.endpoint: Invalid value: "string": must be https',
      'spec.endpoint: Invalid value: "string": port too high: 20000',
    ]);
    const bad = 'URL parse error during conversion from string: parse "api.example/v1": invalid URI for request';
    assert.deepEqual(run(s, { spec: { endpoint: 'api.example/v1' } }), [
      `spec.endpoint: Invalid value: "string": ${bad} evaluating rule: must be https`,
      `spec.endpoint: Invalid value: "string": ${bad} evaluating rule: url(self).getPort() == "" || int(url(self).getPort()) < 10000`,
    ]);
  });

  it('reads declared properties under their escaped names', () => {
    const s = withRules([{ rule: 'self.foo__dash__bar == 1 && self.__namespace__ == "x"' }], { 'foo-bar': { type: 'integer' }, namespace: { type: 'string' } });
    assert.deepEqual(run(s, { spec: { 'foo-bar': 1, namespace: 'x' } }), []);
    assert.deepEqual(run(s, { spec: { 'foo-bar': 2, namespace: 'x' } }), [
      'spec: Invalid value: "object": failed rule: self.foo__dash__bar == 1 && self.__namespace__ == "x"',
    ]);
  });

  it('serves a CRD stored before its rules were checked: the bad rule is reported per object, nothing throws', () => {
    const s = withRules([{ rule: 'self.replicas >' }, { rule: 'self.replicas > 0' }], { name: { type: 'string', pattern: '(' } });
    assert.deepEqual(run(s, { spec: { replicas: 0, name: 'x' } }), [
      'spec: Invalid value: "object": rule compile error: ' +
        String(checkCrdSchema(withRules([{ rule: 'self.replicas >' }]), F)[0]!.message).replace(/^.*compilation failed: /, ''),
      'spec: Invalid value: "object": failed rule: self.replicas > 0',
    ]);
  });

  it('reports an evaluation error naming the rule', () => {
    const s = withRules([{ rule: 'self.replicas / 0 == 1' }]);
    const got = run(s, { spec: { replicas: 1 } });
    assert.equal(got.length, 1);
    assert.match(got[0]!, /^spec: Invalid value: "object": .+ evaluating rule: self\.replicas \/ 0 == 1$/);
  });
});

describe('x-kubernetes-validations type-checked at CRD write', () => {
  const typed = (rule: Record<string, unknown>) =>
    withRules([rule], {
      tags: { type: 'array', maxItems: 10, items: { type: 'string', maxLength: 10 } },
      labels: { type: 'object', maxProperties: 10, additionalProperties: { type: 'string', maxLength: 10 } },
      free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      ios: { 'x-kubernetes-int-or-string': true },
      created: { type: 'string', format: 'date-time' },
      timeout: { type: 'string', format: 'duration' },
      memory: { type: 'string', maxLength: 10 },
      address: { type: 'string', maxLength: 40 },
      items: { type: 'array', maxItems: 10, items: { type: 'object', properties: { name: { type: 'string', maxLength: 10 }, port: { type: 'integer' } } } },
    });
  const at = (field: string, rule: Record<string, unknown>, detail: string) =>
    `${F}.properties[spec].x-kubernetes-validations[0].${field}: Invalid value: ${JSON.stringify(Object.fromEntries(Object.entries(rule).sort()))}: ${detail}`;

  const ACCEPTED = [
    "self.name.startsWith('a') && size(self.name) < 10 && self.name.matches('^a') && self.name.split('-').size() == 2",
    'self.replicas > 1 && self.ratio > 0.5 && self.replicas < self.ratio', // cross-type numeric comparisons, as kube's environment
    "self.tags.all(t, t.size() < 5) && self.tags.exists_one(t, t == 'x') && self.tags.map(t, t.size()).sum() < 100",
    "self.labels.all(k, self.labels[k].startsWith('v')) && 'a' in self.labels && self.replicas in [1, 2, 3]",
    "self.free.anything.deeper > 1 && self.ios == 1 && self.ios == 'a' && type(self.ios) == string",
    "self.created > timestamp('2020-01-01T00:00:00Z') && self.created.getFullYear() > 2000 && self.timeout < duration('1h')",
    "quantity(self.memory).isLessThan(quantity('1Gi')) && cidr('10.0.0.0/8').containsIP(self.address) && ip(self.address).family() == 4",
    "self.items.exists(i, i.port > 0 && i.name.size() > 0) && self.items.map(i, i.name).exists(n, n == 'a')",
    "(self.replicas > 1 ? self.name : 'x').size() > 0 && [has(self.replicas), has(self.name)].filter(x, x).size() <= 1",
    "duration('1h') > duration('1m') && timestamp('2020-01-01T00:00:00Z').getFullYear() > 2000",
  ];
  for (const rule of ACCEPTED) it(`accepts ${rule}`, () => assert.deepEqual(lines(checkCrdSchema(typed({ rule }), F)), []));

  const REFUSED: Array<[string, Record<string, unknown>, string]> = [
    [
      'a string compared with an int',
      { rule: 'self.name > 1' },
      at(
        'rule',
        { rule: 'self.name > 1' },
        "compilation failed: ERROR: <input>:1:11: found no matching overload for '_>_' applied to '(string, int)'\n | self.name > 1\n | ..........^",
      ),
    ],
    [
      'a string method on an integer',
      { rule: "self.replicas.startsWith('a')" },
      at(
        'rule',
        { rule: "self.replicas.startsWith('a')" },
        "compilation failed: ERROR: <input>:1:25: found no matching overload for 'startsWith' applied to 'int.(string)'\n | self.replicas.startsWith('a')\n | ........................^",
      ),
    ],
    [
      'size of an integer',
      { rule: 'size(self.replicas) > 0' },
      at(
        'rule',
        { rule: 'size(self.replicas) > 0' },
        "compilation failed: ERROR: <input>:1:5: found no matching overload for 'size' applied to '(int)'\n | size(self.replicas) > 0\n | ....^",
      ),
    ],
    [
      'int and double added',
      { rule: 'self.replicas + self.ratio > 1.0' },
      at(
        'rule',
        { rule: 'self.replicas + self.ratio > 1.0' },
        "compilation failed: ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(int, double)'\n | self.replicas + self.ratio > 1.0\n | ..............^",
      ),
    ],
    [
      'an item field compared with the wrong type inside a loop',
      { rule: "self.items.all(i, i.port == 'x')" },
      at(
        'rule',
        { rule: "self.items.all(i, i.port == 'x')" },
        "compilation failed: ERROR: <input>:1:26: found no matching overload for '_==_' applied to '(int, string)'\n | self.items.all(i, i.port == 'x')\n | .........................^",
      ),
    ],
    [
      'a loop over an integer',
      { rule: 'self.replicas.all(x, x > 0)' },
      at(
        'rule',
        { rule: 'self.replicas.all(x, x > 0)' },
        "compilation failed: ERROR: <input>:1:5: expression of type 'int' cannot be the range of a comprehension (must be list, map, or dynamic)\n | self.replicas.all(x, x > 0)\n | ....^",
      ),
    ],
    [
      'a field of a string',
      { rule: 'self.name.foo == 1' },
      at(
        'rule',
        { rule: 'self.name.foo == 1' },
        "compilation failed: ERROR: <input>:1:10: type 'string' does not support field selection\n | self.name.foo == 1\n | .........^",
      ),
    ],
    [
      'a mixed list literal',
      { rule: "[1, 'a'].size() > 0" },
      at(
        'rule',
        { rule: "[1, 'a'].size() > 0" },
        "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'\n | [1, 'a'].size() > 0\n | ....^",
      ),
    ],
    [
      'join of a list of ints',
      { rule: "self.tags.map(t, t.size()).join(',') == ''" },
      at(
        'rule',
        { rule: "self.tags.map(t, t.size()).join(',') == ''" },
        "compilation failed: ERROR: <input>:1:32: found no matching overload for 'join' applied to 'list(int).(string)'\n | self.tags.map(t, t.size()).join(',') == ''\n | ...............................^",
      ),
    ],
    [
      'a quantity of an integer',
      { rule: 'quantity(self.replicas).isInteger()' },
      at(
        'rule',
        { rule: 'quantity(self.replicas).isInteger()' },
        "compilation failed: ERROR: <input>:1:9: found no matching overload for 'quantity' applied to '(int)'\n | quantity(self.replicas).isInteger()\n | ........^",
      ),
    ],
    [
      'a date-time used as a string (it is a timestamp, as in kube)',
      { rule: "self.created.startsWith('2020')" },
      at(
        'rule',
        { rule: "self.created.startsWith('2020')" },
        "compilation failed: ERROR: <input>:1:24: found no matching overload for 'startsWith' applied to 'google.protobuf.Timestamp.(string)'\n | self.created.startsWith('2020')\n | .......................^",
      ),
    ],
    ['a rule that is not a bool', { rule: 'self.replicas + 1' }, at('rule', { rule: 'self.replicas + 1' }, 'cel expression must evaluate to a bool')],
    [
      'a messageExpression that is not a string',
      { rule: 'true', messageExpression: 'self.replicas' },
      at('messageExpression', { rule: 'true', messageExpression: 'self.replicas' }, 'messageExpression must evaluate to a string'),
    ],
  ];
  for (const [name, rule, want] of REFUSED) it(`refuses ${name}`, () => assert.deepEqual(lines(checkCrdSchema(typed(rule), F)), [want]));
});
