// The RBAC authorizer on its own: rule matching, scopes, subjects, the
// subject index, and kube's reasons; escalation coverage.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RbacAuthorizer, RbacPolicy } from '../../gateway/authz/rbac/index.js';
import { ruleAllows } from '../../gateway/authz/rbac/match.js';
import { describeMissing, uncovered } from '../../gateway/authz/rbac/covers.js';
import type { PolicyRule, Subject } from '../../gateway/authz/rbac/types.js';
import type { Attributes } from '../../gateway/authz/types.js';
import type { UserInfo } from '../../lib/api/meta.js';

const rule = (p: Partial<PolicyRule>): PolicyRule => ({ verbs: [], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: [], ...p });
const alice: UserInfo = { username: 'alice', groups: ['dev', 'system:authenticated'] };

function res(verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes {
  return {
    user: alice,
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: '',
    apiVersion: 'v1',
    namespace: 'team-a',
    resource,
    subresource: '',
    name: '',
    ...extra,
  };
}
function url(verb: string, path: string): Attributes {
  return { user: alice, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
}

describe('rule matching', () => {
  const cases: Array<[string, PolicyRule, Attributes, boolean]> = [
    ['exact verb, core group, resource', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('get', 'pods'), true],
    ['another verb', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('list', 'pods'), false],
    [
      'the core group is not apps',
      rule({ verbs: ['get'], apiGroups: [''], resources: ['deployments'] }),
      res('get', 'deployments', { apiGroup: 'apps' }),
      false,
    ],
    ['* verbs, groups and resources', rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), res('delete', 'widgets', { apiGroup: 'x.io' }), true],
    ['a subresource needs its own entry', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }), res('get', 'pods', { subresource: 'log' }), false],
    ['pods/log', rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }), res('get', 'pods', { subresource: 'log' }), true],
    [
      '*/scale',
      rule({ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }),
      res('get', 'deployments', { apiGroup: 'apps', subresource: 'scale' }),
      true,
    ],
    [
      '*/scale is not */status',
      rule({ verbs: ['get'], apiGroups: ['*'], resources: ['*/scale'] }),
      res('get', 'deployments', { apiGroup: 'apps', subresource: 'status' }),
      false,
    ],
    [
      'resourceNames match the name',
      rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }),
      res('get', 'configmaps', { name: 'cfg' }),
      true,
    ],
    [
      'resourceNames refuse another name',
      rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }),
      res('get', 'configmaps', { name: 'other' }),
      false,
    ],
    [
      'resourceNames refuse a list',
      rule({ verbs: ['list'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }),
      res('list', 'configmaps'),
      false,
    ],
    ['a non-resource URL exactly', rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }), url('get', '/healthz'), true],
    ['a URL rule is no prefix without *', rule({ verbs: ['get'], nonResourceURLs: ['/healthz'] }), url('get', '/healthz/etcd'), false],
    ['a trailing * is a prefix', rule({ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }), url('get', '/healthz/etcd'), true],
    ['* is every path', rule({ verbs: ['*'], nonResourceURLs: ['*'] }), url('post', '/anything'), true],
    ['resource rules grant no URLs', rule({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }), url('get', '/version'), false],
  ];
  for (const [name, r, a, want] of cases) it(name, () => assert.equal(ruleAllows(a, r), want));
});

function bind(
  p: RbacPolicy,
  kind: 'RoleBinding' | 'ClusterRoleBinding',
  namespace: string,
  name: string,
  roleKind: 'Role' | 'ClusterRole',
  role: string,
  subjects: Subject[],
): void {
  p.setBinding({ kind, namespace, name, roleRef: { kind: roleKind, name: role }, subjects });
}
const user = (name: string): Subject => ({ kind: 'User', name, namespace: '' });
const group = (name: string): Subject => ({ kind: 'Group', name, namespace: '' });

describe('the RBAC authorizer', () => {
  const readPods = [rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] })];

  it('a RoleBinding to a ClusterRole grants only in its namespace', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'RoleBinding', 'team-a', 'rb', 'ClusterRole', 'pod-reader', [user('alice')]);
    const rbac = new RbacAuthorizer(p);
    const d = rbac.authorize(res('list', 'pods'));
    assert.equal(d.kind, 'allow');
    assert.equal(d.reason, 'RBAC: allowed by RoleBinding "rb/team-a" of ClusterRole "pod-reader" to User "alice"');
    assert.equal(rbac.authorize(res('list', 'pods', { namespace: 'team-b' })).kind, 'no-opinion');
    assert.equal(rbac.authorize(res('list', 'pods', { namespace: '' })).kind, 'no-opinion');
  });

  it('a ClusterRoleBinding grants everywhere, to a group', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'ClusterRoleBinding', '', 'crb', 'ClusterRole', 'pod-reader', [group('dev')]);
    const d = new RbacAuthorizer(p).authorize(res('get', 'pods', { namespace: 'anywhere' }));
    assert.deepEqual(d, { kind: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "crb" of ClusterRole "pod-reader" to Group "dev"' });
  });

  it('a Role is read from the binding namespace', () => {
    const p = new RbacPolicy();
    p.setRole('team-a', 'r', readPods);
    bind(p, 'RoleBinding', 'team-b', 'rb', 'Role', 'r', [user('alice')]);
    assert.equal(new RbacAuthorizer(p).authorize(res('get', 'pods', { namespace: 'team-b' })).reason, 'RBAC: role.rbac.authorization.k8s.io "r" not found');
  });

  it('a service account subject defaults to the RoleBinding namespace', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'RoleBinding', 'team-a', 'rb', 'ClusterRole', 'pod-reader', [{ kind: 'ServiceAccount', name: 'robot', namespace: '' }]);
    const sa: UserInfo = { username: 'system:serviceaccount:team-a:robot', groups: [] };
    assert.equal(new RbacAuthorizer(p).authorize({ ...res('get', 'pods'), user: sa }).kind, 'allow');
    assert.equal(
      new RbacAuthorizer(p).authorize({ ...res('get', 'pods'), user: { username: 'system:serviceaccount:team-b:robot', groups: [] } }).kind,
      'no-opinion',
    );
  });

  it("a binding to a missing role gives kube's reason and no opinion", () => {
    const p = new RbacPolicy();
    bind(p, 'ClusterRoleBinding', '', 'crb', 'ClusterRole', 'ghost', [user('alice')]);
    assert.deepEqual(new RbacAuthorizer(p).authorize(res('get', 'pods')), {
      kind: 'no-opinion',
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "ghost" not found',
    });
  });

  it('deleting and replacing bindings updates the index', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'ClusterRoleBinding', '', 'crb', 'ClusterRole', 'pod-reader', [user('alice')]);
    const rbac = new RbacAuthorizer(p);
    assert.equal(rbac.authorize(res('get', 'pods')).kind, 'allow');
    bind(p, 'ClusterRoleBinding', '', 'crb', 'ClusterRole', 'pod-reader', [user('bob')]);
    assert.equal(rbac.authorize(res('get', 'pods')).kind, 'no-opinion');
    p.deleteBinding('ClusterRoleBinding', '', 'crb');
    assert.equal(p.size.bindings, 0);
  });

  it('visits only bindings that name the user or its groups', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    for (let i = 0; i < 1000; i++) bind(p, 'RoleBinding', 'team-a', `other-${i}`, 'ClusterRole', 'pod-reader', [user(`user-${i}`)]);
    bind(p, 'RoleBinding', 'team-a', 'mine', 'ClusterRole', 'pod-reader', [user('alice')]);
    let visited = 0;
    p.visit(alice, 'team-a', () => {
      visited++;
      return false;
    });
    assert.equal(visited, 1);
  });

  it('lists the rules a user holds in a namespace', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    p.setClusterRole('urls', [rule({ verbs: ['get'], nonResourceURLs: ['/version'] })]);
    bind(p, 'RoleBinding', 'team-a', 'rb', 'ClusterRole', 'pod-reader', [user('alice')]);
    bind(p, 'ClusterRoleBinding', '', 'crb', 'ClusterRole', 'urls', [group('system:authenticated')]);
    const rbac = new RbacAuthorizer(p);
    assert.equal(rbac.rulesFor(alice, 'team-a').rules.length, 2);
    assert.equal(rbac.rulesFor(alice, 'team-b').rules.length, 1);
  });
});

describe('who-can and other-subject near misses visit one scope', () => {
  const readPods = [rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] })];
  const bindings = (p: RbacPolicy, ns: string) => {
    const out: string[] = [];
    p.visitBindings(ns, (b) => out.push(`${b.kind}/${b.namespace}/${b.name}`));
    return out;
  };

  it('ClusterRoleBindings, then the RoleBindings of the namespace only; updates and deletes keep the index', () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'RoleBinding', 'team-a', 'a1', 'ClusterRole', 'pod-reader', [user('u1')]);
    bind(p, 'ClusterRoleBinding', '', 'c1', 'ClusterRole', 'pod-reader', [group('g1')]);
    bind(p, 'RoleBinding', 'team-b', 'b1', 'ClusterRole', 'pod-reader', [user('u2')]);
    // A RoleBinding read without a namespace is never cluster-wide.
    bind(p, 'RoleBinding', '', 'odd', 'ClusterRole', 'pod-reader', [user('u3')]);
    assert.deepEqual(bindings(p, 'team-a'), ['ClusterRoleBinding//c1', 'RoleBinding/team-a/a1']);
    assert.deepEqual(bindings(p, ''), ['ClusterRoleBinding//c1']);
    bind(p, 'RoleBinding', 'team-a', 'a1', 'ClusterRole', 'pod-reader', [user('u9')]);
    p.deleteBinding('ClusterRoleBinding', '', 'c1');
    assert.deepEqual(bindings(p, 'team-a'), ['RoleBinding/team-a/a1']);
    p.clearBindings('RoleBinding');
    assert.deepEqual(bindings(p, 'team-a'), []);
    assert.deepEqual(bindings(p, 'team-b'), []);
    const rbac = new RbacAuthorizer(p);
    bind(p, 'RoleBinding', 'team-a', 'a2', 'ClusterRole', 'pod-reader', [user('u4'), { kind: 'ServiceAccount', name: 'robot', namespace: '' }]);
    assert.deepEqual(
      rbac.subjects(res('get', 'pods')).map((x) => `${x.kind}:${x.namespace ?? ''}:${x.name}`),
      ['User::u4', 'ServiceAccount:team-a:robot'],
    );
    // Grouped by role: a role that does not grant the request, or does not exist, is asked once and its bindings skipped.
    p.setClusterRole('secret-reader', [rule({ verbs: ['get'], apiGroups: [''], resources: ['secrets'] })]);
    for (let i = 0; i < 3; i++) bind(p, 'RoleBinding', 'team-a', `s${i}`, 'ClusterRole', 'secret-reader', [user(`s${i}`)]);
    bind(p, 'RoleBinding', 'team-a', 'ghost', 'ClusterRole', 'ghost', [user('g')]);
    const asked: Array<string | undefined> = [];
    const seen: string[] = [];
    p.visitBindings(
      'team-a',
      (b) => seen.push(b.name),
      (rules) => {
        asked.push(rules?.[0]?.resources[0]);
        return rules !== undefined && rules.some((r) => ruleAllows(res('get', 'secrets'), r));
      },
    );
    assert.deepEqual(asked, ['pods', 'secrets', undefined]);
    assert.deepEqual(seen, ['s0', 's1', 's2']);
    assert.deepEqual(
      rbac.subjects(res('get', 'secrets')).map((x) => x.name),
      ['s0', 's1', 's2'],
    );
    assert.deepEqual(
      rbac.subjects(res('get', 'pods')).map((x) => x.name),
      ['u4', 'robot'],
    );
  });

  it("a ServiceAccount subject without a namespace defaults to its RoleBinding's; the same namespace is no near miss", () => {
    const p = new RbacPolicy();
    p.setClusterRole('pod-reader', readPods);
    bind(p, 'RoleBinding', 'team-a', 'a1', 'ClusterRole', 'pod-reader', [
      { kind: 'ServiceAccount', name: 'robot', namespace: '' },
      { kind: 'ServiceAccount', name: 'robot', namespace: 'ci' },
      { kind: 'ServiceAccount', name: 'other', namespace: 'ci' },
    ]);
    const rbac = new RbacAuthorizer(p);
    const sa = (ns: string): UserInfo => ({ username: `system:serviceaccount:${ns}:robot`, groups: [] });
    const miss = (u: UserInfo, opts = { otherSubjects: true }) =>
      (rbac.explain({ ...res('get', 'pods'), user: u }, opts).nearMisses ?? []).map((m) => [m.attribute, m.requested, m.granted]);
    // robot of team-a is allowed by the defaulted subject; robot of ops is one namespace off, twice.
    assert.equal(rbac.authorize({ ...res('get', 'pods'), user: sa('team-a') }).kind, 'allow');
    assert.deepEqual(miss(sa('ops')), [
      ['serviceaccount namespace', 'ops', ['team-a']],
      ['serviceaccount namespace', 'ops', ['ci']],
    ]);
    assert.equal(rbac.authorize({ ...res('get', 'pods'), user: sa('ci') }).kind, 'allow');
    assert.deepEqual(miss(sa('ops'), { otherSubjects: false }), []);
    // Not a ServiceAccount name: no such near miss.
    assert.deepEqual(miss({ username: 'robot', groups: [] }), []);
  });
});

describe('escalation coverage', () => {
  const owned = [
    rule({ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] }),
    rule({ verbs: ['*'], apiGroups: ['apps'], resources: ['*/scale'] }),
    rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] }),
    rule({ verbs: ['get'], nonResourceURLs: ['/healthz/*'] }),
  ];
  it('covers what is held piece by piece', () => {
    assert.deepEqual(uncovered(owned, [rule({ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] })]), []);
    assert.deepEqual(uncovered(owned, [rule({ verbs: ['update'], apiGroups: ['apps'], resources: ['deployments/scale'] })]), []);
    assert.deepEqual(uncovered(owned, [rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['cfg'] })]), []);
    assert.deepEqual(uncovered(owned, [rule({ verbs: ['get'], nonResourceURLs: ['/healthz/etcd'] })]), []);
  });
  it('reports what is not held, as kube describes it', () => {
    const missing = uncovered(owned, [
      rule({ verbs: ['get', 'delete', 'list'], apiGroups: [''], resources: ['pods'] }),
      rule({ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }),
    ]);
    assert.equal(describeMissing(missing), '{APIGroups:[""], Resources:["configmaps"], Verbs:["get"]}\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}');
  });
});
