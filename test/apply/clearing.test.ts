// Clearing managedFields exactly as the spec says, and the bad input of an
// apply: each a clear 4xx with nothing written.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { APPLY, applier, cm, entry, managers, NS } from './helpers.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});
const a = applier(() => s);
const CMS = `${NS}/configmaps`;
const MERGE = { 'content-type': 'application/merge-patch+json' };
const JSONP = { 'content-type': 'application/json-patch+json' };

describe('clearing managedFields', () => {
  it('resets with one empty entry by merge patch, then gives the writer what the same request changed', async () => {
    await a.ok(`${CMS}/r1`, cm('r1', { a: '1' }), 'alice');
    await a.ok(`${CMS}/r1`, cm('r1', { b: '2' }), 'bob');
    const r = await s.admin.request('PATCH', `${CMS}/r1?fieldManager=resetter`, { metadata: { managedFields: [{}] }, data: { c: '3' } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(managers(r.json), ['resetter/Update']);
    assert.deepEqual(entry(r.json, 'resetter', 'Update').fieldsV1, { 'f:data': { 'f:c': {} } });
    // Nobody owns a any more: another applier changes it without conflict.
    assert.equal((await a.apply(`${CMS}/r1`, cm('r1', { a: 'new' }), 'carol')).status, 200);
  });
  it('removes managedFields altogether by a JSON patch replace with one empty entry', async () => {
    await a.ok(`${CMS}/r2`, cm('r2', { a: '1' }), 'alice');
    const r = await s.admin.request('PATCH', `${CMS}/r2`, [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }], JSONP);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.metadata.managedFields, undefined);
    assert.equal((await a.get(`${CMS}/r2`)).metadata.managedFields, undefined);
  });
  it('does not reset with an empty list', async () => {
    await a.ok(`${CMS}/r3`, cm('r3', { a: '1' }), 'alice');
    const before = await a.get(`${CMS}/r3`);
    const r = await s.admin.request('PATCH', `${CMS}/r3`, { metadata: { managedFields: [] } }, MERGE);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.metadata.managedFields, before.metadata.managedFields);
    assert.equal(r.json.metadata.resourceVersion, before.metadata.resourceVersion);
  });
  it('assigns the fields of an object nobody owns to before-first-apply on the next apply', async () => {
    const r = await a.ok(`${CMS}/r2`, cm('r2', { b: '2' }), 'alice');
    assert.deepEqual(managers(r), ['alice/Apply', 'before-first-apply/Update']);
    assert.deepEqual(r.data, { a: '1', b: '2' });
  });
});

describe('bad apply input', () => {
  async function refused(body: unknown, manager: string | undefined, status: number, message: RegExp, extra = '') {
    const r = await a.apply(`${CMS}/bad`, body, manager, extra);
    assert.equal(r.status, status, r.text);
    assert.match(r.json.message, message);
    assert.equal((await s.admin.request('GET', `${CMS}/bad`)).status, 404, 'nothing written');
    return r;
  }
  it('requires fieldManager (422 naming the field)', async () => {
    const r = await refused(cm('bad', { a: '1' }), undefined, 422, /fieldManager: Required value: is required for apply patch/);
    assert.equal(r.json.details.causes[0].field, 'fieldManager');
  });
  it('refuses managedFields in the body with 400', async () => {
    await refused(
      { ...cm('bad', {}), metadata: { name: 'bad', managedFields: [{ manager: 'x', operation: 'Apply', fieldsType: 'FieldsV1', fieldsV1: {} }] } },
      'm',
      400,
      /managedFields must be nil/,
    );
  });
  it('refuses a body without apiVersion, kind or metadata with 400', async () => {
    await refused({ kind: 'ConfigMap', metadata: { name: 'bad' } }, 'm', 400, /apiVersion must be set/);
    await refused({ apiVersion: 'v1', metadata: { name: 'bad' } }, 'm', 400, /kind must be set/);
    await refused({ apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } }, 'm', 400, /metadata must be set/);
  });
  it('refuses invalid YAML and a non-object body with 400', async () => {
    await refused('apiVersion: v1\nkind: [unclosed\n', 'm', 400, /not valid YAML/);
    await refused('- a\n- b\n', 'm', 400, /must be an object/);
  });
  it('refuses another kind or a name other than the path', async () => {
    await refused({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'bad' } }, 'm', 400, /kind/);
    await refused(cm('other', { a: '1' }), 'm', 400, /does not match the name on the URL/);
  });
  it('refuses wrong field types', async () => {
    await refused(cm('bad', { a: 1 } as unknown as Record<string, string>), 'm', 422, /data.a/);
  });
  it('rejects unknown fields under Strict and warns under Warn', async () => {
    await refused({ ...cm('bad', { a: '1' }), bogus: 1 }, 'm', 400, /unknown field "bogus"/, 'fieldValidation=Strict');
    const r = await s.admin.request('PATCH', `${CMS}/warned?fieldManager=m`, { ...cm('warned', { a: '1' }), bogus: 1 }, APPLY);
    assert.equal(r.status, 201, r.text);
    assert.match(String(r.headers['warning']), /unknown field \\"bogus\\"/);
  });
});
