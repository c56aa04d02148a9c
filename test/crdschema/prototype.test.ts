// Prototype keys are data: a CRD schema and a custom resource
// holding `__proto__`, `constructor` and `prototype` go through check,
// compile, pruning, defaults, value checks and rules without touching a
// prototype, and are read as the properties they are.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCrdSchema, compileCrdSchema } from '../../lib/crdschema/index.js';
import { pruneAndValidate } from '../../lib/validation/structural.js';
import type { KObject } from '../../lib/api/meta.js';

const REF = { group: 'g.example.com', version: 'v1', kind: 'Thing', listKind: 'ThingList', plural: 'things' };

const SCHEMA = JSON.parse(`{
  "type": "object",
  "properties": {
    "spec": {
      "type": "object",
      "x-kubernetes-validations": [{"rule": "!has(self.constructor) || self.constructor != 'bad'", "message": "constructor is bad"}],
      "properties": {
        "__proto__": {"type": "object", "default": {"polluted": "yes"}, "properties": {"polluted": {"type": "string", "enum": ["yes", "no"]}}},
        "constructor": {"type": "string", "maxLength": 5},
        "prototype": {"type": "object", "additionalProperties": {"type": "string"}}
      }
    },
    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
  }
}`);

describe('prototype keys in CRD schemas and custom resources', () => {
  it('are accepted as property names and compiled', () => {
    assert.deepEqual(checkCrdSchema(SCHEMA, 'spec.versions[0].schema.openAPIV3Schema'), []);
  });

  it('go through pruning, defaults, value checks and rules as data', () => {
    const c = compileCrdSchema(SCHEMA, REF);
    const obj = JSON.parse(`{"spec": {"constructor": "bad", "prototype": {"__proto__": "x", "constructor": "y"}, "toString": 1},
      "free": {"__proto__": {"polluted": true}}}`);
    const { unknown } = pruneAndValidate(obj, c.node!);
    assert.deepEqual(unknown, ['spec.toString']);
    c.defaults(obj as KObject);
    assert.deepEqual(Object.getOwnPropertyDescriptor(obj.spec, '__proto__')?.value, { polluted: 'yes' });
    assert.equal(Object.getPrototypeOf(obj.spec), Object.prototype);
    assert.deepEqual(
      c.validate(obj as KObject, undefined).map((x) => `${x.field}: ${x.message}`),
      ['spec: Invalid value: "object": constructor is bad'],
    );
    const bad = JSON.parse(`{"spec": {"__proto__": {"polluted": "maybe"}, "constructor": "toolong"}}`);
    assert.deepEqual(
      c.validate(bad as KObject, undefined).map((x) => `${x.field}: ${x.message}`),
      ['spec.__proto__.polluted: Unsupported value: "maybe": supported values: "yes", "no"', 'spec.constructor: Too long: may not be more than 5 bytes'],
    );
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
    assert.equal(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted'), false);
  });

  it('an inherited name is not a present property', () => {
    const c = compileCrdSchema(SCHEMA, REF);
    // {} inherits constructor (a function) and __proto__ (an accessor): neither is checked as a value.
    assert.deepEqual(c.validate({ spec: {} } as unknown as KObject, undefined), []);
  });
});
