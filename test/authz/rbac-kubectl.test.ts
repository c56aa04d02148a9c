// `kubectl auth can-i` matrices against a server on its default
// authorization (RBAC): users, groups and service accounts bound to the
// default roles (view, edit, admin by RoleBinding; cluster-admin) and to a
// custom role; anonymous users reach only system:public-info-viewer; deny
// messages read like kube-apiserver's.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { Kubectl } from '../e2e/helpers.js';
import { canI, clusterRoleBinding, groupSubject, identity, KUBECTL, RBAC, roleBinding, saSubject, userSubject, type Identity } from './rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

describe('RBAC through kubectl auth can-i', { skip: KUBECTL ? false : 'kubectl is not installed' }, () => {
  let s: TestServer;
  const who: Record<string, Identity> = {};
  let admin: Kubectl;

  before(async () => {
    s = await startTestServer();
    admin = new Kubectl(KUBECTL!, s.kubeconfig);
    for (const ns of ['team-a', 'team-b']) {
      assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
    }
    const objects: Array<[string, object]> = [
      [`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'alice-view', 'ClusterRole', 'view', [userSubject('alice')])],
      [`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'bob-edit', 'ClusterRole', 'edit', [userSubject('bob')])],
      [`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'carol-admin', 'ClusterRole', 'admin', [userSubject('carol')])],
      [`${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'robot-edit', 'ClusterRole', 'edit', [saSubject('team-a', 'robot')])],
      [`${RBAC}/clusterrolebindings`, clusterRoleBinding('ops-admin', 'cluster-admin', [groupSubject('ops')])],
      [`${RBAC}/clusterrolebindings`, clusterRoleBinding('qa-view', 'view', [groupSubject('qa')])],
      [
        `${RBAC}/namespaces/team-b/roles`,
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'Role',
          metadata: { name: 'app-config-reader', namespace: 'team-b' },
          rules: [
            { apiGroups: [''], resources: ['configmaps'], resourceNames: ['app-config'], verbs: ['get', 'update'] },
            { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
          ],
        },
      ],
      [`${RBAC}/namespaces/team-b/rolebindings`, roleBinding('team-b', 'erin-config', 'Role', 'app-config-reader', [userSubject('erin')])],
    ];
    for (const [path, body] of objects) {
      const r = await s.admin.request('POST', path, body);
      assert.equal(r.status, 201, r.text);
    }
    for (const [name, groups] of [
      ['alice', []],
      ['bob', []],
      ['carol', []],
      ['dave', ['ops']],
      ['quinn', ['qa']],
      ['erin', []],
      ['mallory', []],
    ] as const) {
      who[name] = await identity(s, name, [...groups]);
    }
    await eventually('the last binding', () => canI(who['erin']!.client, { verb: 'get', resource: 'configmaps', namespace: 'team-b', name: 'app-config' }), {
      timeoutMs: 5000,
    });
  });
  after(async () => {
    for (const i of Object.values(who)) i.client.close();
    await s.close();
  });

  async function can(k: Kubectl, args: string[]): Promise<boolean> {
    const r = await k.run(['auth', 'can-i', ...args]);
    assert.ok(r.code === 0 || r.code === 1, `kubectl auth can-i ${args.join(' ')}: ${r.code} ${r.stderr}`);
    assert.equal(r.stdout.trim(), r.code === 0 ? 'yes' : 'no');
    return r.code === 0;
  }

  const matrix: Array<[string, string[], boolean]> = [
    // view by RoleBinding: reads in team-a, no secrets, no writes, nothing in team-b.
    ['alice', ['list', 'pods', '-n', 'team-a'], true],
    ['alice', ['get', 'pods/log', '-n', 'team-a'], true],
    ['alice', ['watch', 'endpointslices.discovery.k8s.io', '-n', 'team-a'], true],
    ['alice', ['get', 'secrets', '-n', 'team-a'], false],
    ['alice', ['create', 'pods', '-n', 'team-a'], false],
    ['alice', ['list', 'rolebindings.rbac.authorization.k8s.io', '-n', 'team-a'], false],
    ['alice', ['list', 'pods', '-n', 'team-b'], false],
    ['alice', ['list', 'pods', '--all-namespaces'], false],
    // edit: writes and secrets, no roles or bindings.
    ['bob', ['create', 'configmaps', '-n', 'team-a'], true],
    ['bob', ['get', 'secrets', '-n', 'team-a'], true],
    ['bob', ['delete', 'leases.coordination.k8s.io', '-n', 'team-a'], true],
    ['bob', ['create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'team-a'], false],
    ['bob', ['delete', 'namespaces'], false],
    // admin: roles and bindings in the namespace, no namespace writes or quota writes.
    ['carol', ['create', 'rolebindings.rbac.authorization.k8s.io', '-n', 'team-a'], true],
    ['carol', ['create', 'localsubjectaccessreviews.authorization.k8s.io', '-n', 'team-a'], true],
    ['carol', ['update', 'resourcequotas', '-n', 'team-a'], false],
    ['carol', ['delete', 'namespaces/team-a'], false],
    ['carol', ['list', 'pods', '-n', 'team-b'], false],
    // cluster-admin through a group, and view cluster-wide through a group.
    ['dave', ['delete', 'nodes'], true],
    ['dave', ['*', '*'], true],
    ['dave', ['get', '/metrics'], true],
    ['quinn', ['list', 'pods', '--all-namespaces'], true],
    ['quinn', ['get', 'secrets', '-n', 'team-b'], false],
    // A custom Role with resourceNames and a subresource.
    ['erin', ['get', 'configmaps/app-config', '-n', 'team-b'], true],
    ['erin', ['update', 'configmaps/app-config', '-n', 'team-b'], true],
    ['erin', ['get', 'configmaps/other', '-n', 'team-b'], false],
    ['erin', ['list', 'configmaps', '-n', 'team-b'], false],
    ['erin', ['get', 'pods', '--subresource=log', '-n', 'team-b'], true],
    ['erin', ['get', 'pods', '-n', 'team-b'], false],
    // Every authenticated user: discovery and the self reviews, nothing else.
    ['mallory', ['get', '/apis'], true],
    ['mallory', ['create', 'selfsubjectaccessreviews.authorization.k8s.io'], true],
    ['mallory', ['list', 'pods', '-n', 'team-a'], false],
    ['mallory', ['get', '/metrics'], false],
  ];
  for (const [user, args, want] of matrix) {
    it(`${user}: can-i ${args.join(' ')} → ${want ? 'yes' : 'no'}`, async () => {
      assert.equal(await can(who[user]!.kubectl(), args), want);
    });
  }

  it('a service account bound by a RoleBinding (impersonated by the admin)', async () => {
    const as = ['--as', 'system:serviceaccount:team-a:robot'];
    assert.equal(await can(admin, ['create', 'secrets', '-n', 'team-a', ...as]), true);
    assert.equal(await can(admin, ['create', 'secrets', '-n', 'team-b', ...as]), false);
    assert.equal(await can(admin, ['get', 'roles.rbac.authorization.k8s.io', '-n', 'team-a', ...as]), false);
  });

  it('auth can-i --list shows the rules RBAC grants in the namespace', async () => {
    const out = await who['erin']!.kubectl().ok(['auth', 'can-i', '--list', '-n', 'team-b']);
    assert.match(out, /^configmaps\s+\[\]\s+\[app-config\]\s+\[get update\]$/m);
    assert.match(out, /^pods\/log\s+\[\]\s+\[\]\s+\[get\]$/m);
    assert.match(out, /selfsubjectaccessreviews\.authorization\.k8s\.io/);
    assert.doesNotMatch(await who['erin']!.kubectl().ok(['auth', 'can-i', '--list', '-n', 'team-a']), /app-config/);
  });

  it("a denied request gets kube-apiserver's message", async () => {
    const r = await who['alice']!.kubectl().run(['get', 'secrets', '-n', 'team-a']);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr.trim(),
      'Error from server (Forbidden): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "team-a"',
    );
    const h = await who['alice']!.client.request('DELETE', '/api/v1/namespaces/team-a/configmaps/x');
    assert.equal(h.status, 403);
    assert.equal(h.json.message, 'configmaps "x" is forbidden: User "alice" cannot delete resource "configmaps" in API group "" in the namespace "team-a"');
  });

  it('bob really reads secrets and alice really lists pods', async () => {
    assert.equal((await who['bob']!.client.request('GET', '/api/v1/namespaces/team-a/secrets')).status, 200);
    assert.equal((await who['alice']!.client.request('GET', '/api/v1/namespaces/team-a/pods')).status, 200);
  });

  it('anonymous users reach only what system:public-info-viewer grants', async () => {
    for (const path of ['/readyz', '/livez', '/healthz', '/version']) {
      assert.equal((await s.anonymous.request('GET', path)).status, 200, path);
    }
    const pods = await s.anonymous.request('GET', '/api/v1/pods');
    assert.equal(pods.status, 403);
    assert.equal(pods.json.message, 'pods is forbidden: User "system:anonymous" cannot list resource "pods" in API group "" at the cluster scope');
    const apis = await s.anonymous.request('GET', '/apis');
    assert.equal(apis.status, 403);
    assert.equal(apis.json.message, 'forbidden: User "system:anonymous" cannot get path "/apis"');
    assert.equal((await s.anonymous.request('GET', '/metrics')).status, 403);
  });

  it('removing a binding takes the access away', async () => {
    const c = who['quinn']!.client;
    assert.equal((await s.admin.request('DELETE', `${RBAC}/clusterrolebindings/qa-view`)).status, 200);
    await eventually('the binding to go', async () => !(await canI(c, { verb: 'list', resource: 'pods' })), { timeoutMs: 5000 });
  });
});
