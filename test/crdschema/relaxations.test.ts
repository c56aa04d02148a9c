// checkCrdSchema's options for the update of a stored CRD (kube's
// validationOptions from the old object): unchangedSchema drops only the
// per-expression cost limit (the per-schema total still applies),
// allowUnprunedDefaults keeps defaults with pruned fields (still validated);
// schemaHasUnprunedDefaults tells whether a stored schema has one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkCrdSchema, schemaHasUnprunedDefaults } from '../../lib/crdschema/index.js';

const F = 'spec.versions[0].schema.openAPIV3Schema';
const withSpec = (spec: Record<string, unknown>) => ({ type: 'object', properties: { spec: { type: 'object', ...spec } } });
const lines = (causes: ReturnType<typeof checkCrdSchema>) => causes.map((c) => `${c.field}: ${c.message}`);

describe('checkCrdSchema: what an update of a stored CRD relaxes', () => {
  const over = withSpec({
    properties: { tags: { type: 'array', maxItems: 20, items: { type: 'string' } } },
    'x-kubernetes-validations': [{ rule: 'self.tags.all(t, t.matches("^[a-z]+$"))' }],
  });

  it('keeps a rule over the per-expression cost limit when the schema is unchanged', () => {
    const fresh = lines(checkCrdSchema(over, F));
    assert.ok(
      fresh.some((l) => /rule: Forbidden: estimated rule cost exceeds budget/.test(l)),
      fresh.join('\n'),
    );
    assert.deepEqual(lines(checkCrdSchema(over, F, { unchangedSchema: true })), []);
  });

  it('still enforces the per-schema total', () => {
    const huge = withSpec({
      properties: { l: { type: 'array', items: { type: 'string' } } },
      'x-kubernetes-validations': [{ rule: 'self.l.all(a, self.l.all(b, a == b || a != b))' }],
    });
    const got = lines(checkCrdSchema(huge, F, { unchangedSchema: true }));
    assert.ok(
      got.some((l) => l.includes('contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema')),
      got.join('\n'),
    );
    assert.ok(
      got.some((l) =>
        /^spec\.versions\[0\]\.schema\.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget/.test(
          l,
        ),
      ),
      got.join('\n'),
    );
    assert.ok(!got.some((l) => /Forbidden: estimated rule cost exceeds budget/.test(l)), got.join('\n'));
  });

  const unpruned = withSpec({ properties: { o: { type: 'object', default: { a: 'x', junk: 1 }, properties: { a: { type: 'string', maxLength: 3 } } } } });

  it('keeps a default with pruned fields when the stored CRD had one, still validating it', () => {
    assert.deepEqual(lines(checkCrdSchema(unpruned, F)), [
      `${F}.properties[spec].properties[o].default: Invalid value: {"a":"x","junk":1}: must not have unknown fields`,
    ]);
    assert.deepEqual(lines(checkCrdSchema(unpruned, F, { allowUnprunedDefaults: true })), []);
    const invalid = withSpec({ properties: { o: { type: 'object', default: { a: 'xxxx', junk: 1 }, properties: { a: { type: 'string', maxLength: 3 } } } } });
    assert.equal(lines(checkCrdSchema(invalid, F, { allowUnprunedDefaults: true })).length, 1);
  });

  it('tells whether a stored schema has a default its schema prunes', () => {
    assert.equal(schemaHasUnprunedDefaults(unpruned), true);
    assert.equal(
      schemaHasUnprunedDefaults(withSpec({ properties: { o: { type: 'object', default: { a: 'x' }, properties: { a: { type: 'string' } } } } })),
      false,
    );
    assert.equal(
      schemaHasUnprunedDefaults(withSpec({ properties: { o: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, default: { any: 1 } } } })),
      false,
    );
    assert.equal(schemaHasUnprunedDefaults(undefined), false);
  });
});
