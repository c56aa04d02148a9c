// The review APIs answer in protobuf when asked (client-go's default for
// built-in types), read with the test's own decoder written from
// kubernetes/api's field numbers, and take protobuf bodies.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { unwrap, wrap } from '../http/protobuf-k8s.js';

const PB = 'application/vnd.kubernetes.protobuf';

describe('review APIs in protobuf', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(() => s?.close());

  it('answers SelfSubjectReview in protobuf', async () => {
    const r = await s.admin.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { accept: PB },
    );
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['content-type'], PB);
    const { apiVersion, kind, object } = unwrap(r.body);
    assert.deepEqual([apiVersion, kind], ['authentication.k8s.io/v1', 'SelfSubjectReview']);
    assert.equal(object.status.userInfo.username, 'admin');
    assert.ok(object.status.userInfo.groups.includes('system:masters'));
  });

  it('takes a protobuf TokenReview and answers it in protobuf', async () => {
    const body = wrap('authentication.k8s.io/v1', 'TokenReview', { spec: { token: 'not-a-token' } });
    const r = await s.admin.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', body, { 'content-type': PB, accept: `${PB}, application/json` });
    assert.equal(r.status, 201, r.text);
    const { kind, object } = unwrap(r.body);
    assert.equal(kind, 'TokenReview');
    assert.equal(object.spec.token, 'not-a-token');
    assert.equal(object.status.authenticated ?? false, false);
  });

  it('answers a SubjectAccessReview in protobuf', async () => {
    const r = await s.admin.request(
      'POST',
      '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: { user: 'someone', groups: ['system:masters'], resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'default' } },
      },
      { accept: PB },
    );
    assert.equal(r.status, 201, r.text);
    const { kind, object } = unwrap(r.body);
    assert.equal(kind, 'SubjectAccessReview');
    assert.equal(object.status.allowed, true);
    assert.equal(object.spec.resourceAttributes.resource, 'pods');
  });

  it('still answers JSON by default, and 406 to a type it cannot write', async () => {
    const r = await s.admin.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(r.json.kind, 'SelfSubjectReview');
    const bad = await s.admin.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { accept: 'text/csv' },
    );
    assert.equal(bad.status, 406);
  });
});
