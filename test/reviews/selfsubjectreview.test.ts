import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { encodeEnvelope } from '../../lib/protobuf/codec.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const BODY = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

describe('SelfSubjectReview', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
  });
  after(() => s.close());

  it('tells the admin who they are', async () => {
    const r = await s.admin.request('POST', PATH, BODY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json, {
      kind: 'SelfSubjectReview',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { creationTimestamp: null },
      status: { userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } },
    });
  });

  it('tells an anonymous caller it is system:anonymous', async () => {
    const r = await s.anonymous.request('POST', PATH, BODY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('shows the impersonated user', async () => {
    const r = await s.admin.request('POST', PATH, BODY, { 'impersonate-user': 'bob', 'impersonate-group': 'qa' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.userInfo.username, 'bob');
    assert.ok(r.json.status.userInfo.groups.includes('qa'));
  });

  it('accepts a protobuf body', async () => {
    const r = await s.admin.request('POST', PATH, encodeEnvelope(BODY), { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/json' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.userInfo.username, 'admin');
  });

  it('makes kubectl auth whoami show admin in system:masters', async () => {
    const { stdout } = await run('kubectl', ['--kubeconfig', s.kubeconfig, 'auth', 'whoami']);
    assert.match(stdout, /Username\s+admin/);
    assert.match(stdout, /Groups\s+\[system:masters system:authenticated\]/);
    const json = JSON.parse((await run('kubectl', ['--kubeconfig', s.kubeconfig, 'auth', 'whoami', '-o', 'json'])).stdout);
    assert.deepEqual(json.status.userInfo, { username: 'admin', groups: ['system:masters', 'system:authenticated'] });
  });

  it('answers under authentication.k8s.io/v1beta1 too, as kube 1.27 did for kubectl 1.27', async () => {
    const r = await s.admin.request('POST', '/apis/authentication.k8s.io/v1beta1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'authentication.k8s.io/v1beta1');
    assert.equal(r.json.status.userInfo.username, 'admin');
    const discovery = await s.admin.request('GET', '/apis/authentication.k8s.io/v1beta1');
    assert.ok(
      discovery.json.resources.some((x: { name: string }) => x.name === 'selfsubjectreviews'),
      discovery.text,
    );
  });

  it('is listed by discovery as create-only', async () => {
    const r = await s.admin.request('GET', '/apis/authentication.k8s.io/v1');
    const entry = r.json.resources.find((x: { name: string }) => x.name === 'selfsubjectreviews');
    assert.deepEqual(entry, { name: 'selfsubjectreviews', singularName: 'selfsubjectreview', namespaced: false, kind: 'SelfSubjectReview', verbs: ['create'] });
  });
});
