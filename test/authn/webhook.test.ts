import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ServerResponse } from 'node:http';
import { stringify } from 'yaml';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startServer } from '../../gateway/server/app.js';
import { HttpsClient } from '../helpers/client.js';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';
import { sendJson, startHttpsPeer, tokenReviewAnswer, type HttpsPeer, type PeerRequest } from './fixtures.js';
import { startIdp, type TestIdp } from './oidc-idp.js';

const webhookClientCa = generateCa('webhook-client-ca');
const webhookClient = generateClientCert(webhookClientCa, { user: 'gatehouse-webhook' });
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The remote token service: answers by token. */
function tokenService(r: PeerRequest, res: ServerResponse): void {
  const review = r.json as { apiVersion: string; spec: { token: string; audiences?: string[] } };
  const token = review?.spec?.token;
  switch (token) {
    case 'good-token':
      return sendJson(
        res,
        200,
        tokenReviewAnswer(review, {
          authenticated: true,
          user: { username: 'jane', uid: 'u-42', groups: ['dev'], extra: { 'example.com/team': ['blue'] } },
        }),
      );
    case 'proto-token': // keys a plain object inherits are data in a webhook's answer
      return sendJson(
        res,
        200,
        tokenReviewAnswer(review, {
          authenticated: true,
          user: { username: 'proto', extra: { ['__proto__']: ['p'], constructor: ['c'] } },
        }),
      );
    case 'aud-token':
      return sendJson(res, 200, tokenReviewAnswer(review, { authenticated: true, user: { username: 'aud-user' }, audiences: ['b', 'c'] }));
    case 'refused-token':
      return sendJson(res, 200, tokenReviewAnswer(review, { authenticated: false, error: 'the token was revoked' }));
    case 'garbage-token':
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"apiVersion": [not json');
      return;
    case 'wrong-version-token':
      return sendJson(res, 200, { apiVersion: 'authentication.k8s.io/v0', kind: 'TokenReview', status: { authenticated: true, user: { username: 'x' } } });
    case 'no-user-token':
      return sendJson(res, 200, tokenReviewAnswer(review, { authenticated: true }));
    case 'error-token':
      return sendJson(res, 500, { message: 'boom' });
    case 'hanging-token':
      return; // never answers
    default:
      return sendJson(res, 200, tokenReviewAnswer(review, { authenticated: false }));
  }
}

let peer: HttpsPeer;
let dir = '';

async function webhookKubeconfig(name: string, server: string, ca: string, user: Record<string, unknown>): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'webhook',
      clusters: [{ name: 'token-service', cluster: { server, 'certificate-authority-data': b64(ca) } }],
      users: [{ name: 'apiserver', user }],
      contexts: [{ name: 'webhook', context: { cluster: 'token-service', user: 'apiserver' } }],
    }),
  );
  return file;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-webhook-'));
  peer = await startHttpsPeer(tokenService, { clientCa: webhookClientCa });
});
after(async () => {
  await peer.close();
  await rm(dir, { recursive: true, force: true });
});

const whoami = (s: TestServer, token: string) =>
  s.anonymous.request(
    'POST',
    '/apis/authentication.k8s.io/v1/selfsubjectreviews',
    { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    { authorization: `Bearer ${token}` },
  );
const callsFor = (token: string) => peer.requests.filter((r) => r.json?.spec?.token === token).length;

describe('token webhook (v1beta1, the default)', () => {
  let s: TestServer;
  before(async () => {
    const config = await webhookKubeconfig('v1beta1.kubeconfig', `${peer.url}/authenticate`, peer.ca.certPem, {
      'client-certificate-data': b64(webhookClient.certPem),
      'client-key-data': b64(webhookClient.keyPem),
    });
    s = await startTestServer({
      flags: ['--authorization-mode=AlwaysAllow', '--api-audiences=https://gatehouse.test', `--authentication-token-webhook-config-file=${config}`],
      hooks: { tokenWebhookTimeoutMs: 500 },
    });
  });
  after(() => s.close());

  it('authenticates the user the webhook names, with uid, groups and extra', async () => {
    const r = await whoami(s, 'good-token');
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, {
      username: 'jane',
      uid: 'u-42',
      groups: ['dev', 'system:authenticated'],
      extra: { 'example.com/team': ['blue'] },
    });
  });

  it('keeps extra keys named __proto__ and constructor as data', async () => {
    const r = await whoami(s, 'proto-token');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.text.includes('"extra":{"__proto__":["p"],"constructor":["c"]}'), true, r.text);
  });

  it('posts a v1beta1 TokenReview with the token and the API audiences to the configured path over mutual TLS', () => {
    const call = peer.requests.find((r) => r.json?.spec?.token === 'good-token');
    assert.ok(call);
    assert.equal(call.method, 'POST');
    assert.equal(call.url, '/authenticate');
    assert.equal(call.clientCn, 'gatehouse-webhook');
    assert.deepEqual(call.json, {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'TokenReview',
      spec: { token: 'good-token', audiences: ['https://gatehouse.test'] },
    });
  });

  it('answers a repeated token from the cache without calling the webhook again', async () => {
    const before = callsFor('good-token');
    for (let i = 0; i < 3; i++) assert.equal((await whoami(s, 'good-token')).status, 201);
    assert.equal(callsFor('good-token'), before);
  });

  it('rejects a token the webhook refuses with a generic 401 and logs the reason without the token', async () => {
    const r = await whoami(s, 'refused-token');
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    assert.ok(
      s.logs.some((l) => l.includes('the token was revoked')),
      s.logs.join('\n'),
    );
    assert.ok(!s.logs.some((l) => l.includes('refused-token')));
  });

  for (const [what, token] of [
    ['garbage', 'garbage-token'],
    ['a TokenReview of another apiVersion', 'wrong-version-token'],
    ['authenticated without a user', 'no-user-token'],
    ['an HTTP 500', 'error-token'],
  ] as const) {
    it(`treats ${what} from the webhook as a failed authentication`, async () => {
      const r = await whoami(s, token);
      assert.equal(r.status, 401);
      assert.equal(r.json.message, 'Unauthorized');
    });
  }

  it('gives up on a hanging webhook after the timeout and answers 401', async () => {
    const r = await whoami(s, 'hanging-token');
    assert.equal(r.status, 401);
    assert.ok(
      s.logs.some((l) => /timed out after 500ms/.test(l)),
      s.logs.join('\n'),
    );
    // The server is still fine.
    assert.equal((await whoami(s, 'good-token')).status, 201);
  });

  it("counts the webhook round trips by code (kube's delegated authentication metrics)", async () => {
    const text = (await s.admin.request('GET', '/metrics')).text;
    assert.match(text, /apiserver_delegated_authn_request_total\{code="200"\} [1-9]/);
    assert.match(text, /apiserver_delegated_authn_request_total\{code="<error>"\} [1-9]/, 'the hanging call');
    assert.match(text, /apiserver_delegated_authn_request_duration_seconds_count\{code="200"\} [1-9]/);
  });
});

describe('token webhook (v1)', () => {
  let s: TestServer;
  before(async () => {
    const config = await webhookKubeconfig('v1.kubeconfig', `${peer.url}/v1`, peer.ca.certPem, {
      'client-certificate-data': b64(webhookClient.certPem),
      'client-key-data': b64(webhookClient.keyPem),
    });
    s = await startTestServer({
      flags: [
        '--authorization-mode=AlwaysAllow',
        `--authentication-token-webhook-config-file=${config}`,
        '--authentication-token-webhook-version=v1',
        '--authentication-token-webhook-cache-ttl=0',
      ],
    });
  });
  after(() => s.close());

  it('sends and expects authentication.k8s.io/v1 and, with no cache, asks every time', async () => {
    const before = peer.requests.filter((r) => r.url === '/v1').length;
    assert.equal((await whoami(s, 'good-token')).status, 201);
    assert.equal((await whoami(s, 'good-token')).status, 201);
    const calls = peer.requests.filter((r) => r.url === '/v1');
    assert.equal(calls.length, before + 2);
    assert.equal(calls.at(-1)!.json.apiVersion, 'authentication.k8s.io/v1');
  });
});

describe('token webhook configuration', () => {
  it('refuses to start with a webhook that is not https', async () => {
    const config = await webhookKubeconfig('http.kubeconfig', 'http://127.0.0.1:1/authenticate', peer.ca.certPem, {});
    const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
    const parsed = parseServeFlags([
      '--secure-port',
      String(await freePort()),
      '--data-dir',
      dataDir,
      '--storage-backend=memory',
      `--authentication-token-webhook-config-file=${config}`,
    ]);
    assert.ok('options' in parsed);
    await assert.rejects(
      startServer(parsed.options, { log: () => undefined }),
      /--authentication-token-webhook-config-file: the server must be an https:\/\/ URL/,
    );
    await rm(dataDir, { recursive: true, force: true });
  });

  it("refuses a webhook server URL with user info, a query or a fragment, naming the file and field (kube's webhook URL rules)", async () => {
    for (const [name, server, words] of [
      ['userinfo', `${peer.url.replace('https://', 'https://user:secret@')}/authenticate`, 'user information is not permitted in the URL'],
      ['query', `${peer.url}/authenticate?x=1`, 'query parameters are not permitted in the URL'],
      ['fragment', `${peer.url}/authenticate#part`, 'fragments are not permitted in the URL'],
    ] as const) {
      const config = await webhookKubeconfig(`${name}.kubeconfig`, server, peer.ca.certPem, {});
      const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
      const parsed = parseServeFlags([
        '--secure-port',
        String(await freePort()),
        '--data-dir',
        dataDir,
        '--storage-backend=memory',
        `--authentication-token-webhook-config-file=${config}`,
      ]);
      assert.ok('options' in parsed);
      await assert.rejects(startServer(parsed.options, { log: () => undefined }), (err: Error) => {
        assert.ok(
          err.message.includes(`invalid value "${config}" for --authentication-token-webhook-config-file: cluster "token-service": server: ${words}`),
          err.message,
        );
        return true;
      });
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses an unknown webhook version', () => {
    assert.deepEqual(parseServeFlags(['--authentication-token-webhook-version=v2']), {
      error: 'invalid value "v2" for --authentication-token-webhook-version: must be v1 or v1beta1',
    });
  });
});

describe('Gatehouse as the token webhook of another server', () => {
  let first: TestServer;
  let second: TestServer;
  before(async () => {
    const config = await webhookKubeconfig('first.kubeconfig', `${peer.url}/authenticate`, peer.ca.certPem, {
      'client-certificate-data': b64(webhookClient.certPem),
      'client-key-data': b64(webhookClient.keyPem),
    });
    first = await startTestServer({ flags: [`--authentication-token-webhook-config-file=${config}`] });
    // The second server calls the first one's TokenReview endpoint with the first one's admin certificate.
    const pki = devPkiPaths(first.dataDir);
    const [ca, cert, key] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.adminCert, 'utf8'), readFile(pki.adminKey, 'utf8')]);
    const chained = await webhookKubeconfig('second.kubeconfig', `${first.url}/apis/authentication.k8s.io/v1beta1/tokenreviews`, ca, {
      'client-certificate-data': b64(cert),
      'client-key-data': b64(key),
    });
    second = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow', `--authentication-token-webhook-config-file=${chained}`] });
  });
  after(async () => {
    await second.close();
    await first.close();
  });

  it('authenticates a token through the first Gatehouse', async () => {
    const r = await whoami(second, 'good-token');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.userInfo.username, 'jane');
    assert.deepEqual(r.json.status.userInfo.groups, ['dev', 'system:authenticated']);
    assert.deepEqual(r.json.status.userInfo.extra, { 'example.com/team': ['blue'] });
  });

  it('refuses a token the first Gatehouse does not accept', async () => {
    const r = await whoami(second, 'refused-token');
    assert.equal(r.status, 401);
    assert.ok(
      second.logs.some((l) => l.includes('the token was revoked')),
      second.logs.join('\n'),
    );
  });
});

void HttpsClient;

describe('token webhook beside OIDC', () => {
  let s: TestServer;
  let idp: TestIdp;
  before(async () => {
    idp = await startIdp(dir);
    const config = await webhookKubeconfig('with-oidc.kubeconfig', `${peer.url}/authenticate`, peer.ca.certPem, {
      'client-certificate-data': b64(webhookClient.certPem),
      'client-key-data': b64(webhookClient.keyPem),
    });
    s = await startTestServer({
      flags: [
        '--authorization-mode=AlwaysAllow',
        `--authentication-token-webhook-config-file=${config}`,
        '--authentication-token-webhook-cache-ttl=0',
        '--oidc-issuer-url',
        idp.url,
        '--oidc-client-id',
        'gatehouse',
        '--oidc-ca-file',
        idp.caFile,
      ],
    });
  });
  after(async () => {
    await s.close();
    await idp.close();
  });

  it('never sends a token OIDC accepts to the webhook (the webhook is asked last, as in kube-apiserver)', async () => {
    const token = await idp.sign({ sub: 'olivia' });
    for (let i = 0; i < 2; i++) {
      const r = await whoami(s, token);
      assert.equal(r.status, 201, r.text);
      assert.equal(r.json.status.userInfo.username, `${idp.url}#olivia`);
    }
    assert.equal(callsFor(token), 0);
    // A token no other method knows still goes to the webhook.
    assert.equal((await whoami(s, 'good-token')).status, 201);
  });
});
