// The admission matching shared by webhooks and policies: rules (operations,
// groups, versions, resources with `*` and subresources, scope), the lookup
// index, matchPolicy Equivalent through a CRD's versions, and the namespace
// and object selectors on a real in-memory store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject, UserInfo } from '../../lib/api/meta.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import type { ResourceType } from '../../lib/registry/types.js';
import {
  isExemptFromAdmission,
  matchesNamespaceSelector,
  matchesObjectSelector,
  matchRequest,
  parseRule,
  parseSelector,
  ruleMatches,
  RuleIndex,
  type RuleTarget,
} from '../../backends/core/admission/matching/index.js';
import type { AdmissionAttributes, Operation } from '../../backends/core/admission/types.js';
import type { CoreEnv } from '../../backends/core/env.js';
import { MemoryStore } from '../../backends/core/store/memory.js';
import { objectKey } from '../../backends/core/keys.js';

const T = (o: Partial<RuleTarget>): RuleTarget => ({
  operation: 'CREATE',
  group: '',
  version: 'v1',
  resource: 'configmaps',
  subresource: '',
  namespace: 'default',
  ...o,
});
const rule = (resources: string[], extra: Record<string, unknown> = {}) =>
  parseRule({ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources, ...extra });

describe('rules', () => {
  it('match operations, with * for every operation', () => {
    assert.equal(ruleMatches(rule(['configmaps']), T({})), true);
    assert.equal(ruleMatches(rule(['configmaps']), T({ operation: 'UPDATE' })), false);
    assert.equal(ruleMatches(rule(['configmaps'], { operations: ['*'] }), T({ operation: 'DELETE' })), true);
    assert.equal(ruleMatches(rule(['configmaps'], { operations: ['UPDATE', 'DELETE'] }), T({ operation: 'DELETE' })), true);
  });
  it('match groups and versions exactly or by *', () => {
    assert.equal(ruleMatches(rule(['configmaps']), T({ group: 'apps' })), false);
    assert.equal(ruleMatches(rule(['configmaps'], { apiGroups: ['*'] }), T({ group: 'apps' })), true);
    assert.equal(ruleMatches(rule(['configmaps']), T({ version: 'v2' })), false);
    assert.equal(ruleMatches(rule(['configmaps'], { apiVersions: ['*'] }), T({ version: 'v2' })), true);
  });
  it('match resources: *, */*, res/*, */sub, res/sub', () => {
    const status = T({ resource: 'pods', subresource: 'status', operation: 'UPDATE' });
    const ops = { operations: ['*'] };
    assert.equal(ruleMatches(rule(['*'], ops), T({ resource: 'pods' })), true);
    assert.equal(ruleMatches(rule(['*'], ops), status), false, '* is no subresource');
    assert.equal(ruleMatches(rule(['*/*'], ops), status), true);
    assert.equal(ruleMatches(rule(['pods/*'], ops), status), true);
    assert.equal(ruleMatches(rule(['pods/*'], ops), T({ resource: 'pods' })), false);
    assert.equal(ruleMatches(rule(['*/status'], ops), status), true);
    assert.equal(ruleMatches(rule(['*/status'], ops), T({ resource: 'pods', subresource: 'scale' })), false);
    assert.equal(ruleMatches(rule(['pods/status'], ops), status), true);
    assert.equal(ruleMatches(rule(['pods'], ops), status), false);
    assert.equal(ruleMatches(rule(['services/status'], ops), status), false);
  });
  it('match scope: a Namespace is cluster-scoped though its requests carry its name', () => {
    const ns = T({ resource: 'namespaces', namespace: 'team-a' });
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), T({})), true);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), T({ namespace: '' })), false);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Namespaced' }), ns), false);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), ns), true);
    assert.equal(ruleMatches(rule(['*'], { scope: 'Cluster' }), T({})), false);
    assert.equal(ruleMatches(rule(['*'], { scope: '*' }), T({})), true);
  });
});

describe('RuleIndex', () => {
  const item = (name: string, resources: string[], groups = ['']) => ({ name, rules: [rule(resources, { apiGroups: groups })], equivalent: true });
  const index = new RuleIndex([
    item('a', ['configmaps']),
    item('b', ['*']),
    item('c', ['secrets']),
    item('d', ['pods/status']),
    item('e', ['deployments'], ['*']),
  ]);
  it('finds the items naming the resource or *, in order', () => {
    assert.deepEqual(
      index.candidates('', 'configmaps').map((i) => i.name),
      ['a', 'b'],
    );
    assert.deepEqual(
      index.candidates('', 'pods').map((i) => i.name),
      ['b', 'd'],
    );
    assert.deepEqual(
      index.candidates('apps', 'deployments').map((i) => i.name),
      ['e'],
    );
    assert.deepEqual(index.candidates('apps', 'replicasets'), []);
  });
  it('answers the same list again (memoized)', () => {
    assert.equal(index.candidates('', 'secrets'), index.candidates('', 'secrets'));
  });
});

const user: UserInfo = { username: 'u', groups: [] } as unknown as UserInfo;
function attrs(o: Partial<AdmissionAttributes>): AdmissionAttributes {
  return {
    operation: 'CREATE' as Operation,
    object: undefined,
    oldObject: undefined,
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    namespace: 'default',
    name: 'x',
    user,
    dryRun: false,
    options: { kind: 'CreateOptions' },
    ...o,
  };
}

function widgetType(version: string): ResourceType {
  return {
    group: 'example.com',
    version,
    kind: 'Widget',
    listKind: 'WidgetList',
    plural: 'widgets',
    singular: 'widget',
    namespaced: true,
    shortNames: [],
    categories: [],
    verbs: ['create', 'get'],
    subresources: [{ name: 'status', kind: 'Widget', verbs: ['get', 'update'] }],
    nameRule: 'subdomain',
    createOnUpdate: false,
    fieldSelectors: {},
    crd: 'widgets.example.com',
  };
}

describe('matchPolicy', () => {
  const registry = builtinRegistry().extend([widgetType('v1'), widgetType('v2')]);
  const v2Only = (matchPolicy: boolean) => ({
    rules: [parseRule({ operations: ['CREATE'], apiGroups: ['example.com'], apiVersions: ['v2'], resources: ['widgets'] })],
    equivalent: matchPolicy,
  });
  const v1Request = attrs({
    kind: { group: 'example.com', version: 'v1', kind: 'Widget' },
    resource: { group: 'example.com', version: 'v1', resource: 'widgets' },
  });
  it('Exact: a rule for v2 does not match a v1 request', () => {
    assert.equal(matchRequest(v2Only(false), v1Request, registry), undefined);
  });
  it('Equivalent: a v1 request matches a rule for v2, invoked in v2', () => {
    const inv = matchRequest(v2Only(true), v1Request, registry);
    assert.deepEqual(inv?.resource, { group: 'example.com', version: 'v2', resource: 'widgets' });
    assert.deepEqual(inv?.kind, { group: 'example.com', version: 'v2', kind: 'Widget' });
    assert.equal(inv?.type?.version, 'v2');
  });
  it('an exact match is invoked in the request version', () => {
    const inv = matchRequest(v2Only(true), { ...v1Request, resource: { ...v1Request.resource, version: 'v2' } }, registry);
    assert.equal(inv?.resource.version, 'v2');
    assert.equal(inv?.type, undefined);
  });
  it('admission configurations are exempt', () => {
    assert.equal(isExemptFromAdmission({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' }), true);
    assert.equal(isExemptFromAdmission({ group: '', version: 'v1', resource: 'configmaps' }), false);
  });
});

describe('selectors', () => {
  const labelled = (labels: Record<string, string>): KObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels } });
  it('objectSelector matches the new or the old labels; empty matches all', () => {
    const sel = parseSelector({ matchLabels: { team: 'a' } });
    assert.equal(matchesObjectSelector(attrs({ object: labelled({ team: 'a' }) }), sel), true);
    assert.equal(matchesObjectSelector(attrs({ object: labelled({ team: 'b' }), oldObject: labelled({ team: 'a' }) }), sel), true);
    assert.equal(matchesObjectSelector(attrs({ object: labelled({ team: 'b' }) }), sel), false);
    assert.equal(matchesObjectSelector(attrs({}), sel), false);
    assert.equal(matchesObjectSelector(attrs({}), parseSelector({})), true);
  });

  it('namespaceSelector reads the namespace labels, a Namespace its own, cluster-scoped objects always match', async () => {
    const store = new MemoryStore({ historyWindowMs: 60_000 });
    const registry = builtinRegistry();
    const nsType = registry.lookup('', 'v1', 'namespaces')!;
    await store.create(objectKey(nsType, '', 'team-a'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a', labels: { env: 'prod' } } });
    await store.create(objectKey(nsType, '', 'team-b'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-b' } });
    const env = { store, registry } as unknown as CoreEnv;
    const sel = parseSelector({ matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] });
    assert.equal(await matchesNamespaceSelector(env, attrs({ namespace: 'team-a' }), sel), true);
    assert.equal(await matchesNamespaceSelector(env, attrs({ namespace: 'team-b' }), sel), false);
    const clusterRole = attrs({ namespace: '', resource: { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' } });
    assert.equal(await matchesNamespaceSelector(env, clusterRole, sel), true);
    const nsCreate = (labels: Record<string, string>) =>
      attrs({ namespace: '', name: 'new', resource: { group: '', version: 'v1', resource: 'namespaces' }, object: labelled(labels) });
    assert.equal(await matchesNamespaceSelector(env, nsCreate({ env: 'prod' }), sel), true);
    assert.equal(await matchesNamespaceSelector(env, nsCreate({ env: 'dev' }), sel), false);
    const nsDelete = attrs({ operation: 'DELETE', namespace: 'team-a', name: 'team-a', resource: { group: '', version: 'v1', resource: 'namespaces' } });
    assert.equal(await matchesNamespaceSelector(env, nsDelete, sel), true);
    await assert.rejects(matchesNamespaceSelector(env, attrs({ namespace: 'missing' }), sel), /namespaces "missing" not found/);
    await store.close();
  });
});
