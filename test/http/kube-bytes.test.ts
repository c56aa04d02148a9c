// Bodies byte for byte as kube-apiserver writes them: the encoder's final
// newline on every JSON body, Status errors in metav1.Status field order with
// empty omitempty fields left out (no "group":"" for the core group), a
// Success Status as the registry builds it (no code), and the empty structs
// kube's Go types always write (a Service's "status":{"loadBalancer":{}}).
// The expected Status texts are the ones the official Python client's e2e
// suite compares against.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

const NS = '/api/v1/namespaces/kb';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe("kube's JSON bytes", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kb' } })).status, 201);
  });
  after(async () => {
    await s.close();
  });

  it('answers a stale update with the conflict Status kube writes', async () => {
    const made = await s.admin.request('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1' } });
    assert.equal(made.status, 201, made.text);
    const stale = { ...made.json, data: { a: '2' } };
    assert.equal((await s.admin.request('PUT', `${NS}/configmaps/c`, stale)).status, 200);
    const conflict = await s.admin.request('PUT', `${NS}/configmaps/c`, { ...stale, data: { a: '3' } });
    assert.equal(conflict.status, 409);
    assert.equal(
      conflict.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \\"c\\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"c","kind":"configmaps"},"code":409}\n',
    );
    const exists = await s.admin.request('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } });
    assert.equal(
      exists.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"c\\" already exists","reason":"AlreadyExists","details":{"name":"c","kind":"configmaps"},"code":409}\n',
    );
    const missing = await s.admin.request('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/kb/roles/none');
    assert.equal(
      missing.text,
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"roles.rbac.authorization.k8s.io \\"none\\" not found","reason":"NotFound","details":{"name":"none","group":"rbac.authorization.k8s.io","kind":"roles"},"code":404}\n',
    );
  });

  it('writes a GET, a list and a Table each ending in the newline, as one serialization', async () => {
    const one = await s.admin.request('GET', `${NS}/configmaps/c`);
    assert.equal(one.text, JSON.stringify(one.json) + '\n');
    const again = await s.admin.request('GET', `${NS}/configmaps/c`);
    assert.equal(again.text, one.text, 'the memoized answer');
    const list = await s.admin.request('GET', `${NS}/configmaps`);
    assert.ok(list.text.endsWith(']}\n'), list.text.slice(-20));
    assert.equal(list.text, JSON.stringify(list.json) + '\n');
    const table = await s.admin.request('GET', `${NS}/configmaps`, undefined, { accept: TABLE });
    assert.equal(table.status, 200);
    assert.equal(table.text, JSON.stringify(table.json) + '\n');
    assert.match(
      table.text,
      /^\{"kind":"Table","apiVersion":"meta.k8s.io\/v1","metadata":\{"resourceVersion":"\d+"\},"columnDefinitions":\[\{"name":"Name","type":"string","format":"name","description":/,
    );
  });

  it('stores and serves a created Service with the status kube writes, kept through updates', async () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } };
    const made = await s.admin.request('POST', `${NS}/services`, svc);
    assert.equal(made.status, 201, made.text);
    assert.ok(made.text.endsWith(',"status":{"loadBalancer":{}}}\n'), made.text.slice(-60));
    const got = await s.admin.request('GET', `${NS}/services/web`);
    assert.deepEqual(got.json.status, { loadBalancer: {} });
    // A client that leaves status out changes nothing: no new revision, no generation bump.
    const put = await s.admin.request('PUT', `${NS}/services/web`, { ...svc, metadata: { name: 'web', resourceVersion: got.json.metadata.resourceVersion } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.metadata.resourceVersion, got.json.metadata.resourceVersion);
    assert.deepEqual(put.json.status, { loadBalancer: {} });
    const pod = await s.admin.request('POST', `${NS}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
    });
    assert.equal(pod.status, 201, pod.text);
    assert.deepEqual(pod.json.spec.containers[0].resources, {}, 'a container writes its empty resources');
  });

  it('answers a delete with the Success Status the registry builds', async () => {
    const got = await s.admin.request('GET', `${NS}/services/web`);
    const del = await s.admin.request('DELETE', `${NS}/services/web`);
    assert.equal(del.status, 200);
    assert.equal(
      del.text,
      `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"web","kind":"services","uid":"${got.json.metadata.uid}"}}\n`,
    );
  });

  it('serves discovery with the newline and /version indented without it, as kube writes them', async () => {
    const api = await s.admin.request('GET', '/api');
    assert.ok(api.text.endsWith('}\n'));
    const res = await s.admin.request('GET', '/api/v1');
    assert.equal(res.text, JSON.stringify(res.json) + '\n');
    const version = await s.admin.request('GET', '/version');
    assert.equal(version.text, JSON.stringify(version.json, null, 2));
  });
});
