// The plugin's other grants against the real provider: device code (Chromium
// enters the user code the plugin printed), authcode-keyboard (the code
// pasted on stdin), password (from the flag, or read from stdin), and client
// credentials; each prints an ExecCredential and caches what it verified.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startLoginIdp, CLIENT_ID, CONFIDENTIAL_CLIENT_ID, CONFIDENTIAL_SECRET, type LoginIdp } from './loginidp.js';
import { chromiumSkip, startBrowser, type Browser } from './browser.js';
import { livePlugin, plugin } from './helpers.js';
import { cacheFileName } from '../../gateway/cli/oidclogin/tokencache.js';

let dir: string;
let idp: LoginIdp;
let browser: Browser | undefined;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidclogin-grants-'));
  idp = await startLoginIdp(dir);
  if (!chromiumSkip) browser = await startBrowser(idp.spki);
});

after(async () => {
  await browser?.close();
  await idp?.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** Flags for a fresh cache directory of its own. */
function base(): { args: string[]; cacheDir: string } {
  const cacheDir = join(dir, `cache-${++n}`);
  return {
    cacheDir,
    args: [
      `--oidc-issuer-url=${idp.url}`,
      `--oidc-client-id=${CLIENT_ID}`,
      `--certificate-authority=${idp.caFile}`,
      `--token-cache-dir=${cacheDir}`,
      '--authentication-timeout-sec=60',
    ],
  };
}

const claimsOf = (stdout: string) => {
  const cred = JSON.parse(stdout);
  assert.equal(cred.kind, 'ExecCredential');
  return JSON.parse(Buffer.from(cred.status.token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
};

describe('oidc-login grants', () => {
  it('password grant (--username and --password; grant type auto picks it): an ExecCredential, cached under the username', async () => {
    const { args, cacheDir } = base();
    const r = await plugin(['get-token', ...args, '--username=carol', '--password=carol-password']);
    assert.equal(r.code, 0, r.stderr);
    const claims = claimsOf(r.stdout);
    assert.equal(claims['sub'], 'carol');
    assert.equal(claims['iss'], idp.url);
    const file = join(cacheDir, cacheFileName({ issuerUrl: idp.url, clientId: CLIENT_ID, scopes: ['openid'], username: 'carol' }));
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).id_token, JSON.parse(r.stdout).status.token);
  });

  it('password grant asks for the password on stdin when --password is absent', async () => {
    const { args } = base();
    const r = await plugin(['get-token', ...args, '--username=carol'], {}, 'carol-password\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Password: /);
    assert.equal(claimsOf(r.stdout)['sub'], 'carol');
  });

  it('a wrong password: the provider’s error_description, exit 1, nothing cached', async () => {
    const { args, cacheDir } = base();
    const r = await plugin(['get-token', ...args, '--grant-type=password', '--username=carol', '--password=nope']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^error: the password grant failed: .*invalid_grant: wrong username or password\n$/);
    assert.equal(r.stdout, '');
    assert.throws(() => statSync(join(cacheDir, cacheFileName({ issuerUrl: idp.url, clientId: CLIENT_ID, scopes: ['openid'], username: 'carol' }))));
  });

  it('the provider’s CA from --certificate-authority-data, none with --insecure-skip-tls-verify, refused without either; --token-cache-storage=none writes nothing', async () => {
    const cacheDir = join(dir, `cache-${++n}`);
    const common = [
      `--oidc-issuer-url=${idp.url}`,
      `--oidc-client-id=${CLIENT_ID}`,
      `--token-cache-dir=${cacheDir}`,
      '--username=carol',
      '--password=carol-password',
    ];
    const data = await plugin([
      'get-token',
      ...common,
      `--certificate-authority-data=${readFileSync(idp.caFile).toString('base64')}`,
      '--token-cache-storage=none',
    ]);
    assert.equal(data.code, 0, data.stderr);
    assert.equal(claimsOf(data.stdout)['sub'], 'carol');
    assert.equal(existsSync(cacheDir), false);
    const insecure = await plugin(['get-token', ...common, '--insecure-skip-tls-verify', '--token-cache-storage=none']);
    assert.equal(insecure.code, 0, insecure.stderr);
    const untrusted = await plugin(['get-token', ...common]);
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stderr, /^error: discovery at https:\/\/127\.0\.0\.1:\d+ failed: .*certificate/m);
  });

  it('client credentials: the confidential client’s JWT access token, verified and printed', async () => {
    const { cacheDir } = base();
    const r = await plugin([
      'get-token',
      `--oidc-issuer-url=${idp.url}`,
      `--oidc-client-id=${CONFIDENTIAL_CLIENT_ID}`,
      `--oidc-client-secret=${CONFIDENTIAL_SECRET}`,
      '--grant-type=client-credentials',
      `--certificate-authority=${idp.caFile}`,
      `--token-cache-dir=${cacheDir}`,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const claims = claimsOf(r.stdout);
    assert.equal(claims['aud'], CONFIDENTIAL_CLIENT_ID);
    assert.equal(claims['client_id'], CONFIDENTIAL_CLIENT_ID);
  });

  it(
    'device code: the plugin prints the user code, Chromium enters it at the provider, the plugin’s polling gets the token',
    { skip: chromiumSkip },
    async () => {
      const { args } = base();
      const live = livePlugin(['get-token', ...args, '--grant-type=device-code', '--skip-open-browser']);
      const [, code, uri] = (await live.stderrMatch(/Please enter the code (\S+) at (\S+)\n/)) as RegExpMatchArray as [string, string, string];
      const page = await browser!.newPage();
      try {
        await page.goto(uri);
        await page.fill('input[name=user_code]', code);
        await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
        // Confirm the device, sign in, consent: the provider's pages in its order, up to its success page.
        for (let step = 0; step < 5 && !(await page.$('h1:text-is("Sign-in Success")')); step++) {
          if (await page.$('input[name=login]')) {
            await page.fill('input[name=login]', 'dave');
            await page.fill('input[name=password]', 'any-password');
          }
          await Promise.all([page.waitForNavigation(), page.click('button[type=submit]:not([name=abort])')]);
        }
        assert.ok(await page.$('h1:text-is("Sign-in Success")'), await page.content());
      } finally {
        await page.close();
      }
      const r = await live.done;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(claimsOf(r.stdout)['sub'], 'dave');
    },
  );

  it(
    'authcode with --oidc-auth-request-extra-params sent to the provider and --open-url-after-authentication shown after the login',
    { skip: chromiumSkip },
    async () => {
      const { args } = base();
      await browser!.signOut();
      let authUrl = '';
      let after = '';
      browser!.onOpen(async (page, url) => {
        authUrl = url;
        const done = page.waitForRequest((req) => req.url().startsWith('http://localhost:9/done'));
        await page.goto(url);
        await page.fill('input[name=login]', 'grace');
        await page.fill('input[name=password]', 'any-password');
        await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
        await page.click('button[type=submit]').catch(() => undefined);
        after = (await done).url();
      });
      const r = await plugin([
        'get-token',
        ...args,
        `--browser-command=${browser!.command}`,
        '--listen-address=127.0.0.1:0',
        '--oidc-auth-request-extra-params=ui_locales=de,login_hint=grace',
        '--open-url-after-authentication=http://localhost:9/done',
      ]);
      await browser!.settled();
      assert.equal(r.code, 0, r.stderr);
      assert.equal(claimsOf(r.stdout)['sub'], 'grace');
      const sent = new URL(authUrl).searchParams;
      assert.equal(sent.get('ui_locales'), 'de');
      assert.equal(sent.get('login_hint'), 'grace');
      assert.equal(after, 'http://localhost:9/done');
    },
  );

  it('authcode-keyboard: the URL printed, the person signs in, the code pasted on stdin', { skip: chromiumSkip }, async () => {
    const { args } = base();
    // Nothing listens on the redirect: the browser shows an error page whose address carries the code, as with an out-of-band redirect.
    const live = livePlugin(['get-token', ...args, '--grant-type=authcode-keyboard', '--oidc-redirect-url=http://localhost:9/keyboard']);
    const [, url] = (await live.stderrMatch(/Please visit the following URL in your browser: (\S+)\n/)) as RegExpMatchArray as [string, string];
    await browser!.signOut();
    const page = await browser!.newPage();
    let code = '';
    try {
      const redirected = page.waitForRequest((req) => req.url().startsWith('http://localhost:9/keyboard'));
      await page.goto(url);
      await page.fill('input[name=login]', 'erin');
      await page.fill('input[name=password]', 'any-password');
      await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
      // Consent; the redirect that follows reaches nothing, as an out-of-band one would.
      await page.click('button[type=submit]').catch(() => undefined);
      code = new URL((await redirected).url()).searchParams.get('code') ?? '';
    } finally {
      await page.close();
    }
    assert.notEqual(code, '');
    await live.stderrMatch(/Enter code: /);
    live.write(`${code}\n`);
    const r = await live.done;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(claimsOf(r.stdout)['sub'], 'erin');
  });
});
