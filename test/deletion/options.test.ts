// DeleteOptions over HTTPS: body or query, preconditions, the policy
// fields' validation, per-type defaults, pods' grace period, dryRun, and
// deletecollection with selectors and options.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CM, configMap, gone, until } from '../gc/helpers.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const PODS = '/api/v1/namespaces/default/pods';
const pod = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'busybox' }], ...spec },
});

describe('DeleteOptions', () => {
  it('refuses a stale uid precondition with 409 and kube message', async () => {
    const a = await configMap(s.admin, 'pre-uid');
    const r = await s.admin.request('DELETE', a.path, { preconditions: { uid: 'other' } });
    assert.equal(r.status, 409);
    assert.equal(r.json.reason, 'Conflict');
    assert.match(r.json.message, new RegExp(`Precondition failed: UID in precondition: other, UID in object meta: ${a.uid}`));
  });

  it('refuses a stale resourceVersion precondition with 409', async () => {
    const a = await configMap(s.admin, 'pre-rv');
    const r = await s.admin.request('DELETE', a.path, { preconditions: { resourceVersion: '1' } });
    assert.equal(r.status, 409);
    assert.match(r.json.message, /Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in meta: \d+/);
  });

  it('refuses propagationPolicy together with orphanDependents with 422', async () => {
    const a = await configMap(s.admin, 'both');
    const r = await s.admin.request('DELETE', a.path, { propagationPolicy: 'Orphan', orphanDependents: true });
    assert.equal(r.status, 422);
    assert.equal(r.json.details.kind, 'DeleteOptions');
    assert.match(r.json.message, /orphanDependents and deletionPropagation cannot be both set/);
  });

  it('refuses an unknown propagationPolicy with 422', async () => {
    const a = await configMap(s.admin, 'bad-policy');
    const r = await s.admin.request('DELETE', `${a.path}?propagationPolicy=Later`);
    assert.equal(r.status, 422);
    assert.match(r.json.message, /Unsupported value: "Later"/);
  });

  it('reads options from the body when there is one, else from the query, as kube-apiserver does', async () => {
    const a = await configMap(s.admin, 'src-a');
    const r = await s.admin.request('DELETE', `${a.path}?dryRun=All`, { propagationPolicy: 'Orphan' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.metadata.finalizers, ['orphan'], 'the body is used; the query dryRun is not');
    const b = await configMap(s.admin, 'src-b');
    const q = await s.admin.request('DELETE', `${b.path}?dryRun=All&propagationPolicy=Orphan`);
    assert.deepEqual(q.json.metadata.finalizers, ['orphan']);
    assert.equal((await s.admin.request('GET', b.path)).json.metadata.deletionTimestamp, undefined, 'dryRun wrote nothing');
  });

  it('answers 202 when orphanDependents=false leaves the object pending', async () => {
    const a = await configMap(s.admin, 'accepted', []);
    await s.admin.request('PATCH', a.path, { metadata: { finalizers: ['example.com/x'] } }, { 'content-type': 'application/merge-patch+json' });
    const r = await s.admin.request('DELETE', a.path, { orphanDependents: false });
    assert.equal(r.status, 202, r.text);
  });

  it('deletes in the background by default (batch/v1 Jobs would orphan; batch is not served yet)', async () => {
    const a = await configMap(s.admin, 'defaults-cm');
    const c = await s.admin.request('DELETE', `${a.path}?dryRun=All`);
    assert.equal(c.json.status, 'Success');
    assert.equal((await s.admin.request('GET', a.path)).status, 200);
  });
});

describe('pod grace periods', () => {
  it('deletes a pod no node runs at once', async () => {
    assert.equal((await s.admin.request('POST', PODS, pod('unscheduled'))).status, 201);
    const r = await s.admin.request('DELETE', `${PODS}/unscheduled`);
    assert.equal(r.status, 200);
    assert.equal((await s.admin.request('GET', `${PODS}/unscheduled`)).status, 404);
  });

  it('keeps a bound pod with deletionTimestamp and deletionGracePeriodSeconds until a forced delete', async () => {
    assert.equal((await s.admin.request('POST', PODS, pod('bound', { nodeName: 'node-1', terminationGracePeriodSeconds: 30 }))).status, 201);
    const sent = Date.now();
    const r = await s.admin.request('DELETE', `${PODS}/bound`);
    assert.equal(r.status, 200);
    assert.equal(r.json.metadata.deletionGracePeriodSeconds, 30);
    // The delete's time (to the second) plus 30 s, bracketed by the clock around the request however long it took.
    const ts = Date.parse(r.json.metadata.deletionTimestamp);
    assert.ok(ts > sent + 29_000 && ts <= Date.now() + 30_000, 'the deletionTimestamp is the end of the grace period');
    const shorter = await s.admin.request('DELETE', `${PODS}/bound`, { gracePeriodSeconds: 10 });
    assert.equal(shorter.json.metadata.deletionGracePeriodSeconds, 10);
    const longer = await s.admin.request('DELETE', `${PODS}/bound`, { gracePeriodSeconds: 60 });
    assert.equal(longer.json.metadata.deletionGracePeriodSeconds, 10, 'a grace period is only shortened');
    const force = await s.admin.request('DELETE', `${PODS}/bound`, { gracePeriodSeconds: 0 });
    assert.equal(force.status, 200);
    assert.equal((await s.admin.request('GET', `${PODS}/bound`)).status, 404);
  });
});

describe('deletecollection', () => {
  it('deletes the selected objects with the given options', async () => {
    const owner = await configMap(s.admin, 'dc-owner');
    for (const n of ['dc-1', 'dc-2']) {
      await s.admin.request('POST', CM(), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n, labels: { set: 'dc' } } });
      await configMap(s.admin, `${n}-child`, [{ name: n, uid: (await s.admin.request('GET', `${CM()}/${n}`)).json.metadata.uid, path: '' }]);
    }
    const dry = await s.admin.request('DELETE', `${CM()}?labelSelector=set%3Ddc&dryRun=All`);
    assert.equal(dry.json.items.length, 2);
    assert.equal((await s.admin.request('GET', `${CM()}/dc-1`)).status, 200);
    const r = await s.admin.request('DELETE', `${CM()}?labelSelector=set%3Ddc&propagationPolicy=Orphan`);
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.items.map((i: { metadata: { finalizers: string[] } }) => i.metadata.finalizers),
      [['orphan'], ['orphan']],
    );
    await until('both to go', async () => (await gone(s.admin, `${CM()}/dc-1`)) && (await gone(s.admin, `${CM()}/dc-2`)));
    const child = await s.admin.request('GET', `${CM()}/dc-1-child`);
    assert.equal(child.status, 200);
    assert.equal(child.json.metadata.ownerReferences, undefined);
    assert.equal((await s.admin.request('GET', owner.path)).status, 200, 'unselected objects stay');
  });
});
