// The limits kube enforces on a CRD, each at the limit (accepted) and one over
// (refused with kube's code and a message naming the field): the request body
// (3 MiB, 413), the estimated cost of one rule (StaticEstimatedCostLimit, 10⁷)
// and of a whole schema (StaticEstimatedCRDCostLimit, 10⁸), the number of
// selectable fields (8). Costs are this project's static estimate: a constant
// rule costs 1 per run, and runs once per item of the lists above it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontabCrd } from './fixtures.js';

type Json = Record<string, any>;
const BODY_LIMIT = 3 * 1024 * 1024;
const RULE_LIMIT = 10_000_000;
const CRD_LIMIT = 100_000_000;
const SCHEMA = 'spec.versions[0].schema.openAPIV3Schema';
const HINT = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';

let n = 0;
/** A CronTab CRD in a group of its own, its spec's schema given. */
function crdWith(spec: Json): Json {
  const crd = crontabCrd({ group: `limit${n++}.example.com`, shortNames: [] }) as Json;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec = spec;
  return crd;
}

/** A list of `maxItems` booleans whose items carry the rule `true` (cost 1 per item). */
const ruledList = (maxItems: number) => ({ type: 'array', maxItems, items: { type: 'boolean', 'x-kubernetes-validations': [{ rule: 'true' }] } });

describe('a CRD at each of kube limits and one over', { timeout: 300_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  it(`reads a body of exactly ${BODY_LIMIT} bytes (then refused as too large to store) and refuses one byte more with 413`, async () => {
    for (const extra of [0, 1]) {
      const crd = crdWith({ type: 'object', description: '' });
      const base = Buffer.byteLength(JSON.stringify(crd));
      crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.description = 'd'.repeat(BODY_LIMIT - base + extra);
      const body = JSON.stringify(crd);
      assert.equal(Buffer.byteLength(body), BODY_LIMIT + extra);
      const r = await s.admin.request('POST', CRD_PATH, body);
      if (extra === 0) {
        // Past the body limit, and then over etcd's 1.5 MiB request bound for a stored object: kube answers 500 there too.
        assert.equal(r.status, 500, r.text.slice(0, 300));
        assert.equal((r.json as Json).message, 'etcdserver: request is too large');
      } else {
        assert.equal(r.status, 413, r.text.slice(0, 300));
        assert.equal((r.json as Json).message, `Request entity too large: limit is ${BODY_LIMIT}`);
      }
    }
  });

  it('accepts a rule estimated at the per-rule limit and refuses one over it naming the rule', async () => {
    const at = await s.admin.request('POST', CRD_PATH, crdWith({ type: 'object', properties: { l: ruledList(RULE_LIMIT) } }));
    assert.equal(at.status, 201, at.text.slice(0, 300));
    const over = await s.admin.request('POST', CRD_PATH, crdWith({ type: 'object', properties: { l: ruledList(RULE_LIMIT + 1) } }));
    assert.equal(over.status, 422, over.text.slice(0, 300));
    assert.deepEqual((over.json as Json).details.causes, [
      {
        reason: 'FieldValueForbidden',
        field: `${SCHEMA}.properties[spec].properties[l].items.x-kubernetes-validations[0].rule`,
        message: `Forbidden: estimated rule cost exceeds budget by factor of 1.000000x ${HINT}`,
      },
    ]);
  });

  it('accepts rules estimated at the per-schema limit in total and refuses one more run naming the schema', async () => {
    const lists = (last: number): Json => {
      const properties: Json = {};
      for (let i = 0; i < CRD_LIMIT / RULE_LIMIT; i++) properties[`l${i}`] = ruledList(RULE_LIMIT);
      if (last) properties['last'] = ruledList(last);
      return { type: 'object', properties };
    };
    const at = await s.admin.request('POST', CRD_PATH, crdWith(lists(0)));
    assert.equal(at.status, 201, at.text.slice(0, 300));
    const over = await s.admin.request('POST', CRD_PATH, crdWith(lists(1)));
    assert.equal(over.status, 422, over.text.slice(0, 300));
    const causes = (over.json as Json).details.causes as Json[];
    assert.deepEqual(causes.at(-1), {
      reason: 'FieldValueForbidden',
      field: SCHEMA,
      message: `Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.000000x ${HINT}`,
    });
    // kube names the rules that cost most beside it.
    assert.equal(causes.length, 5);
    assert.ok(
      causes.slice(0, 4).every((c) => c.message === 'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'),
    );
  });

  it('accepts 8 selectable fields and refuses 9 naming the list', async () => {
    for (const count of [8, 9]) {
      const properties: Json = {};
      for (let i = 0; i < count; i++) properties[`f${i}`] = { type: 'string' };
      const crd = crdWith({ type: 'object', properties });
      crd.spec.versions[0].selectableFields = Object.keys(properties).map((k) => ({ jsonPath: `.spec.${k}` }));
      const r = await s.admin.request('POST', CRD_PATH, crd);
      if (count === 8) assert.equal(r.status, 201, r.text.slice(0, 300));
      else {
        assert.equal(r.status, 422, r.text.slice(0, 300));
        assert.deepEqual((r.json as Json).details.causes, [
          { reason: 'FieldValueTooMany', field: 'spec.versions[0].selectableFields', message: 'Too many: 9: must have at most 8 items' },
        ]);
      }
    }
  });
});
