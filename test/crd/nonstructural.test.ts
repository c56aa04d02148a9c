// A CRD stored with a non-structural schema (a legacy object: written into the
// file store directly, as data from before the structural rules would be)
// gets kube's `NonStructuralSchema` condition, stays served, may be updated
// while it keeps a non-structural schema (kube's requireStructuralSchema is
// off for it), and loses the condition once its schema is made structural.
// New CRDs with such a schema are still refused.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openStore } from '../../backends/core/store/index.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { until } from '../gc/helpers.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const NAME = 'crontabs.stable.example.com';
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
const flags = ['--storage-backend', 'file'];
const condition = (crd: Json) => (crd.status?.conditions ?? []).find((c: Json) => c.type === 'NonStructuralSchema') as Json | undefined;

describe(
  'a stored CRD whose schema is not structural',
  { skip: process.env['GATEHOUSE_TEST_STORAGE'] === 'redis' ? 'written into the file store' : false },
  () => {
    let dataDir: string;
    let s: TestServer;
    before(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-nonstructural-'));
      const first = await startTestServer({ flags, dataDir });
      assert.equal((await first.admin.request('POST', CRD_PATH, crontabCrd())).status, 201);
      await waitEstablished(first, NAME, CT);
      await first.close();
      // The legacy object: spec's type and a property's type missing, as a pre-structural CRD had them.
      const store = await openStore({ backend: 'file', dir: join(dataDir, 'store'), historyWindowMs: 60_000 });
      const key = `apiextensions.k8s.io/customresourcedefinitions/${NAME}`;
      const stored = structuredClone(await store.get(key)) as Json;
      const props = stored.spec.versions[0].schema.openAPIV3Schema.properties;
      delete props.spec.type;
      props.spec.properties.extra = { description: 'no type' };
      await store.update(key, stored as never, Number(stored.metadata.resourceVersion));
      await store.close();
      s = await startTestServer({ flags, dataDir });
    });
    after(async () => {
      await s?.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('gets NonStructuralSchema True with the violations, and is still served', async () => {
      const crd = await until('the NonStructuralSchema condition', async () => {
        const r = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
        return condition(r)?.status === 'True' ? r : undefined;
      });
      const c = condition(crd)!;
      assert.equal(c.reason, 'Violations');
      assert.equal(
        c.message,
        '[spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[extra].type: Required value: must not be empty for specified object fields, ' +
          'spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields]',
      );
      assert.match(c.lastTransitionTime, /^\d{4}-\d\d-\d\dT/);
      assert.equal(crd.status.conditions.find((x: Json) => x.type === 'Established').status, 'True');
      assert.equal((await s.admin.request('POST', CT, crontab('still', { image: 'x' }))).status, 201);
    });

    it('may be updated while it keeps a non-structural schema (kube ratchets requireStructuralSchema)', async () => {
      const crd = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      crd.metadata.labels = { touched: 'yes' };
      crd.spec.versions[0].additionalPrinterColumns[0].description = 'the schedule';
      const u = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, crd);
      assert.equal(u.status, 200, u.text);
      assert.equal(u.json.metadata.labels.touched, 'yes');
    });

    it('loses the condition once its schema is structural again', async () => {
      const crd = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      const props = crd.spec.versions[0].schema.openAPIV3Schema.properties;
      props.spec.type = 'object';
      props.spec.properties.extra.type = 'string';
      const u = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, crd);
      assert.equal(u.status, 200, u.text);
      await until('the condition removed', async () =>
        condition((await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json) === undefined ? true : undefined,
      );
      // Structural now: going back is refused, as for any structural CRD.
      const again = (await s.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      delete again.spec.versions[0].schema.openAPIV3Schema.properties.spec.type;
      const r = await s.admin.request('PUT', `${CRD_PATH}/${NAME}`, again);
      assert.equal(r.status, 422, r.text);
      assert.match(
        r.json.message,
        /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.type: Required value: must not be empty for specified object fields/,
      );
    });

    it('refuses a new CRD with a non-structural schema', async () => {
      const crd = crontabCrd({ group: 'legacy.example.com' }) as Json;
      delete crd.spec.versions[0].schema.openAPIV3Schema.properties.spec.type;
      const r = await s.admin.request('POST', CRD_PATH, crd);
      assert.equal(r.status, 422, r.text);
      assert.match(r.json.message, /properties\[spec\]\.type: Required value/);
    });
  },
);
