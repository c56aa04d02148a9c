// Unknown members of a CRD's openAPIV3Schema at every depth, as kube decodes
// them into JSONSchemaProps: dropped wherever they are. Where the schema is a
// typed JSONSchemaProps (properties, allOf/anyOf/oneOf, not) Strict and Warn
// report them with their full path; inside items, additionalProperties,
// additionalItems and dependencies (JSONSchemaPropsOrArray/OrBool/
// OrStringArray, which kube decodes with their own non-strict UnmarshalJSON and
// publishes as untyped) they are dropped without a word, as kube drops them.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH } from './fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const APPLY = { 'content-type': 'application/apply-patch+yaml' };

function crd(plural: string, spec: Json): Json {
  const kind = `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.prune.example.com` },
    spec: {
      group: 'prune.example.com',
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec } } } }],
    },
  };
}

/** A spec schema with an unknown member (`bogus`) only inside untyped positions, at several depths. */
const untypedOnly = (): Json => ({
  type: 'object',
  properties: {
    list: { type: 'array', items: { type: 'string', bogus: 1, Type: 'Integer' } },
    map: { type: 'object', additionalProperties: { type: 'string', bogus: { deep: true } } },
    nested: { type: 'array', items: { type: 'object', properties: { x: { type: 'string', bogus: 1 } }, bogus: 3 } },
    grid: {
      type: 'array',
      items: { type: 'array', items: { type: 'object', additionalProperties: { type: 'integer', bogus: 4 }, 'x-kubernetes-map-type': 'granular' } },
    },
    composed: { type: 'array', items: { type: 'string', anyOf: [{ maxLength: 3, bogus: 5 }], not: { pattern: '^a', bogus: 6 } } },
    free: { type: 'object', additionalProperties: true },
  },
});

/** The same schema as kube stores it. */
const untypedPruned = (): Json => ({
  type: 'object',
  properties: {
    list: { type: 'array', items: { type: 'string' } },
    map: { type: 'object', additionalProperties: { type: 'string' } },
    nested: { type: 'array', items: { type: 'object', properties: { x: { type: 'string' } } } },
    grid: {
      type: 'array',
      items: { type: 'array', items: { type: 'object', additionalProperties: { type: 'integer' }, 'x-kubernetes-map-type': 'granular' } },
    },
    composed: { type: 'array', items: { type: 'string', anyOf: [{ maxLength: 3 }], not: { pattern: '^a' } } },
    free: { type: 'object', additionalProperties: true },
  },
});

const specOf = (o: Json) => o.spec.versions[0].schema.openAPIV3Schema.properties.spec;

describe("unknown fields inside a CRD's schema", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('drops them inside items and additionalProperties at every depth, silently even under Strict', async () => {
    for (const level of ['Ignore', 'Warn', 'Strict']) {
      const plural = `untyped${level.toLowerCase()}s`;
      const r = await s.admin.request('POST', `${CRD_PATH}?fieldValidation=${level}`, crd(plural, untypedOnly()));
      assert.equal(r.status, 201, `${level}: ${r.text}`);
      assert.deepEqual(specOf(r.json), untypedPruned(), level);
      assert.equal(r.headers['warning'], undefined, `${level}: kube decodes these positions without reporting`);
      const g = await s.admin.request('GET', `${CRD_PATH}/${plural}.prune.example.com`);
      assert.deepEqual(specOf(g.json), untypedPruned(), `${level}: stored pruned`);
    }
  });

  it('reports them with their full path where the schema is typed, and drops them under Ignore', async () => {
    const typed = {
      type: 'object',
      bogus: 1,
      properties: { a: { type: 'string', bogus: 2, anyOf: [{ maxLength: 2, bogus: 3 }], not: { minLength: 9, bogus: 4 } } },
    };
    const strict = await s.admin.request('POST', `${CRD_PATH}?fieldValidation=Strict`, crd('typedstricts', typed));
    assert.equal(strict.status, 400, strict.text);
    for (const path of [
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.bogus',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.bogus',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.anyOf[0].bogus',
      'spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.a.not.bogus',
    ])
      assert.ok(strict.json.message.includes(`unknown field "${path}"`), `${path} in ${strict.json.message}`);
    const warned = await s.admin.request('POST', `${CRD_PATH}?fieldValidation=Warn&dryRun=All`, crd('typedwarns', typed));
    assert.equal(warned.status, 201, warned.text);
    assert.ok(
      String(warned.headers['warning']).includes('unknown field \\"spec.versions[0].schema.openAPIV3Schema.properties.spec.bogus\\"'),
      String(warned.headers['warning']),
    );
    const ignored = await s.admin.request('POST', `${CRD_PATH}?fieldValidation=Ignore`, crd('typedignores', typed));
    assert.equal(ignored.status, 201, ignored.text);
    assert.deepEqual(specOf(ignored.json), { type: 'object', properties: { a: { type: 'string', anyOf: [{ maxLength: 2 }], not: { minLength: 9 } } } });
  });

  it('treats a __proto__ key as data', async () => {
    const spec = JSON.parse(
      '{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","__proto__":{"x":1},"properties":{"__proto__":{"type":"string","bogus":1}}}}}}',
    );
    const r = await s.admin.request('POST', CRD_PATH, crd('protos', spec));
    assert.equal(r.status, 201, r.text);
    const items = specOf(r.json).properties.l.items;
    assert.deepEqual(Object.keys(items).sort(), ['properties', 'type']);
    assert.deepEqual(Object.getOwnPropertyDescriptor(items.properties, '__proto__')?.value, { type: 'string' });
    assert.equal(({} as Json).x, undefined);
  });

  it('prunes them on update, merge patch and server-side apply too', async () => {
    const base = crd('updateds', { type: 'object', properties: { list: { type: 'array', items: { type: 'string' } } } });
    const c = await s.admin.request('POST', CRD_PATH, base);
    assert.equal(c.status, 201, c.text);
    const path = `${CRD_PATH}/updateds.prune.example.com`;
    const cur = (await s.admin.request('GET', path)).json as Json;
    cur.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.list.items.bogus = 1;
    const u = await s.admin.request('PUT', path, cur);
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(specOf(u.json).properties.list.items, { type: 'string' });
    const versions = structuredClone(cur.spec.versions);
    versions[0].schema.openAPIV3Schema.properties.spec.properties.list.items = { type: 'string', maxLength: 5, bogus: 2 };
    const p = await s.admin.request('PATCH', path, { spec: { versions } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(specOf(p.json).properties.list.items, { type: 'string', maxLength: 5 });
    const applied = crd('applieds', { type: 'object', properties: { m: { type: 'object', additionalProperties: { type: 'string', bogus: 3 } } } });
    const a = await s.admin.request('PATCH', `${CRD_PATH}/applieds.prune.example.com?fieldManager=t`, JSON.stringify(applied), APPLY);
    assert.equal(a.status, 201, a.text);
    assert.deepEqual(specOf(a.json).properties.m.additionalProperties, { type: 'string' });
  });
});
