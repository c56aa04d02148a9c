// The classifier alone: kube's matching rules for subjects, resource and
// non-resource rules, precedence then name, dangling schemas skipped, the
// flow distinguisher; shuffle sharding's hands.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { Classifier, type FlowRequest } from '../../gateway/flowcontrol/classifier.js';
import { dealHand, flowHash } from '../../gateway/flowcontrol/shuffle.js';

const V = 'flowcontrol.apiserver.k8s.io/v1';
const level = (name: string): KObject => ({
  apiVersion: V,
  kind: 'PriorityLevelConfiguration',
  metadata: { name, uid: `pl-${name}` },
  spec: name === 'exempt' ? { type: 'Exempt', exempt: {} } : { type: 'Limited', limited: { nominalConcurrencyShares: 10, limitResponse: { type: 'Reject' } } },
});
const schema = (name: string, pl: string, precedence: number, rules: unknown[], distinguisher?: string): KObject => ({
  apiVersion: V,
  kind: 'FlowSchema',
  metadata: { name, uid: `fs-${name}` },
  spec: {
    priorityLevelConfiguration: { name: pl },
    matchingPrecedence: precedence,
    rules,
    ...(distinguisher ? { distinguisherMethod: { type: distinguisher } } : {}),
  },
});
const all = { verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] };

function classifier(levels: string[], schemas: KObject[]): Classifier {
  const c = new Classifier();
  const [fs, pl] = c.reflected();
  pl!.reset(levels.map(level));
  fs!.reset(schemas);
  return c;
}

const req = (over: Partial<FlowRequest> & { user?: FlowRequest['user'] }): FlowRequest => ({
  user: { username: 'jane', groups: ['system:authenticated'] },
  isResourceRequest: true,
  verb: 'get',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  namespace: 'default',
  path: '/api/v1/namespaces/default/pods/x',
  ...over,
});

describe('APF classifier', () => {
  it('matches users, groups and service accounts (a name or *) as kube does', () => {
    const c = classifier(
      ['a', 'b', 'c', 'catch-all'],
      [
        schema('by-user', 'a', 10, [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], resourceRules: [all] }]),
        schema('by-sa', 'b', 20, [{ subjects: [{ kind: 'ServiceAccount', serviceAccount: { namespace: 'ops', name: '*' } }], resourceRules: [all] }]),
        schema('by-group', 'c', 30, [{ subjects: [{ kind: 'Group', group: { name: 'devs' } }], resourceRules: [all] }]),
        schema('catch-all', 'catch-all', 10000, [{ subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }], resourceRules: [all] }]),
      ],
    );
    assert.equal(c.classify(req({})).schema.name, 'by-user');
    assert.equal(c.classify(req({ user: { username: 'system:serviceaccount:ops:bot', groups: [] } })).schema.name, 'by-sa');
    assert.equal(c.classify(req({ user: { username: 'system:serviceaccount:dev:bot', groups: ['devs'] } })).schema.name, 'by-group');
    assert.equal(c.classify(req({ user: { username: 'joe', groups: ['system:authenticated'] } })).schema.name, 'catch-all');
    // No schema matches at all (no groups): kube's catch-all still takes it.
    assert.equal(c.classify(req({ user: { username: 'nobody', groups: [] } })).level.name, 'catch-all');
  });

  it('remembers answers per user object, and forgets them when a schema or level changes', () => {
    const c = classifier(
      ['a', 'b', 'catch-all'],
      [schema('catch-all', 'catch-all', 10000, [{ subjects: [{ kind: 'Group', group: { name: 'system:authenticated' } }], resourceRules: [all] }])],
    );
    const jane = { username: 'jane', groups: ['system:authenticated'] };
    assert.equal(c.classify(req({ user: jane })).schema.name, 'catch-all');
    assert.equal(c.classify(req({ user: jane })), c.classify(req({ user: jane })), 'the same answer object for the same shape');
    assert.equal(c.classify(req({ user: jane, verb: 'list' })).schema.name, 'catch-all');
    const [fs, pl] = c.reflected();
    fs!.set(schema('janes', 'a', 10, [{ subjects: [{ kind: 'User', user: { name: 'jane' } }], resourceRules: [{ ...all, verbs: ['get'] }] }]), 'ADDED');
    assert.equal(c.classify(req({ user: jane })).schema.name, 'janes', 'a new schema is seen at once');
    assert.equal(c.classify(req({ user: jane, verb: 'list' })).schema.name, 'catch-all', 'another request shape of the same user');
    pl!.remove(level('a'));
    assert.equal(c.classify(req({ user: jane })).schema.name, 'catch-all', 'a dangling schema matches nothing once its level is gone');
  });

  it('matches verbs, groups, resources with subresources, cluster scope and namespaces', () => {
    const subjects = [{ kind: 'Group', group: { name: '*' } }];
    const c = classifier(
      ['a', 'catch-all'],
      [
        schema('status-writes', 'a', 10, [
          { subjects, resourceRules: [{ verbs: ['update', 'patch'], apiGroups: [''], resources: ['pods/status'], namespaces: ['kube-system'] }] },
        ]),
        schema('cluster-nodes', 'a', 20, [{ subjects, resourceRules: [{ verbs: ['list'], apiGroups: [''], resources: ['nodes'], clusterScope: true }] }]),
        schema('ns-only', 'a', 30, [{ subjects, resourceRules: [{ verbs: ['list'], apiGroups: ['apps'], resources: ['deployments'], namespaces: ['*'] }] }]),
        schema('catch-all', 'catch-all', 10000, [{ subjects, resourceRules: [all], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }]),
      ],
    );
    const name = (q: Partial<FlowRequest>) => c.classify(req(q)).schema.name;
    assert.equal(name({ verb: 'patch', resource: 'pods', subresource: 'status', namespace: 'kube-system' }), 'status-writes');
    assert.equal(name({ verb: 'patch', resource: 'pods', subresource: 'status', namespace: 'default' }), 'catch-all');
    assert.equal(name({ verb: 'patch', resource: 'pods', namespace: 'kube-system' }), 'catch-all');
    assert.equal(name({ verb: 'list', resource: 'nodes', namespace: '' }), 'cluster-nodes');
    assert.equal(name({ verb: 'list', apiGroup: 'apps', resource: 'deployments', namespace: 'x' }), 'ns-only');
    // Not cluster scoped: an all-namespaces list does not match `namespaces: ['*']`.
    assert.equal(name({ verb: 'list', apiGroup: 'apps', resource: 'deployments', namespace: '' }), 'catch-all');
  });

  it('matches non-resource URLs exactly, by /prefix/*, or *', () => {
    const subjects = [{ kind: 'Group', group: { name: '*' } }];
    const c = classifier(
      ['a', 'catch-all'],
      [
        schema('health', 'a', 10, [{ subjects, nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] }] }]),
        schema('catch-all', 'catch-all', 10000, [{ subjects, nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }]),
      ],
    );
    const name = (path: string, verb = 'get') => c.classify(req({ isResourceRequest: false, path, verb, resource: '', namespace: '' })).schema.name;
    assert.equal(name('/healthz'), 'health');
    assert.equal(name('/healthz/etcd'), 'catch-all');
    assert.equal(name('/apis'), 'health');
    assert.equal(name('/apis/apps/v1'), 'health');
    assert.equal(name('/apisx'), 'catch-all');
    assert.equal(name('/healthz', 'post'), 'catch-all');
    // A resource request never matches non-resource rules.
    assert.equal(c.classify(req({})).schema.name, 'catch-all');
  });

  it('orders by precedence then name, skips schemas whose level is missing, and distinguishes flows', () => {
    const subjects = [{ kind: 'Group', group: { name: '*' } }];
    const c = classifier(
      ['a', 'b', 'catch-all'],
      [
        schema('zeta', 'a', 50, [{ subjects, resourceRules: [all] }], 'ByNamespace'),
        schema('alpha', 'b', 50, [{ subjects, resourceRules: [all] }], 'ByUser'),
        schema('dangling', 'gone', 1, [{ subjects, resourceRules: [all] }]),
        schema('catch-all', 'catch-all', 10000, [{ subjects, resourceRules: [all] }]),
      ],
    );
    const got = c.classify(req({}));
    assert.equal(got.schema.name, 'alpha');
    assert.equal(got.level.uid, 'pl-b');
    assert.notEqual(got.flow, c.classify(req({ user: { username: 'other', groups: [] } })).flow);
    assert.equal(got.flow, c.classify(req({ namespace: 'elsewhere' })).flow);
  });

  it('deals distinct queues, the same hand for the same flow', () => {
    for (const [deck, hand] of [
      [64, 8],
      [8, 8],
      [128, 6],
      [1, 1],
    ] as const) {
      for (const flow of ['a', 'b', 'global-default\u0000jane']) {
        const h = dealHand(flowHash(flow), deck, hand);
        assert.equal(h.length, hand);
        assert.equal(new Set(h).size, hand, `${flow} ${deck}/${hand}: ${h.join(',')}`);
        assert.ok(h.every((q) => q >= 0 && q < deck));
        assert.deepEqual(dealHand(flowHash(flow), deck, hand), h);
      }
    }
  });
});
