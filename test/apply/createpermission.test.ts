// An apply that creates an object needs `create`, not only `patch`.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { identity, RBAC, roleBinding, userSubject, canI } from '../authz/rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

const CM = '/api/v1/namespaces/default/configmaps';
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const body = (name: string) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: 'b' } });

describe('server-side apply and the create permission', () => {
  let srv: TestServer;
  before(async () => {
    srv = await startTestServer({ flags: ['--authorization-mode=RBAC'] });
    const role = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'patcher', namespace: 'default' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'patch'] }],
    };
    assert.equal((await srv.admin.request('POST', `${RBAC}/namespaces/default/roles`, role)).status, 201);
    assert.equal(
      (await srv.admin.request('POST', `${RBAC}/namespaces/default/rolebindings`, roleBinding('default', 'patcher', 'Role', 'patcher', [userSubject('pat')])))
        .status,
      201,
    );
    assert.equal((await srv.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'existing' } })).status, 201);
  });
  after(async () => {
    await srv.close();
  });

  it('refuses an apply that would create an object the user may only patch', async () => {
    const pat = await identity(srv, 'pat');
    await eventually('the binding to be in force', () => canI(pat.client, { namespace: 'default', verb: 'patch', resource: 'configmaps' }), {
      timeoutMs: 5000,
    });
    const r = await pat.client.request('PATCH', `${CM}/fresh?fieldManager=m`, body('fresh'), APPLY);
    assert.equal(r.status, 403, r.text);
    assert.match(r.json.message, /User "pat" cannot create resource "configmaps" in API group "" in the namespace "default"/);
    assert.equal((await srv.admin.request('GET', `${CM}/fresh`)).status, 404);
  });

  it('lets the same user apply to an object that exists', async () => {
    const pat = await identity(srv, 'pat');
    const r = await pat.client.request('PATCH', `${CM}/existing?fieldManager=m`, body('existing'), APPLY);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.data.a, 'b');
  });
});
