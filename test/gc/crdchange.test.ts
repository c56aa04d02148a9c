// A CRD change costs the garbage collector its own type only: with many CRDs
// installed, installing one more lists that type once and deleting it lists
// nothing (the other types keep their watches and graph), counted by
// `gcWork`; the server runs in this process. The collector still follows
// owners into the new type, and through the types that were already served.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gcWork } from '../../backends/core/controllers/garbagecollector.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from '../crd/fixtures.js';
import { CM, configMap, gone, until } from './helpers.js';

type Json = Record<string, any>;
const INSTALLED = 40;
const group = (i: number) => `g${i}.example.com`;
const collection = (i: number) => `/apis/${group(i)}/v1/namespaces/default/things${i}`;
const crdName = (i: number) => `things${i}.${group(i)}`;

function numbered(i: number): Json {
  return crontabCrd({ group: group(i), plural: `things${i}`, kind: `Thing${i}`, shortNames: [] }) as Json;
}

/** Creates a custom resource of CRD i owned by a ConfigMap, deletes the ConfigMap, and waits for the collector. */
async function collectedWithOwner(s: TestServer, i: number, name: string): Promise<void> {
  const owner = await configMap(s.admin, `${name}-owner`);
  const dep = await s.admin.request('POST', collection(i), {
    ...crontab(name, { image: 'x' }, group(i), `Thing${i}`),
    metadata: { name, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: owner.name, uid: owner.uid }] },
  });
  assert.equal(dep.status, 201, dep.text);
  assert.equal((await s.admin.request('DELETE', `${CM()}/${owner.name}`)).status, 200);
  await until(`${name} collected`, () => gone(s.admin, `${collection(i)}/${name}`));
}

describe(`a CRD change with ${INSTALLED} CRDs installed`, { timeout: 300_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    for (let i = 0; i < INSTALLED; i += 20) {
      const batch = Array.from({ length: Math.min(20, INSTALLED - i) }, (_, k) => numbered(i + k));
      const answers = await Promise.all(batch.map((c) => s.admin.request('POST', CRD_PATH, c)));
      for (const r of answers) assert.equal(r.status, 201, r.text);
    }
    for (const i of [0, INSTALLED - 1]) await waitEstablished(s, crdName(i), collection(i));
  });
  after(async () => {
    await s?.close();
  });

  it('lists the added type once on install and nothing on delete', async () => {
    const i = INSTALLED;
    const before = gcWork.listed;
    assert.equal((await s.admin.request('POST', CRD_PATH, numbered(i))).status, 201);
    await waitEstablished(s, crdName(i), collection(i));
    // The type is watched once listed: an owner deleted after that is followed into it.
    await collectedWithOwner(s, i, 'new-type-dep');
    const onInstall = gcWork.listed - before;
    assert.equal(onInstall, 1, `LISTs by the garbage collector on install: ${onInstall}`);
    assert.equal((await s.admin.request('DELETE', `${CRD_PATH}/${crdName(i)}`)).status, 200);
    await until(`${crdName(i)} gone`, async () => ((await s.admin.request('GET', `${CRD_PATH}/${crdName(i)}`)).status === 404 ? true : undefined));
    await until(`${collection(i)} no longer served`, () => gone(s.admin, collection(i)));
    const onDelete = gcWork.listed - before - onInstall;
    assert.equal(onDelete, 0, `LISTs by the garbage collector on delete: ${onDelete}`);
  });

  it('keeps following owners through the types served before the change', async () => {
    await collectedWithOwner(s, 1, 'old-type-dep');
    // And a ConfigMap owned by a custom resource of an unchanged type.
    const owner = await s.admin.request('POST', collection(2), crontab('cr-owner', { image: 'x' }, group(2), 'Thing2'));
    assert.equal(owner.status, 201, owner.text);
    const cm = await s.admin.request('POST', CM(), {
      metadata: { name: 'owned-by-cr', ownerReferences: [{ apiVersion: `${group(2)}/v1`, kind: 'Thing2', name: 'cr-owner', uid: owner.json.metadata.uid }] },
    });
    assert.equal(cm.status, 201, cm.text);
    assert.equal((await s.admin.request('DELETE', `${collection(2)}/cr-owner`)).status, 200);
    await until('the ConfigMap owned by the custom resource collected', () => gone(s.admin, `${CM()}/owned-by-cr`));
  });
});
