// Escalation prevention on roles and bindings, `escalate` and `bind`, the
// aggregationRule guard, and roleRef immutability.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { canI, clusterRoleBinding, identity, RBAC, roleBinding, userSubject, type Identity } from './rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

const NS = 'esc';
const role = (name: string, rules: object[]) => ({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name, namespace: NS }, rules });
const readPods = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] };
const readSecrets = { apiGroups: [''], resources: ['secrets'], verbs: ['get'] };

describe('RBAC escalation prevention', () => {
  let s: TestServer;
  let carol: Identity; // admin in NS (may manage roles and bindings, holds pods and secrets there)
  let erin: Identity; // may manage roles and bindings in NS but holds nothing else
  before(async () => {
    s = await startTestServer();
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const manager = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'rbac-manager' },
      rules: [
        {
          apiGroups: ['rbac.authorization.k8s.io'],
          resources: ['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'],
          verbs: ['create', 'update', 'get', 'list', 'delete'],
        },
      ],
    };
    assert.equal((await s.admin.request('POST', `${RBAC}/clusterroles`, manager)).status, 201);
    await s.admin.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, roleBinding(NS, 'carol-admin', 'ClusterRole', 'admin', [userSubject('carol')]));
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/${NS}/rolebindings`,
      roleBinding(NS, 'erin-manager', 'ClusterRole', 'rbac-manager', [userSubject('erin')]),
    );
    await s.admin.request('POST', `${RBAC}/clusterrolebindings`, clusterRoleBinding('erin-manager', 'rbac-manager', [userSubject('erin')]));
    carol = await identity(s, 'carol');
    erin = await identity(s, 'erin');
    await eventually('the bindings', () => canI(erin.client, { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'clusterroles' }), {
      timeoutMs: 5000,
    });
    await eventually('the bindings', () => canI(carol.client, { verb: 'get', resource: 'secrets', namespace: NS }), { timeoutMs: 5000 });
  });
  after(async () => {
    carol.client.close();
    erin.client.close();
    await s.close();
  });

  it('lets a user create a role with permissions it holds', async () => {
    const r = await carol.client.request('POST', `${RBAC}/namespaces/${NS}/roles`, role('pod-reader', [readPods]));
    assert.equal(r.status, 201, r.text);
  });

  it('refuses a role granting more than the requester holds, as kube words it', async () => {
    const r = await erin.client.request('POST', `${RBAC}/namespaces/${NS}/roles`, role('sneaky', [readPods, readSecrets]));
    assert.equal(r.status, 403);
    assert.equal(r.json.reason, 'Forbidden');
    assert.equal(
      r.json.message,
      'roles.rbac.authorization.k8s.io "sneaky" is forbidden: user "erin" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}\n{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
    );
    assert.equal((await s.admin.request('GET', `${RBAC}/namespaces/${NS}/roles/sneaky`)).status, 404);
  });

  it('refuses a cluster-wide ClusterRole to a namespace admin', async () => {
    const r = await carol.client.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'x' },
      rules: [readPods],
    });
    assert.equal(r.status, 403);
  });

  it('refuses an update that adds permissions', async () => {
    const cur = (await s.admin.request('GET', `${RBAC}/namespaces/${NS}/roles/pod-reader`)).json;
    cur.rules.push({ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] });
    const r = await carol.client.request('PUT', `${RBAC}/namespaces/${NS}/roles/pod-reader`, cur);
    assert.equal(r.status, 403);
    assert.match(r.json.message, /Resources:\["nodes"\], Verbs:\["delete"\]/);
  });

  it('checks a PATCH on the object it would produce', async () => {
    const path = `${RBAC}/namespaces/${NS}/roles/pod-reader`;
    const grow = await carol.client.request(
      'PATCH',
      path,
      { rules: [readPods, { apiGroups: [''], resources: ['nodes'], verbs: ['delete'] }] },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(grow.status, 403, grow.text);
    const json = await carol.client.request('PATCH', path, [{ op: 'add', path: '/rules/-', value: { apiGroups: ['*'], resources: ['*'], verbs: ['*'] } }], {
      'content-type': 'application/json-patch+json',
    });
    assert.equal(json.status, 403, json.text);
    const label = await carol.client.request('PATCH', path, { metadata: { labels: { team: 'a' } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(label.status, 200, label.text);
  });

  it('allows it with the escalate verb', async () => {
    await s.admin.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'role-escalator' },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['escalate'] }],
    });
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/${NS}/rolebindings`,
      roleBinding(NS, 'erin-escalate', 'ClusterRole', 'role-escalator', [userSubject('erin')]),
    );
    await eventually('escalate', () => canI(erin.client, { verb: 'escalate', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: NS }), {
      timeoutMs: 5000,
    });
    const r = await erin.client.request('POST', `${RBAC}/namespaces/${NS}/roles`, role('secret-reader', [readSecrets]));
    assert.equal(r.status, 201, r.text);
    // escalate on roles is not escalate on clusterroles.
    const c = await erin.client.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'y' },
      rules: [readSecrets],
    });
    assert.equal(c.status, 403);
  });

  it('refuses an aggregationRule without escalate', async () => {
    const r = await erin.client.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'agg' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
    });
    assert.equal(r.status, 403);
    assert.equal(r.json.message, 'clusterroles.rbac.authorization.k8s.io "agg" is forbidden: must have cluster-admin privileges to use the aggregationRule');
  });

  it('refuses a binding to a role whose permissions the requester lacks', async () => {
    const r = await erin.client.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, roleBinding(NS, 'b1', 'Role', 'pod-reader', [userSubject('erin')]));
    assert.equal(r.status, 403);
    assert.match(
      r.json.message,
      /^rolebindings\.rbac\.authorization\.k8s\.io "b1" is forbidden: user "erin" .* is attempting to grant RBAC permissions not currently held:\n\{APIGroups:\[""\], Resources:\["pods"\], Verbs:\["get" "list"\]\}$/,
    );
    const edit = await erin.client.request(
      'POST',
      `${RBAC}/namespaces/${NS}/rolebindings`,
      roleBinding(NS, 'b2', 'ClusterRole', 'edit', [userSubject('erin')]),
    );
    assert.equal(edit.status, 403);
  });

  it('lets a holder bind a role it holds (admin binds view in its namespace)', async () => {
    const r = await carol.client.request(
      'POST',
      `${RBAC}/namespaces/${NS}/rolebindings`,
      roleBinding(NS, 'frank-view', 'ClusterRole', 'view', [userSubject('frank')]),
    );
    assert.equal(r.status, 201, r.text);
    // but not cluster-wide
    const c = await carol.client.request('POST', `${RBAC}/clusterrolebindings`, clusterRoleBinding('frank-view', 'view', [userSubject('frank')]));
    assert.equal(c.status, 403);
  });

  it('allows binding with the bind verb, limited to the named role', async () => {
    await s.admin.request(
      'POST',
      `${RBAC}/namespaces/${NS}/roles`,
      role('binder', [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['bind'], resourceNames: ['pod-reader'] }]),
    );
    await s.admin.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, roleBinding(NS, 'erin-binder', 'Role', 'binder', [userSubject('erin')]));
    await eventually(
      'bind',
      () => canI(erin.client, { verb: 'bind', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: NS, name: 'pod-reader' }),
      { timeoutMs: 5000 },
    );
    const ok = await erin.client.request('POST', `${RBAC}/namespaces/${NS}/rolebindings`, roleBinding(NS, 'b3', 'Role', 'pod-reader', [userSubject('gina')]));
    assert.equal(ok.status, 201, ok.text);
    const other = await erin.client.request(
      'POST',
      `${RBAC}/namespaces/${NS}/rolebindings`,
      roleBinding(NS, 'b4', 'Role', 'secret-reader', [userSubject('gina')]),
    );
    assert.equal(other.status, 403);
  });

  it('refuses a binding update that adds subjects without the permissions', async () => {
    const cur = (await s.admin.request('GET', `${RBAC}/namespaces/${NS}/rolebindings/frank-view`)).json;
    cur.subjects.push(userSubject('henry'));
    assert.equal((await erin.client.request('PUT', `${RBAC}/namespaces/${NS}/rolebindings/frank-view`, cur)).status, 403);
    assert.equal((await carol.client.request('PUT', `${RBAC}/namespaces/${NS}/rolebindings/frank-view`, cur)).status, 200);
  });

  it('refuses a roleRef change with 422', async () => {
    const cur = (await s.admin.request('GET', `${RBAC}/namespaces/${NS}/rolebindings/frank-view`)).json;
    cur.roleRef.name = 'edit';
    const r = await s.admin.request('PUT', `${RBAC}/namespaces/${NS}/rolebindings/frank-view`, cur);
    assert.equal(r.status, 422);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(
      r.json.message,
      'RoleBinding.rbac.authorization.k8s.io "frank-view" is invalid: roleRef: Invalid value: rbac.RoleRef{APIGroup:"rbac.authorization.k8s.io", Kind:"ClusterRole", Name:"edit"}: cannot change roleRef',
    );
    const bad = await s.admin.request('POST', `${RBAC}/clusterrolebindings`, clusterRoleBinding('bad', 'view', [{ kind: 'Robot', name: 'x' }]));
    assert.equal(bad.status, 422);
  });

  it('system:masters skips the checks', async () => {
    const r = await s.admin.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'agg2' },
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
    });
    assert.equal(r.status, 201);
  });
});
