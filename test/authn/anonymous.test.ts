import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { AuthnError, type Authenticator } from '../../gateway/authn/types.js';
import { UnionAuthenticator } from '../../gateway/authn/union.js';
import { StatusError } from '../../lib/api/status.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const BODY = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };
const UNAUTHORIZED = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 };

describe('anonymous requests (default --anonymous-auth=true)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
  });
  after(() => s.close());

  it('serve a request without credentials as system:anonymous in system:unauthenticated', async () => {
    const r = await s.anonymous.request('POST', PATH, BODY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, { username: 'system:anonymous', groups: ['system:unauthenticated'] });
  });

  it('do not cover a request with a bad bearer token: 401 with a generic Status, details in the log only', async () => {
    const r = await s.anonymous.request('POST', PATH, BODY, { authorization: 'Bearer not-a-real-token-123' });
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, UNAUTHORIZED);
    assert.ok(s.logs.some((l) => l.startsWith('authentication failed')));
    assert.ok(!s.logs.some((l) => l.includes('not-a-real-token-123')));
  });

  it('do not cover a request with an Authorization scheme nobody handles', async () => {
    const r = await s.anonymous.request('POST', PATH, BODY, { authorization: 'Basic YWxpY2U6c2VjcmV0' });
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, UNAUTHORIZED);
  });
});

describe('--anonymous-auth=false', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--anonymous-auth=false', '--authorization-mode=AlwaysAllow'] });
  });
  after(() => s.close());

  it('answers 401 to a request without credentials, health endpoints included', async () => {
    for (const [method, path] of [
      ['POST', PATH],
      ['GET', '/healthz'],
      ['GET', '/api/v1/namespaces'],
    ] as const) {
      const r = await s.anonymous.request(method, path, method === 'POST' ? BODY : undefined);
      assert.equal(r.status, 401, path);
      assert.deepEqual(r.json, UNAUTHORIZED);
    }
  });

  it('still serves an authenticated user, in system:authenticated', async () => {
    const r = await s.admin.request('POST', PATH, BODY);
    assert.equal(r.status, 201);
    assert.deepEqual(r.json.status.userInfo.groups, ['system:masters', 'system:authenticated']);
  });
});

describe('the authenticator union', () => {
  const req = (authorization?: string) => ({ method: 'GET', url: '/x', headers: authorization ? { authorization } : {} }) as unknown as IncomingMessage;
  const ok: Authenticator = { name: 'ok', authenticate: () => ({ user: { username: 'u', groups: ['g', 'system:authenticated'] } }) };
  const failing: Authenticator = {
    name: 'failing',
    authenticate: () => {
      throw new AuthnError('failing', 'bad credential');
    },
  };
  const broken: Authenticator = {
    name: 'broken',
    authenticate: () => {
      throw new TypeError('cannot read properties of undefined');
    },
  };
  const notMine: Authenticator = { name: 'not-mine', authenticate: () => null };

  it('lets the first success decide whatever the order of a failing method', async () => {
    for (const list of [
      [failing, ok],
      [ok, failing],
      [broken, ok],
      [ok, broken],
    ]) {
      const u = new UnionAuthenticator(list, { anonymous: false });
      const r = await u.authenticate(req());
      assert.equal(r.user.username, 'u');
      assert.deepEqual(r.user.groups, ['g', 'system:authenticated']);
    }
  });

  it('turns a broken method into a logged 401, never a 500', async () => {
    const logs: string[] = [];
    const u = new UnionAuthenticator([notMine, broken], { anonymous: true, log: (m) => logs.push(m) });
    await assert.rejects(
      async () => u.authenticate(req()),
      (err: unknown) => err instanceof StatusError && err.code === 401 && err.message === 'Unauthorized',
    );
    assert.match(logs[0]!, /broken: internal error: cannot read properties of undefined/);
  });

  it('is anonymous only when nothing was presented', async () => {
    const u = new UnionAuthenticator([notMine], { anonymous: true });
    assert.equal((await u.authenticate(req())).user.username, 'system:anonymous');
    await assert.rejects(
      async () => u.authenticate(req('Bearer x')),
      (err: unknown) => err instanceof StatusError && err.code === 401,
    );
  });
});
