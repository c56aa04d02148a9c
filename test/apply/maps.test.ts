// Server-side apply over maps (ConfigMap data, labels): create, conflicts,
// force, shared ownership, removal of dropped keys, updates taking ownership.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { applier, cm, entry, managers, NS } from './helpers.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});
const a = applier(() => s);
const CMS = `${NS}/configmaps`;

describe('server-side apply over maps', () => {
  it('creates a missing object with 201 and one Apply entry in kube form', async () => {
    const r = await a.apply(`${CMS}/c1`, cm('c1', { a: '1' }), 'alice');
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.data, { a: '1' });
    const mf = r.json.metadata.managedFields;
    assert.equal(mf.length, 1);
    assert.deepEqual(Object.keys(mf[0]), ['manager', 'operation', 'apiVersion', 'time', 'fieldsType', 'fieldsV1']);
    assert.deepEqual(
      { ...mf[0], time: undefined },
      { manager: 'alice', operation: 'Apply', apiVersion: 'v1', time: undefined, fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {} } } },
    );
    assert.match(mf[0].time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });
  it('accepts a YAML body and patches an existing object with 200', async () => {
    const r = await a.apply(`${CMS}/c1`, 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  a: "1"\n  b: "2"\n', 'alice');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data, { a: '1', b: '2' });
    assert.deepEqual(entry(r.json, 'alice').fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} } });
  });
  it('refuses a different value of a field another applier owns with 409 and one cause per field', async () => {
    const r = await a.apply(`${CMS}/c1`, cm('c1', { a: 'x', b: 'y', c: '3' }), 'bob');
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.reason, 'Conflict');
    assert.equal(r.json.message, 'Apply failed with 2 conflicts: conflicts with "alice":\n- .data.a\n- .data.b');
    assert.deepEqual(r.json.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.a' },
      { reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.data.b' },
    ]);
    assert.equal((await a.get(`${CMS}/c1`)).data.c, undefined, 'nothing written');
  });
  it('shares ownership when the value is equal', async () => {
    const r = await a.ok(`${CMS}/c1`, cm('c1', { a: '1', c: '3' }), 'bob');
    assert.deepEqual(entry(r, 'bob').fieldsV1, { 'f:data': { 'f:a': {}, 'f:c': {} } });
    assert.deepEqual(entry(r, 'alice').fieldsV1, { 'f:data': { 'f:a': {}, 'f:b': {} } });
  });
  it('refuses a change of a shared field by one of its owners', async () => {
    const r = await a.apply(`${CMS}/c1`, cm('c1', { a: 'changed', c: '3' }), 'bob');
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.message, 'Apply failed with 1 conflict: conflict with "alice": .data.a');
  });
  it('takes ownership with force=true', async () => {
    const r = await a.ok(`${CMS}/c1`, cm('c1', { a: 'forced', c: '3' }), 'bob', 'force=true');
    assert.equal(r.data.a, 'forced');
    assert.deepEqual(entry(r, 'alice').fieldsV1, { 'f:data': { 'f:b': {} } });
    assert.deepEqual(entry(r, 'bob').fieldsV1, { 'f:data': { 'f:a': {}, 'f:c': {} } });
  });
  it('keeps a dropped field another manager owns and removes one nobody else owns', async () => {
    // alice gives up b (only hers) and a (now bob's).
    await a.ok(`${CMS}/c1`, cm('c1', { d: '4' }), 'alice');
    const r = await a.get(`${CMS}/c1`);
    assert.deepEqual(r.data, { a: 'forced', c: '3', d: '4' });
    assert.deepEqual(managers(r), ['alice/Apply', 'bob/Apply']);
  });
  it('lets three managers own parts of one map and each drop only its own', async () => {
    await a.ok(`${CMS}/c3`, cm('c3', { x: '1' }, { labels: { l1: 'a' } }), 'm1');
    await a.ok(`${CMS}/c3`, cm('c3', { y: '2' }, { labels: { l2: 'b' } }), 'm2');
    await a.ok(`${CMS}/c3`, cm('c3', { x: '1', z: '3' }, { labels: { l1: 'a' } }), 'm3');
    await a.ok(`${CMS}/c3`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c3' } }, 'm1'); // drops x and l1, which m3 owns too
    let r = await a.get(`${CMS}/c3`);
    assert.deepEqual(r.data, { x: '1', y: '2', z: '3' });
    assert.deepEqual(r.metadata.labels, { l1: 'a', l2: 'b' });
    assert.deepEqual(managers(r), ['m2/Apply', 'm3/Apply']);
    await a.ok(`${CMS}/c3`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c3' } }, 'm3');
    r = await a.get(`${CMS}/c3`);
    assert.deepEqual(r.data, { y: '2' });
    assert.deepEqual(r.metadata.labels, { l2: 'b' });
  });
  it('lets an update take ownership without conflict, and a manager owning nothing disappears', async () => {
    await a.ok(`${CMS}/u1`, cm('u1', { a: '1' }), 'applier');
    const cur = await a.get(`${CMS}/u1`);
    const put = await s.admin.request('PUT', `${CMS}/u1?fieldManager=editor`, { ...cur, data: { a: '2' } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(managers(put.json), ['editor/Update']);
    assert.deepEqual(entry(put.json, 'editor', 'Update').fieldsV1, { 'f:data': { 'f:a': {} } });
    assert.equal(entry(put.json, 'editor', 'Update').apiVersion, 'v1');
    // The applier's claim on a is gone: applying another value now conflicts with the editor; the same value shares.
    assert.equal((await a.apply(`${CMS}/u1`, cm('u1', { a: '3' }), 'applier')).status, 409);
    const r = await a.ok(`${CMS}/u1`, cm('u1', { a: '2' }), 'applier');
    assert.deepEqual(managers(r), ['applier/Apply', 'editor/Update']);
  });
  it('names the manager of an update from the User-Agent program when fieldManager is absent', async () => {
    const c = await s.admin.request('POST', CMS, cm('ua1', { a: '1' }), { 'user-agent': 'my-tool/1.2 (linux/amd64)' });
    assert.equal(c.status, 201, c.text);
    assert.deepEqual(managers(c.json), ['my-tool/Update']);
    assert.deepEqual(entry(c.json, 'my-tool', 'Update').fieldsV1, { 'f:data': { '.': {}, 'f:a': {} } });
    const p = await s.admin.request('PATCH', `${CMS}/ua1`, { data: { b: '2' } }, { 'content-type': 'application/merge-patch+json', 'user-agent': 'other/9' });
    assert.deepEqual(managers(p.json), ['my-tool/Update', 'other/Update']);
    assert.deepEqual(entry(p.json, 'other', 'Update').fieldsV1, { 'f:data': { 'f:b': {} } });
  });
  it('reports a conflict with an updater as kube words it', async () => {
    await s.admin.request('POST', `${CMS}?fieldManager=kubectl-client-side-apply`, cm('cu', { a: '1' }));
    const r = await a.apply(`${CMS}/cu`, cm('cu', { a: '2' }), 'ssa');
    assert.equal(r.status, 409);
    assert.equal(r.json.message, 'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.a');
    assert.deepEqual(r.json.details.causes, [
      { reason: 'FieldManagerConflict', message: 'conflict with "kubectl-client-side-apply" using v1', field: '.data.a' },
    ]);
  });
  it('writes nothing on a no-op apply', async () => {
    const before = await a.get(`${CMS}/c1`);
    const r = await a.ok(`${CMS}/c1`, cm('c1', { d: '4' }), 'alice');
    assert.equal(r.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.deepEqual(r.metadata.managedFields, before.metadata.managedFields);
  });
  it('honours dryRun on create and update', async () => {
    const c = await a.apply(`${CMS}/dry`, cm('dry', { a: '1' }), 'alice', 'dryRun=All');
    assert.equal(c.status, 201, c.text);
    assert.equal((await s.admin.request('GET', `${CMS}/dry`)).status, 404);
    const u = await a.apply(`${CMS}/c1`, cm('c1', { d: '4', e: '5' }), 'alice', 'dryRun=All');
    assert.equal(u.status, 200, u.text);
    assert.equal(u.json.data.e, '5');
    assert.equal((await a.get(`${CMS}/c1`)).data.e, undefined);
  });
});
