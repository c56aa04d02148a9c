// What kube relaxes on the update of a CRD stored before a rule tightened
// (ValidateCustomResourceDefinitionUpdate's options, decided from the old
// object): a version whose schema is unchanged keeps a rule over the
// per-expression estimated cost limit, and a CRD whose stored schemas hold a
// default with fields the schema prunes may keep such defaults. The legacy
// object is written into the file store directly, as data accepted by an older
// server would be.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../backends/core/store/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, waitEstablished } from './fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const GROUP = 'legacy.example.com';
const NAME = `gizmos.${GROUP}`;
const GIZMOS = `/apis/${GROUP}/v1/namespaces/default/gizmos`;
const flags = ['--storage-backend', 'file'];
const EXPENSIVE = 'self.tags.all(t, t.matches("^[a-z0-9./-]+$"))';
const COST = /estimated rule cost exceeds budget by factor of/;
const UNPRUNED = /default: Invalid value: .*must not have unknown fields/;

function gizmoCrd(name = 'gizmos', group = GROUP): Json {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: name, singular: name.slice(0, -1), kind: 'Gizmo' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    tags: { type: 'array', maxItems: 20, items: { type: 'string' } },
                    opts: { type: 'object', properties: { a: { type: 'string' } } },
                  },
                },
              },
            },
          },
        },
      ],
    },
  };
}

/** What an older server accepted: an expensive rule and a default with a field its schema prunes. */
function makeLegacy(spec: Json): void {
  const s = spec.versions[0].schema.openAPIV3Schema.properties.spec;
  s['x-kubernetes-validations'] = [{ rule: EXPENSIVE }];
  s.properties.opts.default = { a: 'x', junk: 1 };
}

const messages = (r: { json: Json }) => (r.json.details?.causes ?? []).map((c: Json) => `${c.field}: ${c.message}`).join('\n');

describe(
  'a stored CRD accepted under looser rules',
  { skip: process.env['GATEHOUSE_TEST_STORAGE'] === 'redis' ? 'written into the file store' : false },
  () => {
    let dataDir: string;
    let s: TestServer;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-legacy-crd-'));
      const first = await startTestServer({ flags, dataDir });
      assert.equal((await first.admin.request('POST', CRD_PATH, gizmoCrd())).status, 201);
      await waitEstablished(first, NAME, GIZMOS);
      await first.close();
      const store = await openStore({ backend: 'file', dir: join(dataDir, 'store'), historyWindowMs: 60_000 });
      const key = `apiextensions.k8s.io/customresourcedefinitions/${NAME}`;
      const stored = structuredClone(await store.get(key)) as Json;
      makeLegacy(stored.spec);
      await store.update(key, stored as never, Number(stored.metadata.resourceVersion));
      await store.close();
      s = await startTestServer({ flags, dataDir });
      await waitEstablished(s, NAME, GIZMOS);
    });
    after(async () => {
      await s?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('refuses both in a new CRD', async () => {
      const fresh = gizmoCrd('widgets', 'fresh.example.com');
      makeLegacy(fresh.spec);
      const r = await s.admin.request('POST', CRD_PATH, fresh);
      assert.equal(r.status, 422, r.text);
      assert.match(messages(r), UNPRUNED);
      fresh.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.opts.default = { a: 'x' };
      const cost = await s.admin.request('POST', CRD_PATH, fresh);
      assert.equal(cost.status, 422, cost.text);
      assert.match(messages(cost), COST, 'the rule is over the per-expression limit');
    });

    it('accepts an update that leaves the schemas as they are', async () => {
      const cur = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      const u = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, { ...cur, metadata: { ...cur.metadata, labels: { touched: 'yes' } } });
      assert.equal(u.status, 200, u.text);
      assert.equal(u.json.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'][0].rule, EXPENSIVE);
      assert.deepEqual(u.json.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.opts.default, { a: 'x', junk: 1 });
      // The kept default is applied as stored (pruned from the object like any unknown field).
      const g = await s.admin.request('POST', GIZMOS, { apiVersion: `${GROUP}/v1`, kind: 'Gizmo', metadata: { name: 'g' }, spec: { tags: ['ok'] } });
      assert.equal(g.status, 201, g.text);
      assert.deepEqual(g.json.spec.opts, { a: 'x' });
    });

    it("checks the cost again once the version's schema changes, while unpruned defaults stay allowed for the CRD", async () => {
      const cur = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      const changed = structuredClone(cur);
      changed.spec.versions[0].schema.openAPIV3Schema.properties.spec.description = 'now described';
      const r = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, changed);
      assert.equal(r.status, 422, r.text);
      assert.match(messages(r), COST);
      assert.doesNotMatch(messages(r), UNPRUNED, 'the stored CRD has an unpruned default: requirePrunedDefaults is off');
    });

    it('tightens again once the stored CRD no longer has them', async () => {
      const cur = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      const clean = structuredClone(cur);
      const spec = clean.spec.versions[0].schema.openAPIV3Schema.properties.spec;
      delete spec['x-kubernetes-validations'];
      spec.properties.opts.default = { a: 'x' };
      const u = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, clean);
      assert.equal(u.status, 200, u.text);
      const again = structuredClone(u.json) as Json;
      again.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.opts.default = { a: 'x', junk: 2 };
      const r = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, again);
      assert.equal(r.status, 422, r.text);
      assert.match(messages(r), UNPRUNED);
    });
  },
);
