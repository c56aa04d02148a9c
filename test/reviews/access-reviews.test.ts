// The access-review APIs: SubjectAccessReview (v1 and v1beta1),
// SelfSubjectAccessReview, LocalSubjectAccessReview and
// SelfSubjectRulesReview, with kube's answers and errors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { encodeEnvelope, PROTOBUF_MEDIA_TYPE } from '../../lib/protobuf/codec.js';
import { ruleResolverFor } from '../../gateway/reviews/accessrules.js';
import { canI, identity, RBAC, roleBinding, userSubject, type Identity } from '../authz/rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

const AZ = '/apis/authorization.k8s.io';
const SAR = `${AZ}/v1/subjectaccessreviews`;
const sar = (spec: object, apiVersion = 'authorization.k8s.io/v1') => ({ apiVersion, kind: 'SubjectAccessReview', spec });

describe('access reviews', () => {
  let s: TestServer;
  let alice: Identity;
  before(async () => {
    s = await startTestServer();
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } });
    await s.admin.request('POST', `${RBAC}/namespaces/team-a/rolebindings`, roleBinding('team-a', 'alice-view', 'ClusterRole', 'view', [userSubject('alice')]));
    alice = await identity(s, 'alice', ['dev']);
    await eventually('the binding', () => canI(alice.client, { verb: 'list', resource: 'pods', namespace: 'team-a' }), { timeoutMs: 5000 });
  });
  after(async () => {
    alice.client.close();
    await s.close();
  });

  it("SubjectAccessReview v1 answers for any user, with RBAC's reason", async () => {
    const r = await s.admin.request(
      'POST',
      SAR,
      sar({ user: 'alice', groups: ['system:authenticated'], resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods' } }),
    );
    assert.equal(r.status, 201);
    assert.equal(r.json.apiVersion, 'authorization.k8s.io/v1');
    assert.equal(r.json.kind, 'SubjectAccessReview');
    assert.deepEqual(r.json.status, { allowed: true, reason: 'RBAC: allowed by RoleBinding "alice-view/team-a" of ClusterRole "view" to User "alice"' });
    assert.equal(r.json.spec.user, 'alice');
    const no = await s.admin.request('POST', SAR, sar({ user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'secrets' } }));
    assert.deepEqual(no.json.status, { allowed: false });
    const url = await s.admin.request('POST', SAR, sar({ user: 'x', groups: ['system:authenticated'], nonResourceAttributes: { path: '/apis', verb: 'get' } }));
    assert.equal(url.json.status.allowed, true);
  });

  it('SubjectAccessReview v1beta1 reads spec.group and answers in v1beta1', async () => {
    const r = await s.admin.request(
      'POST',
      `${AZ}/v1beta1/subjectaccessreviews`,
      sar({ user: 'zed', group: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } }, 'authorization.k8s.io/v1beta1'),
    );
    assert.equal(r.status, 201);
    assert.equal(r.json.apiVersion, 'authorization.k8s.io/v1beta1');
    assert.equal(r.json.status.allowed, true);
    const groupsIgnored = await s.admin.request(
      'POST',
      `${AZ}/v1beta1/subjectaccessreviews`,
      sar({ user: 'zed', groups: ['system:masters'], resourceAttributes: { verb: 'delete', resource: 'nodes' } }, 'authorization.k8s.io/v1beta1'),
    );
    assert.equal(groupsIgnored.json.status.allowed, false);
  });

  it('SubjectAccessReview needs the create permission on it', async () => {
    const r = await alice.client.request('POST', SAR, sar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }));
    assert.equal(r.status, 403);
  });

  it('refuses malformed reviews', async () => {
    const cases: Array<[object | string, number, RegExp]> = [
      [
        sar({ user: 'alice' }),
        422,
        /^SubjectAccessReview\.authorization\.k8s\.io "" is invalid: spec\.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified$/,
      ],
      [sar({ resourceAttributes: { verb: 'get', resource: 'pods' } }), 422, /spec\.user: Invalid value: "": at least one of user or group must be specified/],
      [
        sar({ user: 'a', resourceAttributes: { verb: 'get' }, nonResourceAttributes: { path: '/', verb: 'get' } }),
        422,
        /spec\.nonResourceAttributes: Invalid value: .*: cannot be specified in combination with resourceAttributes/,
      ],
      [sar({ user: 'a', resourceAttributes: 'pods' }), 400, /spec\.resourceAttributes must be an object/],
      [sar({ user: 'a', groups: 'dev', resourceAttributes: { verb: 'get' } }), 400, /spec\.groups must be a list of strings/],
      [
        { apiVersion: 'authorization.k8s.io/v1', kind: 'TokenReview', spec: {} },
        400,
        /the kind in the data \(TokenReview\) does not match the expected kind \(SubjectAccessReview\)/,
      ],
      ['{"spec": ', 400, /not valid JSON/],
    ];
    for (const [body, code, message] of cases) {
      const r = await s.admin.request('POST', SAR, body);
      assert.equal(r.status, code, `${JSON.stringify(body)}: ${r.text}`);
      assert.match(r.json.message, message);
    }
  });

  it('unknown and duplicate fields follow fieldValidation as for any create: Strict 400, Warn (the default) a warning, Ignore silence; never echoed', async () => {
    const body = sar({ user: 'alice', foo: 1, resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods', bar: 'x' } });
    const strict = await s.admin.request('POST', `${SAR}?fieldValidation=Strict`, body);
    assert.equal(strict.status, 400);
    assert.equal(strict.json.reason, 'BadRequest');
    assert.equal(
      strict.json.message,
      'SubjectAccessReview in version "v1" cannot be handled as a SubjectAccessReview: strict decoding error: unknown field "spec.foo", unknown field "spec.resourceAttributes.bar"',
    );
    const dup = await s.admin.request(
      'POST',
      `${SAR}?fieldValidation=Strict`,
      '{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{"user":"bob","user":"alice","resourceAttributes":{"verb":"get"}}}',
    );
    assert.equal(dup.status, 400);
    assert.match(dup.json.message, /strict decoding error: duplicate field "spec\.user"$/);
    for (const q of ['', '?fieldValidation=Warn']) {
      const warn = await s.admin.request('POST', `${SAR}${q}`, body);
      assert.equal(warn.status, 201, warn.text);
      assert.equal(warn.headers['warning'], '299 - "unknown field \\"spec.foo\\"", 299 - "unknown field \\"spec.resourceAttributes.bar\\""');
      assert.equal(warn.json.status.allowed, true);
      assert.deepEqual(warn.json.spec, { user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'list', resource: 'pods' } });
    }
    const ignore = await s.admin.request('POST', `${SAR}?fieldValidation=Ignore`, body);
    assert.equal(ignore.status, 201);
    assert.equal(ignore.headers['warning'], undefined);
    assert.equal(ignore.json.spec.foo, undefined);
    const bad = await s.admin.request('POST', `${SAR}?fieldValidation=Loud`, body);
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /fieldValidation parameter unsupported: "Loud"/);
    // A known field with the wrong type is still the reader's 400 naming it, whatever the level.
    const typed = await s.admin.request('POST', `${SAR}?fieldValidation=Strict`, sar({ user: 'a', groups: 'dev', resourceAttributes: { verb: 'get' } }));
    assert.equal(typed.status, 400);
    assert.match(typed.json.message, /spec\.groups must be a list of strings/);
  });

  it('SelfSubjectAccessReview checks the requester, also in protobuf as kubectl may send it', async () => {
    assert.equal(await canI(alice.client, { verb: 'watch', resource: 'configmaps', namespace: 'team-a' }), true);
    assert.equal(await canI(alice.client, { verb: 'watch', resource: 'configmaps', namespace: 'team-b' }), false);
    const body = encodeEnvelope({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: { resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods' } },
    });
    const r = await alice.client.request('POST', `${AZ}/v1/selfsubjectaccessreviews`, body, {
      'content-type': PROTOBUF_MEDIA_TYPE,
      accept: 'application/json',
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.allowed, true);
    const anon = await s.anonymous.request('POST', `${AZ}/v1/selfsubjectaccessreviews`, {
      kind: 'SelfSubjectAccessReview',
      apiVersion: 'authorization.k8s.io/v1',
      spec: { nonResourceAttributes: { path: '/version', verb: 'get' } },
    });
    assert.equal(anon.status, 403, 'system:basic-user is bound to authenticated users only');
  });

  it('LocalSubjectAccessReview must agree with its namespace', async () => {
    const path = `${AZ}/v1/namespaces/team-a/localsubjectaccessreviews`;
    const lsar = (spec: object, meta: object = {}) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'LocalSubjectAccessReview', metadata: meta, spec });
    const ok = await s.admin.request('POST', path, lsar({ user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods' } }));
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.json.status.allowed, true);
    assert.equal(ok.json.metadata.namespace, 'team-a');
    const other = await s.admin.request('POST', path, lsar({ user: 'alice', resourceAttributes: { namespace: 'team-b', verb: 'get', resource: 'pods' } }));
    assert.equal(other.status, 400);
    assert.equal(other.json.message, 'spec.resourceAttributes.namespace must match namespace: team-a');
    const meta = await s.admin.request(
      'POST',
      path,
      lsar({ user: 'alice', resourceAttributes: { namespace: 'team-a', verb: 'get', resource: 'pods' } }, { namespace: 'team-b' }),
    );
    assert.equal(meta.status, 400);
    const urls = await s.admin.request('POST', path, lsar({ user: 'alice', nonResourceAttributes: { path: '/', verb: 'get' } }));
    assert.equal(urls.status, 422);
    const cluster = await s.admin.request(
      'POST',
      `${AZ}/v1/localsubjectaccessreviews`,
      lsar({ user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods' } }),
    );
    assert.equal(cluster.status, 404);
  });

  it('SelfSubjectRulesReview lists the rules RBAC grants in a namespace', async () => {
    const post = (spec: object) =>
      alice.client.request('POST', `${AZ}/v1/selfsubjectrulesreviews`, { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec });
    const r = await post({ namespace: 'team-a' });
    assert.equal(r.status, 201);
    assert.equal(r.json.status.incomplete, false);
    assert.ok(r.json.status.resourceRules.some((x: { resources: string[]; verbs: string[] }) => x.resources.includes('pods') && x.verbs.includes('list')));
    assert.ok(r.json.status.nonResourceRules.some((x: { nonResourceURLs: string[] }) => x.nonResourceURLs.includes('/version')));
    const b = await post({ namespace: 'team-b' });
    assert.ok(!b.json.status.resourceRules.some((x: { resources: string[] }) => x.resources.includes('pods')));
    const none = await post({});
    assert.equal(none.status, 400);
    assert.equal(none.json.message, 'no namespace on request');
  });

  it('a rules review is incomplete when an authorizer cannot enumerate', () => {
    const user = { username: 'n', groups: ['system:nodes'] };
    assert.deepEqual(ruleResolverFor('Webhook', {})(user, 'x'), {
      rules: [],
      incomplete: true,
      errors: ['webhook authorizer does not support user rule resolution'],
    });
    assert.equal(ruleResolverFor('Node', {})(user, 'x').incomplete, true);
    assert.equal(ruleResolverFor('Node', {})({ username: 'u', groups: [] }, 'x').incomplete, false);
    assert.equal(ruleResolverFor('AlwaysAllow', {})(user, 'x').rules.length, 2);
  });
});

describe('access reviews under AlwaysDeny', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysDeny'] });
  });
  after(async () => {
    await s.close();
  });

  it('report a real deny with denied: true', async () => {
    const r = await s.admin.request('POST', SAR, sar({ user: 'bob', resourceAttributes: { verb: 'get', resource: 'pods' } }));
    assert.deepEqual(r.json.status, { allowed: false, denied: true, reason: 'AlwaysDeny' });
  });
});
