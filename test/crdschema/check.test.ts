// checkCrdSchema: kube's structural-schema and apiextensions rules, each case
// a schema and the causes kube-apiserver answers for it (field and message).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCrdSchema } from '../../lib/crdschema/index.js';

const F = 'spec.versions[0].schema.openAPIV3Schema';
const obj = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });
const spec = (s: Record<string, unknown>) => obj({ spec: s });
const lines = (schema: unknown) => checkCrdSchema(schema, F).map((c) => `${c.field}: ${c.message}`);

const CASES: Array<[string, unknown, string[]]> = [
  ['a structural schema', spec(obj({ replicas: { type: 'integer', minimum: 0, maximum: 10 }, image: { type: 'string' } })), []],
  ['no schema', undefined, []],
  [
    'a field without type',
    obj({ spec: { properties: { a: { type: 'string' } } } }),
    [`${F}.properties[spec].type: Required value: must not be empty for specified object fields`],
  ],
  [
    'array items without type',
    spec(obj({ l: { type: 'array', items: { description: 'x' } } })),
    [`${F}.properties[spec].properties[l].items.type: Required value: must not be empty for specified array items`],
  ],
  ['an array without items', spec(obj({ l: { type: 'array' } })), [`${F}.properties[spec].properties[l].items: Required value: must be specified`]],
  ['root type not object', { type: 'string' }, [`${F}.type: Invalid value: "string": must be object at the root`]],
  ['root without type', { properties: { a: { type: 'string' } } }, [`${F}.type: Required value: must not be empty at the root`]],
  ['int-or-string needs no type', spec(obj({ port: { 'x-kubernetes-int-or-string': true } })), []],
  ['int-or-string with its anyOf pattern', spec(obj({ port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } })), []],
  ['preserve-unknown-fields needs no type', spec(obj({ any: { 'x-kubernetes-preserve-unknown-fields': true } })), []],
  [
    'int-or-string with preserve-unknown-fields',
    spec(obj({ p: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } })),
    [`${F}.properties[spec].properties[p].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`],
  ],
  ['$ref', spec(obj({ a: { type: 'string', $ref: '#/definitions/x' } })), [`${F}.properties[spec].properties[a].$ref: Forbidden: $ref is not supported`]],
  [
    'additionalProperties with properties',
    spec({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: { type: 'string' } }),
    [`${F}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`],
  ],
  [
    'additionalProperties at the root',
    { type: 'object', additionalProperties: { type: 'string' } },
    [`${F}.additionalProperties: Forbidden: must not be used at the root`],
  ],
  [
    'items as an array',
    spec(obj({ l: { type: 'array', items: [{ type: 'string' }] } })),
    [`${F}.properties[spec].properties[l].items: Forbidden: items must be a schema object and not an array`],
  ],
  ['root metadata restricting name only', obj({ metadata: obj({ name: { type: 'string', maxLength: 10 } }) }), []],
  [
    'root metadata restricting labels',
    obj({ metadata: obj({ labels: { type: 'object' } }) }),
    [`${F}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`],
  ],
  ['root metadata of another type', obj({ metadata: { type: 'string' } }), [`${F}.properties[metadata].type: Invalid value: "string": must be object`]],
  [
    'metadata in a nested value validation',
    spec({ type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ properties: { metadata: {} } }] }),
    [
      `${F}.properties[spec].anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
      `${F}.properties[spec].properties[metadata]: Required value: because it is defined in ${F}.properties[spec].anyOf[0].properties[metadata]`,
    ],
  ],
  [
    'a type inside anyOf',
    spec({ type: 'object', anyOf: [{ type: 'string' }] }),
    [`${F}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural`],
  ],
  [
    'list-type map without keys',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', items: obj({ n: { type: 'string' } }) } })),
    [`${F}.properties[spec].properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map`],
  ],
  [
    'list-map keys that are not properties',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['x'], items: obj({ n: { type: 'string' } }) } })),
    [`${F}.properties[spec].properties[l].x-kubernetes-list-map-keys: Invalid value: ["x"]: entries must all be names of item properties`],
  ],
  [
    'a list-map key neither required nor defaulted',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['n'], items: obj({ n: { type: 'string' } }) } })),
    [
      `${F}.properties[spec].properties[l].items.properties[n].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property`,
    ],
  ],
  [
    'a good list-map',
    spec(
      obj({
        l: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['n'], items: obj({ n: { type: 'string' } }, { required: ['n'] }) },
      }),
    ),
    [],
  ],
  [
    'list-map-keys on a set',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'set', 'x-kubernetes-list-map-keys': ['n'], items: { type: 'string' } } })),
    [`${F}.properties[spec].properties[l].x-kubernetes-list-type: Invalid value: "set": must be map if x-kubernetes-list-map-keys is non-empty`],
  ],
  [
    'an unknown list type',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'bag', items: { type: 'string' } } })),
    [`${F}.properties[spec].properties[l].x-kubernetes-list-type: Unsupported value: "bag": supported values: "atomic", "map", "set"`],
  ],
  [
    'list type on a string',
    spec(obj({ l: { type: 'string', 'x-kubernetes-list-type': 'set' } })),
    [`${F}.properties[spec].properties[l].type: Invalid value: "string": must be array if x-kubernetes-list-type is specified`],
  ],
  [
    'map type on an array',
    spec(obj({ m: { type: 'array', items: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' } })),
    [`${F}.properties[spec].properties[m].type: Invalid value: "array": must be object if x-kubernetes-map-type is specified`],
  ],
  [
    'a set of granular objects',
    spec(obj({ l: { type: 'array', 'x-kubernetes-list-type': 'set', items: obj({ a: { type: 'string' } }) } })),
    [`${F}.properties[spec].properties[l].items.x-kubernetes-map-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set`],
  ],
  [
    'embedded resource of type string',
    spec(obj({ e: { type: 'string', 'x-kubernetes-embedded-resource': true } })),
    [
      `${F}.properties[spec].properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
      `${F}.properties[spec].properties[e].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`,
    ],
  ],
  [
    'embedded resource without properties',
    spec(obj({ e: { type: 'object', 'x-kubernetes-embedded-resource': true } })),
    [
      `${F}.properties[spec].properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    ],
  ],
  [
    'embedded resource with preserve-unknown-fields',
    spec(obj({ e: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } })),
    [],
  ],
  [
    'embedded resource whose kind is not a string',
    spec(obj({ e: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { kind: { type: 'integer' } } } })),
    [`${F}.properties[spec].properties[e].properties[kind].type: Invalid value: "integer": must be string`],
  ],
  ['nullable at the root', { type: 'object', nullable: true }, [`${F}.nullable: Forbidden: nullable cannot be true at the root`]],
  [
    'uniqueItems',
    spec(obj({ l: { type: 'array', items: { type: 'string' }, uniqueItems: true } })),
    [`${F}.properties[spec].properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`],
  ],
  [
    'preserve-unknown-fields false',
    spec(obj({ a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': false } })),
    [`${F}.properties[spec].properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`],
  ],
  [
    'type null',
    spec(obj({ a: { type: 'null' } })),
    [
      `${F}.properties[spec].properties[a].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
      `${F}.properties[spec].properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
    ],
  ],
  [
    'a bad pattern',
    spec(obj({ a: { type: 'string', pattern: '(' } })),
    [
      `${F}.properties[spec].properties[a].pattern: Invalid value: "(": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): \`(\``,
    ],
  ],
  [
    'a default under top-level metadata',
    obj({ metadata: { type: 'object', default: { name: 'x' } } }),
    [`${F}.properties[metadata].default: Forbidden: must not be set in top-level metadata`],
  ],
  [
    'a default that does not validate',
    spec(obj({ replicas: { type: 'integer', maximum: 10, default: 20 } })),
    [`${F}.properties[spec].properties[replicas].default: Invalid value: 20:  in body should be less than or equal to 10`],
  ],
  [
    'a default of the wrong type',
    spec(obj({ replicas: { type: 'integer', default: 'x' } })),
    [`${F}.properties[spec].properties[replicas].default: Invalid value: "string":  in body must be of type integer: "string"`],
  ],
  [
    'a default with unknown fields',
    spec(obj({ s: { type: 'object', properties: { a: { type: 'string' } }, default: { a: 'x', b: 'y' } } })),
    [`${F}.properties[spec].properties[s].default: Invalid value: {"a":"x","b":"y"}: must not have unknown fields`],
  ],
  [
    'a default of an object validated inside',
    spec(obj({ s: { type: 'object', properties: { a: { type: 'string', enum: ['x'] } }, default: { a: 'y' } } })),
    [`${F}.properties[spec].properties[s].default.a: Unsupported value: "y": supported values: "x"`],
  ],
  ['a good default', spec(obj({ s: { type: 'object', properties: { a: { type: 'string', enum: ['x'] } }, default: { a: 'x' } } })), []],
  [
    'a rule member missing',
    spec({ type: 'object', 'x-kubernetes-validations': [{ rule: ' ' }] }),
    [`${F}.properties[spec].x-kubernetes-validations[0].rule: Required value: rule is not specified`],
  ],
  [
    'a multi-line rule without message',
    spec({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true ||\nfalse' }] }),
    [`${F}.properties[spec].x-kubernetes-validations[0].message: Required value: message must be specified if rule contains line breaks`],
  ],
  [
    'an unknown reason',
    spec({ type: 'object', 'x-kubernetes-validations': [{ rule: 'true', reason: 'Nope' }] }),
    [
      `${F}.properties[spec].x-kubernetes-validations[0].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ],
  ],
  [
    'a fieldPath not in the schema',
    spec({ type: 'object', properties: { a: { type: 'string' } }, 'x-kubernetes-validations': [{ rule: 'true', fieldPath: '.b' }] }),
    [`${F}.properties[spec].x-kubernetes-validations[0].fieldPath: Invalid value: ".b": must be a valid path`],
  ],
  [
    'a wrong member type',
    spec(obj({ a: { type: 'string', maxLength: 'ten' } })),
    [`${F}.properties[spec].properties[a].maxLength: Invalid value: "ten": must be of type non-negative integer`],
  ],
  ['a schema that is not an object', 'x', [`${F}: Invalid value: "x": must be of type object`]],
];

describe('checkCrdSchema', () => {
  for (const [name, schema, want] of CASES) {
    it(name, () => assert.deepEqual(lines(schema), want));
  }
  it('names every cause with its reason', () => {
    const causes = checkCrdSchema(obj({ spec: { properties: {} } }), F);
    assert.deepEqual(causes, [
      { reason: 'FieldValueRequired', field: `${F}.properties[spec].type`, message: 'Required value: must not be empty for specified object fields' },
    ]);
  });
  it('restricts the root when the status subresource is enabled', () => {
    const ok = {
      type: 'object',
      description: 'd',
      required: ['spec'],
      properties: { spec: { type: 'object' }, status: { type: 'object' } },
      'x-kubernetes-validations': [{ rule: 'true' }],
    };
    assert.deepEqual(checkCrdSchema(ok, F, { statusSubresource: true }), []);
    const anyOf = { type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ required: ['a'] }] };
    assert.deepEqual(
      checkCrdSchema(anyOf, F).map((c) => c.field),
      [],
    );
    assert.deepEqual(
      checkCrdSchema(anyOf, F, { statusSubresource: true }).map((c) => `${c.field}: ${c.message}`),
      [
        `${F}: Invalid value: {"anyOf":[{"required":["a"]}],"properties":{"a":{"type":"string"}},"type":"object"}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`,
      ],
    );
  });

  it('reads __proto__ as an ordinary property name', () => {
    const schema = JSON.parse(`{"type":"object","properties":{"__proto__":{"properties":{}}}}`);
    assert.deepEqual(lines(schema), [`${F}.properties[__proto__].type: Required value: must not be empty for specified object fields`]);
  });
});
