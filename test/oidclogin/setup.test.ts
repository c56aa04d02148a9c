// `setup --verify` against a started Gatehouse with RBAC and the access
// explanations: the username and groups this server derives from the token,
// what it may do and the binding that allows it; the printed `kubectl config
// set-credentials` command, run as printed, gives a kubeconfig whose kubectl
// calls use the cached token. A server that does not accept the issuer says
// 401. `logout` revokes the refresh token at the provider and removes the
// account's file; `clean` removes the cache's files and nothing else.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startLoginIdp, CLIENT_ID, type LoginIdp } from './loginidp.js';
import { chromiumSkip, signIn, startBrowser, type Browser } from './browser.js';
import { binDir, kubectlOf, plugin, run } from './helpers.js';
import { cacheFileName } from '../../gateway/cli/oidclogin/tokencache.js';
import { runCertsCommand } from '../../certs/cli.js';

const k133 = kubectlOf('1.33');

let dir: string;
let idp: LoginIdp;
let s: TestServer;
let other: TestServer;
let kubeconfig: string;
let otherKubeconfig: string;

/** A kubeconfig of the server's cluster with no user (setup --verify brings the token). */
function clusterOnly(file: string, server: TestServer): string {
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'c',
      clusters: [
        {
          name: 'gatehouse',
          cluster: { server: server.url, 'certificate-authority-data': readFileSync(devPkiPaths(server.dataDir).caCert).toString('base64') },
        },
      ],
      users: [{ name: 'nobody', user: {} }],
      contexts: [{ name: 'c', context: { cluster: 'gatehouse', user: 'nobody' } }],
    }),
  );
  return file;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-oidclogin-setup-'));
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
      '--oidc-groups-prefix',
      'oidc:',
      '--authorization-mode',
      'RBAC',
      '--runtime-config=access.gatehouse.dev/v1alpha1=true',
    ],
  });
  const rb = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'oidc-developers-view' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'oidc:developers' }],
  });
  assert.equal(rb.status, 201, rb.text);
  other = await startTestServer({ flags: ['--authorization-mode', 'RBAC'] });
  kubeconfig = clusterOnly(join(dir, 'cluster.json'), s);
  otherKubeconfig = clusterOnly(join(dir, 'other.json'), other);
});

after(async () => {
  await s?.close();
  await other?.close();
  await idp?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('oidc-login setup', () => {
  const cacheDir = () => join(dir, 'cache');
  const loginArgs = () => [
    `--oidc-issuer-url=${idp.url}`,
    `--oidc-client-id=${CLIENT_ID}`,
    `--certificate-authority=${idp.caFile}`,
    `--token-cache-dir=${cacheDir()}`,
    '--username=carol',
    '--password=carol-password',
  ];

  it('--verify prints the claims, who this server makes of the token, what it may do and which binding allows it', async () => {
    const r = await plugin(['setup', ...loginArgs(), '--verify', `--kubeconfig=${kubeconfig}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /"sub": "carol"/);
    assert.match(r.stdout, new RegExp(`^username: ${idp.url.replace(/\./g, '\\.')}#carol$`, 'm'));
    assert.match(r.stdout, /^groups: {3}oidc:developers, system:authenticated$/m);
    assert.match(r.stdout, /^ {2}\* \* \(\*\)$/m, 'the rules review lists cluster-admin’s rule');
    assert.match(r.stdout, /^list namespaces: allowed by rbac$/m);
    assert.match(r.stdout, /ClusterRoleBinding oidc-developers-view -> ClusterRole cluster-admin/);
    assert.match(r.stdout, new RegExp(`--oidc-issuer-url=${idp.url.replace(/\./g, '\\.')} \\\\\n  --oidc-client-id=kubectl`));
  });

  it(
    'the printed set-credentials command, run as printed, makes a kubeconfig whose kubectl uses the cached token',
    { skip: !k133 && 'kubectl 1.33 not installed' },
    async () => {
      const r = await plugin(['setup', ...loginArgs()]);
      assert.equal(r.code, 0, r.stderr);
      const command = /^kubectl config set-credentials (?:.*\\\n)*.*$/m.exec(r.stdout)?.[0];
      assert.ok(command, r.stdout);
      const bin = binDir(dir, k133!);
      const file = join(dir, 'made-by-setup.json');
      writeFileSync(file, readFileSync(kubeconfig));
      const env = { PATH: `${bin}:${process.env['PATH']}`, HOME: dir, KUBECONFIG: file };
      const set = await run('sh', ['-c', command], env);
      assert.equal(set.code, 0, set.stderr);
      assert.equal((await run('kubectl', ['config', 'set-context', 'c', '--user=oidc'], env)).code, 0);
      const before = idp.total();
      const get = await run('kubectl', ['get', 'ns', '-o', 'name'], env);
      assert.equal(get.code, 0, get.stderr);
      assert.match(get.stdout, /namespace\/default/);
      assert.equal(idp.total(), before, 'the token setup cached is used');
    },
  );

  it(
    'gatehouse certs oidc-kubeconfig writes a kubeconfig whose kubectl logs in through get-token, and names the serve flags',
    { skip: !k133 && 'kubectl 1.33 not installed' },
    async () => {
      const file = join(dir, 'made-by-certs.kubeconfig');
      const out: string[] = [];
      const code = await runCertsCommand(
        [
          'oidc-kubeconfig',
          `--dir=${s.dataDir}`,
          `--server=${s.url}`,
          `--issuer-url=${idp.url}`,
          `--client-id=${CLIENT_ID}`,
          `--certificate-authority=${idp.caFile}`,
          `--get-token-arg=--token-cache-dir=${join(dir, 'certs-cache')}`,
          '--get-token-arg=--grant-type=password',
          '--get-token-arg=--username=carol',
          '--get-token-arg=--password=carol-password',
          `--out=${file}`,
        ],
        { out: (l) => out.push(l), err: (l) => out.push(l) },
      );
      assert.equal(code, 0, out.join('\n'));
      assert.match(
        out.join('\n'),
        new RegExp(`gatehouse serve --oidc-issuer-url=${idp.url.replace(/\./g, '\\.')} --oidc-client-id=${CLIENT_ID} --oidc-ca-file=`),
      );
      const env = { PATH: `${binDir(dir, k133!)}:${process.env['PATH']}`, HOME: dir, KUBECONFIG: file };
      const first = idp.total();
      const who = await run('kubectl', ['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'], env);
      assert.equal(who.code, 0, who.stderr);
      assert.equal(who.stdout, `${idp.url}#carol`);
      assert.ok(idp.total() > first, 'the first call logs in at the provider');
      const second = idp.total();
      assert.equal((await run('kubectl', ['get', 'ns', '-o', 'name'], env)).code, 0);
      assert.equal(idp.total(), second, 'the next call uses the cached token');
    },
  );

  it('--verify against a server that does not accept the issuer: its 401 said, exit 1', async () => {
    const r = await plugin(['setup', ...loginArgs(), '--verify', `--kubeconfig=${otherKubeconfig}`]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /The server refused the token: HTTP 401/);
  });
});

describe('oidc-login logout and clean', () => {
  let browser: Browser | undefined;
  before(async () => {
    if (!chromiumSkip) browser = await startBrowser(idp.spki);
  });
  after(async () => browser?.close());

  it('logout revokes the refresh token at the provider and removes the account’s cache file', { skip: chromiumSkip }, async () => {
    const cacheDir = join(dir, 'logout-cache');
    const args = [`--oidc-issuer-url=${idp.url}`, `--oidc-client-id=${CLIENT_ID}`, `--certificate-authority=${idp.caFile}`, `--token-cache-dir=${cacheDir}`];
    browser!.onOpen(async (p, url) => void (await signIn(p, url, 'frank')));
    const login = await plugin([
      'get-token',
      ...args,
      `--browser-command=${browser!.command}`,
      '--listen-address=127.0.0.1:0',
      '--authentication-timeout-sec=60',
    ]);
    await browser!.settled();
    assert.equal(login.code, 0, login.stderr);
    const file = join(cacheDir, cacheFileName({ issuerUrl: idp.url, clientId: CLIENT_ID, scopes: ['openid'] }));
    const refreshToken = JSON.parse(readFileSync(file, 'utf8')).refresh_token as string;
    assert.equal(typeof refreshToken, 'string');

    const r = await plugin(['logout', ...args]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Revoked the refresh token at the provider\./);
    assert.equal(existsSync(file), false);

    const agent = new Agent({ connect: { ca: readFileSync(idp.caFile, 'utf8') } });
    try {
      const refresh = await undiciFetch(`${idp.url}/token`, {
        method: 'POST',
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: CLIENT_ID }),
        dispatcher: agent,
      });
      assert.equal(refresh.status, 400);
      assert.equal(((await refresh.json()) as { error: string }).error, 'invalid_grant');
    } finally {
      await agent.close();
    }
  });

  it('clean removes the cache’s token files and leaves anything else', async () => {
    const cacheDir = join(dir, 'clean-cache');
    const args = [`--oidc-issuer-url=${idp.url}`, `--oidc-client-id=${CLIENT_ID}`, `--certificate-authority=${idp.caFile}`, `--token-cache-dir=${cacheDir}`];
    for (const u of ['carol', 'wrong-audience']) await plugin(['get-token', ...args, `--username=${u}`, '--password=carol-password']);
    writeFileSync(join(cacheDir, 'notes.txt'), 'mine');
    assert.equal(readdirSync(cacheDir).filter((f) => /^[0-9a-f]{64}$/.test(f)).length, 1);
    const r = await plugin(['clean', `--token-cache-dir=${cacheDir}`]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Deleted 1 cached token file\(s\)/);
    assert.deepEqual(readdirSync(cacheDir), ['notes.txt']);
  });
});
