// Authentication and authorization basics: anonymous requests under each
// authorization mode, system:masters, foreign client certificates, bearer
// tokens without a token authenticator, and impersonation.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { HttpsClient } from '../helpers/client.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { generateCa, generateClientCert } from '../../certs/pki.js';

const CM = '/api/v1/namespaces/default/configmaps';

describe('under AlwaysDeny (the default)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('forbids an anonymous request with a Status naming system:anonymous', async () => {
    const r = await s.anonymous.request('GET', CM);
    assert.equal(r.status, 403);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Forbidden');
    assert.match(r.json.message, /User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "default"/);
    assert.equal(r.json.details.kind, 'configmaps');
  });

  it('allows the admin in system:masters', async () => {
    const r = await s.admin.request('GET', CM);
    assert.equal(r.status, 200);
  });

  it('answers 401 for a client certificate from another CA', async () => {
    const ca = await readFile(devPkiPaths(s.dataDir).caCert, 'utf8');
    const other = generateCa('other-ca');
    const leaf = generateClientCert(other, { user: 'mallory', groups: ['system:masters'] });
    const client = new HttpsClient(s.url, { ca, cert: leaf.certPem, key: leaf.keyPem });
    try {
      const r = await client.request('GET', CM);
      assert.equal(r.status, 401);
      assert.equal(r.json.reason, 'Unauthorized');
    } finally {
      client.close();
    }
  });

  it('answers 401 for a bearer token when no token authenticator is configured', async () => {
    const r = await s.anonymous.request('GET', CM, undefined, { authorization: 'Bearer some-token' });
    assert.equal(r.status, 401);
    assert.equal(r.json.reason, 'Unauthorized');
  });

  it('denies an impersonated request as the impersonated user', async () => {
    const r = await s.admin.request('GET', CM, undefined, { 'impersonate-user': 'bob', 'impersonate-group': 'g1' });
    assert.equal(r.status, 403);
    assert.match(r.json.message, /User "bob" cannot list resource "configmaps"/);
  });

  it('lets system:masters act as system:masters through impersonation', async () => {
    const r = await s.admin.request('GET', CM, undefined, { 'impersonate-user': 'carol', 'impersonate-group': 'system:masters' });
    assert.equal(r.status, 200);
  });

  it('forbids impersonation to a user without the impersonate permission', async () => {
    const r = await s.anonymous.request('GET', CM, undefined, { 'impersonate-user': 'bob' });
    assert.equal(r.status, 403);
    assert.match(r.json.message, /cannot impersonate resource "users"/);
  });
});

describe('under AlwaysAllow', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
  });
  after(async () => {
    await s.close();
  });

  it('allows an anonymous request', async () => {
    const r = await s.anonymous.request('GET', CM);
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'ConfigMapList');
  });
});
