// `kubectl get ns` with a kubeconfig whose user runs `kubectl gatehouse
// oidc-login get-token`, against a started Gatehouse that accepts the
// provider's ID tokens: the first call opens a real Chromium on the real
// provider's login and consent pages (authorization code + PKCE on a
// loopback redirect), later calls ask the provider nothing, an expired ID
// token is refreshed without a browser, and a revoked refresh token means a
// new browser login. kubectl 1.27 and 1.33 both run the plugin, and its
// ExecCredential is checked against client-go's schema.
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import { Agent, fetch as undiciFetch } from 'undici';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startLoginIdp, CLIENT_ID, type LoginIdp } from './loginidp.js';
import { chromiumSkip, signIn, startBrowser, type Browser } from './browser.js';
import { binDir, kubectlOf, plugin, run, writeKubeconfig } from './helpers.js';
import { cacheFileName } from '../../gateway/cli/oidclogin/tokencache.js';

const k133 = kubectlOf('1.33');
const k127 = kubectlOf('1.27');
const skip = chromiumSkip || (!k133 || !k127 ? 'kubectl 1.27 and 1.33 are not both installed' : false);

let dir: string;
let idp: LoginIdp;
let s: TestServer;
let browser: Browser;
let kubeconfig: string;
let cacheDir: string;
let args: string[];
const bins: Record<string, string> = {};

before(async () => {
  if (skip) return;
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidclogin-'));
  idp = await startLoginIdp(dir);
  s = await startTestServer({
    flags: [
      '--oidc-issuer-url',
      idp.url,
      '--oidc-client-id',
      CLIENT_ID,
      '--oidc-ca-file',
      idp.caFile,
      '--oidc-groups-claim',
      'groups',
      '--authorization-mode',
      'AlwaysAllow',
    ],
  });
  browser = await startBrowser(idp.spki);
  cacheDir = join(dir, 'cache');
  args = [
    `--oidc-issuer-url=${idp.url}`,
    `--oidc-client-id=${CLIENT_ID}`,
    `--certificate-authority=${idp.caFile}`,
    `--token-cache-dir=${cacheDir}`,
    `--browser-command=${browser.command}`,
    '--listen-address=127.0.0.1:0',
    '--oidc-extra-scope=email',
    '--authentication-timeout-sec=60',
  ];
  kubeconfig = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, s.url, devPkiPaths(s.dataDir).caCert, args);
  bins['1.33'] = binDir(dir, k133!);
  bins['1.27'] = binDir(dir, k127!);
});

after(async () => {
  await browser?.close();
  await s?.close();
  await idp?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function kubectl(version: string, ...cmd: string[]) {
  return run('kubectl', cmd, { PATH: `${bins[version]}:${process.env['PATH']}`, HOME: dir, KUBECONFIG: kubeconfig });
}

const cacheFile = () => join(cacheDir, cacheFileName({ issuerUrl: idp.url, clientId: CLIENT_ID, scopes: ['openid', 'email'] }));
const cached = () => JSON.parse(readFileSync(cacheFile(), 'utf8')) as { id_token: string; refresh_token?: string };

/** Replaces the cached ID token with one that expired a minute ago (the refresh token stays). */
async function expireCachedIdToken(): Promise<void> {
  const c = cached();
  const expired = await idp.sign({ sub: 'alice', exp: Math.floor(Date.now() / 1000) - 60 });
  writeFileSync(cacheFile(), JSON.stringify({ ...c, id_token: expired }), { mode: 0o600 });
}

describe('oidc-login through kubectl with a real browser', { skip }, () => {
  it('the first kubectl call opens Chromium once, the person signs in, and kubectl lists namespaces as that user', async () => {
    let page = '';
    browser.onOpen(async (p, url) => {
      assert.match(url, /code_challenge_method=S256/);
      assert.match(url, new RegExp(`redirect_uri=${encodeURIComponent('http://localhost:')}\\d+&`));
      page = await signIn(p, url, 'alice');
    });
    const r = await kubectl('1.33', 'get', 'ns', '-o', 'name');
    await browser.settled();
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /namespace\/default/);
    assert.equal(browser.opened.length, 1);
    assert.equal(page, 'Authenticated');
    const who = await kubectl('1.33', 'auth', 'whoami', '-o', 'json');
    assert.equal(who.code, 0, who.stderr);
    const user = JSON.parse(who.stdout).status.userInfo;
    assert.equal(user.username, `${idp.url}#alice`);
    assert.deepEqual(user.groups, ['developers', 'system:authenticated']);
  });

  it('caches the tokens 0600 in a 0700 directory', () => {
    assert.equal(statSync(cacheDir).mode & 0o777, 0o700);
    assert.equal(statSync(cacheFile()).mode & 0o777, 0o600);
    assert.equal(typeof cached().refresh_token, 'string');
  });

  for (const version of ['1.33', '1.27']) {
    it(`later calls with kubectl ${version} make no request to the provider`, async () => {
      const before = idp.total();
      const r = await kubectl(version, 'get', 'ns', '-o', 'name');
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /namespace\/default/);
      assert.equal(idp.total(), before);
      assert.equal(browser.opened.length, 1);
    });
  }

  it('an expired ID token is refreshed with the refresh token, without a browser', async () => {
    await expireCachedIdToken();
    const expired = cached().id_token;
    const tokenCalls = idp.hits.get('/token') ?? 0;
    const r = await kubectl('1.27', 'get', 'ns', '-o', 'name');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(idp.hits.get('/token'), tokenCalls + 1);
    assert.equal(browser.opened.length, 1);
    assert.notEqual(cached().id_token, expired);
  });

  it('after the refresh token is revoked, the next expired call logs in with the browser again', async () => {
    const ca = new Agent({ connect: { ca: readFileSync(idp.caFile, 'utf8') } });
    const revoke = await undiciFetch(`${idp.url}/token/revocation`, {
      method: 'POST',
      body: new URLSearchParams({ token: cached().refresh_token!, token_type_hint: 'refresh_token', client_id: CLIENT_ID }),
      dispatcher: ca,
    });
    assert.equal(revoke.status, 200);
    await ca.close();
    await expireCachedIdToken();
    browser.onOpen(async (p, url) => void (await signIn(p, url, 'alice')));
    const r = await kubectl('1.33', 'get', 'ns', '-o', 'name');
    await browser.settled();
    assert.equal(r.code, 0, r.stderr);
    assert.equal(browser.opened.length, 2);
    assert.match(r.stderr, /refresh token was not accepted/);
  });

  it('concurrent kubectl calls with no cache make one login and share it (the lock)', async () => {
    rmSync(cacheFile());
    browser.onOpen(async (p, url) => void (await signIn(p, url, 'alice')));
    const opened = browser.opened.length;
    const runs = await Promise.all([
      kubectl('1.33', 'get', 'ns', '-o', 'name'),
      kubectl('1.27', 'get', 'ns', '-o', 'name'),
      kubectl('1.33', 'get', 'ns', '-o', 'name'),
    ]);
    await browser.settled();
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    assert.equal(browser.opened.length, opened + 1);
    assert.ok(runs.some((r) => /another kubectl call is logging in/.test(r.stderr)));
  });

  it('prints an ExecCredential that client-go accepts (its v1 schema, exp as expirationTimestamp)', async () => {
    const r = await plugin(['get-token', ...args]);
    assert.equal(r.code, 0, r.stderr);
    const cred = JSON.parse(r.stdout);
    const ajv = new Ajv({ strict: true });
    const valid = ajv.validate(EXEC_CREDENTIAL_V1, cred);
    assert.ok(valid, ajv.errorsText());
    const exp = JSON.parse(Buffer.from(cred.status.token.split('.')[1], 'base64url').toString()).exp;
    assert.equal(cred.status.expirationTimestamp, new Date(exp * 1000).toISOString().replace('.000Z', 'Z'));
  });
});

/** client-go's client.authentication.k8s.io/v1 ExecCredential (types.go): the fields a plugin may write. */
const EXEC_CREDENTIAL_V1 = {
  type: 'object',
  required: ['apiVersion', 'kind', 'status'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: 'client.authentication.k8s.io/v1' },
    kind: { const: 'ExecCredential' },
    spec: {
      type: 'object',
      additionalProperties: false,
      properties: { interactive: { type: 'boolean' }, cluster: { type: 'object' } },
    },
    status: {
      type: 'object',
      additionalProperties: false,
      required: ['token'],
      properties: {
        token: { type: 'string', minLength: 1 },
        // metav1.Time: RFC 3339, seconds, UTC.
        expirationTimestamp: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$' },
        clientCertificateData: { type: 'string' },
        clientKeyData: { type: 'string' },
      },
    },
  },
};
