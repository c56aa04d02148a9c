// What the plugin refuses, each with one line naming what was wrong and
// nothing cached: bad flags, a provider that is down or never answers, an ID
// token for another audience, from another issuer or signed by another key,
// a redirect carrying an error or a forged state, a nonce that is not the
// login's; and what it survives: a second callback (the port is closed), a
// corrupt or world-readable cache file (ignored with a warning, rewritten
// 0600), a --listen-address in use (the next one).
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startLoginIdp, CLIENT_ID, type LoginIdp } from './loginidp.js';
import { chromiumSkip, signIn, startBrowser, type Browser } from './browser.js';
import { plugin } from './helpers.js';
import { eventually } from '../helpers/eventually.js';
import { cacheFileName } from '../../gateway/cli/oidclogin/tokencache.js';

let dir: string;
let idp: LoginIdp;
let browser: Browser | undefined;
let callbackScript: string;

// Plays the provider's redirect without a browser: the loopback callback with an error or a forged state, then a
// second callback; what each got is written where CALLBACK_RECORD says.
const CALLBACK = `(async () => {
  const auth = new URL(process.argv[2]);
  const redirect = new URL(auth.searchParams.get('redirect_uri'));
  redirect.searchParams.set('state', process.env.CALLBACK_MODE === 'forged-state' ? 'forged' : auth.searchParams.get('state'));
  if (process.env.CALLBACK_MODE === 'error') {
    redirect.searchParams.set('error', 'access_denied');
    redirect.searchParams.set('error_description', 'The person said no');
  } else redirect.searchParams.set('code', 'forged-code');
  const first = await fetch(redirect).then(async (r) => ({ status: r.status, body: await r.text() }));
  const second = await fetch(redirect).then((r) => 'answered ' + r.status, (e) => 'refused ' + ((e.cause && e.cause.code) || e.message));
  require('node:fs').writeFileSync(process.env.CALLBACK_RECORD, JSON.stringify({ port: redirect.port, first, second }));
})();
`;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidclogin-refusals-'));
  idp = await startLoginIdp(dir);
  callbackScript = join(dir, 'callback');
  await writeFile(callbackScript, `#!${process.execPath}\n${CALLBACK}`);
  await chmod(callbackScript, 0o755);
  if (!chromiumSkip) browser = await startBrowser(idp.spki);
});

after(async () => {
  await browser?.close();
  await idp?.close();
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
function fresh(issuer = idp.url): { args: string[]; cacheDir: string } {
  const cacheDir = join(dir, `cache-${++n}`);
  return {
    cacheDir,
    args: [`--oidc-issuer-url=${issuer}`, `--oidc-client-id=${CLIENT_ID}`, `--certificate-authority=${idp.caFile}`, `--token-cache-dir=${cacheDir}`],
  };
}

/** No token file in the cache directory (a lock file or the directory itself may be there). */
function nothingCached(cacheDir: string): void {
  const files = existsSync(cacheDir) ? readdirSync(cacheDir).filter((f) => /^[0-9a-f]{64}$/.test(f)) : [];
  assert.deepEqual(files, []);
}

function oneErrorLine(stderr: string, re: RegExp): void {
  const lines = stderr.split('\n').filter((l) => l.startsWith('error: '));
  assert.equal(lines.length, 1, stderr);
  assert.match(lines[0]!, re);
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
}

describe('oidc-login refuses', () => {
  it('bad flags: exit 2 and the flag named', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['get-token', '--oidc-client-id=x'], /flag --oidc-issuer-url is required/],
      [['get-token', '--oidc-issuer-url=https://a.example', '--oidc-client-id=x', '--nope'], /unknown flag --nope/],
      [['get-token', '--oidc-issuer-url=https://a.example', '--oidc-client-id=x', '--grant-type=magic'], /flag --grant-type takes one of auto, authcode/],
      [['get-token', '--oidc-issuer-url=ftp://a.example', '--oidc-client-id=x'], /flag --oidc-issuer-url takes an http\(s\) URL/],
      [['get-token', '--oidc-issuer-url=https://a.example', '--oidc-client-id=x', '--listen-address=8000'], /flag --listen-address takes host:port/],
      [
        ['get-token', '--oidc-issuer-url=https://a.example', '--oidc-client-id=x', '--authentication-timeout-sec=soon'],
        /--authentication-timeout-sec takes a positive/,
      ],
      [['get-token', '--oidc-issuer-url=https://a.example', '--oidc-client-id=x', '--token-cache-storage=keyring'], /keyring is not supported/],
      [['frobnicate'], /unknown oidc-login command "frobnicate"/],
    ];
    for (const [args, re] of cases) {
      const r = await plugin(args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, re);
      assert.equal(r.stdout, '');
    }
  });

  it('a provider that is down: its address named, exit 1', async () => {
    const closed: Server = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { args, cacheDir } = fresh(`https://127.0.0.1:${port}`);
    const r = await plugin(['get-token', ...args, '--username=carol', '--password=x']);
    assert.equal(r.code, 1);
    oneErrorLine(r.stderr, new RegExp(`discovery at https://127.0.0.1:${port} failed: the OIDC provider .* refused the connection`));
    nothingCached(cacheDir);
  });

  it('a provider that never answers: --authentication-timeout-sec is honoured and said', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createServer((s) => void sockets.push(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { args, cacheDir } = fresh(`https://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    try {
      const r = await plugin(['get-token', ...args, '--username=carol', '--password=x', '--authentication-timeout-sec=2']);
      assert.equal(r.code, 1);
      oneErrorLine(r.stderr, /did not answer within 2s/);
      nothingCached(cacheDir);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  for (const [username, re] of [
    ['wrong-audience', /its audience \(aud\) is "someone-else", expected "kubectl"|"aud" \(audience\)/],
    ['wrong-issuer', /its issuer \(iss\) is "https:\/\/impostor.example"|"iss" \(issuer\)/],
    ['foreign-key', /its signature does not verify with any key of the provider's JWKS/],
  ] as const) {
    it(`an ID token with ${username.replace('-', ' ')}: refused, named, not cached`, async () => {
      const { args, cacheDir } = fresh();
      const r = await plugin(['get-token', ...args, `--username=${username}`, '--password=x']);
      assert.equal(r.code, 1);
      oneErrorLine(r.stderr, re);
      assert.equal(r.stdout, '');
      nothingCached(cacheDir);
    });
  }

  for (const mode of ['error', 'forged-state'] as const) {
    it(`a loopback redirect with ${mode === 'error' ? 'an error parameter: its error_description shown' : 'a forged state: refused'}; a second callback finds the port closed`, async () => {
      const { args, cacheDir } = fresh();
      const record = join(dir, `callback-${mode}.json`);
      const r = await plugin(['get-token', ...args, `--browser-command=${callbackScript}`, '--listen-address=127.0.0.1:0'], {
        CALLBACK_MODE: mode,
        CALLBACK_RECORD: record,
      });
      assert.equal(r.code, 1);
      oneErrorLine(
        r.stderr,
        mode === 'error' ? /the provider refused the login: access_denied: The person said no/ : /its state does not match the one this login sent/,
      );
      nothingCached(cacheDir);
      const got = await eventually('the callback script’s record', () => existsSync(record) && JSON.parse(readFileSync(record, 'utf8')));
      assert.equal(got.first.status, 400);
      assert.match(got.first.body, mode === 'error' ? /The person said no/ : /state parameter does not match/);
      // Refused, or reset when it reached the accept queue as the listener closed: either way no second answer.
      assert.match(got.second, /^refused (ECONNREFUSED|ECONNRESET)/);
    });
  }

  it('a --listen-address in use: a note, and the next address serves the redirect', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as AddressInfo).port;
    const { args } = fresh();
    const record = join(dir, 'callback-busy.json');
    try {
      const r = await plugin(
        ['get-token', ...args, `--browser-command=${callbackScript}`, `--listen-address=127.0.0.1:${port}`, '--listen-address=127.0.0.1:0'],
        {
          CALLBACK_MODE: 'error',
          CALLBACK_RECORD: record,
        },
      );
      assert.match(r.stderr, new RegExp(`note: cannot listen on 127.0.0.1:${port} \\(EADDRINUSE\\), trying the next --listen-address`));
      const got = await eventually('the callback script’s record', () => existsSync(record) && JSON.parse(readFileSync(record, 'utf8')));
      assert.notEqual(got.port, String(port));
      assert.equal(got.first.status, 400);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });

  it('an ID token whose nonce is not the login’s (the browser’s request altered): refused, not cached', { skip: chromiumSkip }, async () => {
    const { args, cacheDir } = fresh();
    browser!.onOpen(async (p, url) => {
      const forged = new URL(url);
      forged.searchParams.set('nonce', 'someone-elses-nonce');
      await signIn(p, forged.href, 'mallory');
    });
    const r = await plugin(['get-token', ...args, `--browser-command=${browser!.command}`, '--listen-address=127.0.0.1:0', '--authentication-timeout-sec=60']);
    await browser!.settled();
    assert.equal(r.code, 1);
    oneErrorLine(r.stderr, /nonce/);
    nothingCached(cacheDir);
  });
});

describe('oidc-login and a cache file it cannot trust', () => {
  const key = { issuerUrl: '', clientId: CLIENT_ID, scopes: ['openid'], username: 'carol' };
  for (const [what, prepare, warning] of [
    ['corrupt', (f: string) => writeFileSync(f, '{"id_token": tru', { mode: 0o600 }), /warning: token cache file .* is not JSON: ignored/],
    [
      'world-readable',
      (f: string) => {
        writeFileSync(f, JSON.stringify({ id_token: 'a.b.c' }), { mode: 0o600 });
        chmodSync(f, 0o644);
      },
      /warning: token cache file .* is readable by others \(mode 644\): ignored/,
    ],
  ] as const) {
    it(`a ${what} one is ignored with a warning and rewritten 0600 at the login`, async () => {
      const { args, cacheDir } = fresh();
      mkdirSync(cacheDir, { mode: 0o700 });
      const file = join(cacheDir, cacheFileName({ ...key, issuerUrl: idp.url }));
      prepare(file);
      const r = await plugin(['get-token', ...args, '--username=carol', '--password=carol-password']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, warning);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(JSON.parse(readFileSync(file, 'utf8')).id_token, JSON.parse(r.stdout).status.token);
    });
  }
});
