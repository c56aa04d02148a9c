// The gateway with the built-in groups in a remote core backend: `gatehouse
// core-backend` (file store) and `gatehouse serve --core-backend-url` as two
// real processes. Resource requests are proxied; the gateway's RBAC, token
// lookups and aggregation informers read the backend through list+watch over
// HTTPS; the token controllers and TokenRequest run in the backend.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDevPki } from '../../certs/devpki.js';
import { GATEHOUSE_BIN, Kubectl, findKubectl, freePort, spawnTracked, startGatehouse, stopAll, tempDir, type Gatehouse, type Proc } from '../e2e/helpers.js';
import { HttpsClient } from '../helpers/client.js';
import { request as httpsRequest } from 'node:https';
import { decode as cborDecode } from 'cbor2';
import { Encoder } from 'cbor-x';
import { servingPki, type Pem } from './fixture.js';
import { CRD_PATH, crontab, crontabCrd } from '../crd/fixtures.js';
import { eventually } from '../helpers/eventually.js';

const kubectlBin = findKubectl();
/** Both processes serve CBOR: the core backend answers it, the gateway writes its own errors in it. */
const CBOR_GATE = '--feature-gates=CBORServingAndStorage=true';

/** A request whose answer is kept as bytes. */
function rawRequest(
  client: HttpsClient,
  url: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<{ status: number; type: string | undefined; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, url),
      { method, agent: client.agent, headers: { ...headers, ...(body ? { 'content-length': String(body.length) } : {}) } },
      (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], body: Buffer.concat(parts) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('gateway + remote core backend (--core-backend-url)', { timeout: 180_000 }, () => {
  let gh: Gatehouse;
  let core: Proc;
  let pem: Pem;

  before(async () => {
    const ghDir = tempDir('remote-gw');
    const ghPort = await freePort();
    // The gateway's dev PKI first: the core backend trusts its front-proxy CA.
    const pki = await ensureDevPki(ghDir, { host: '127.0.0.1', port: ghPort });
    const dir = tempDir('remote-core-certs');
    pem = servingPki(dir, 'core-api');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const saKey = join(dir, 'sa.key');
    const saPub = join(dir, 'sa.pub');
    writeFileSync(saKey, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    writeFileSync(saPub, publicKey.export({ type: 'spki', format: 'pem' }) as string);
    const saFlags = [`--service-account-signing-key-file=${saKey}`, `--service-account-key-file=${saPub}`, '--service-account-issuer=https://gatehouse.test'];
    const sarKubeconfig = join(dir, 'sar.kubeconfig');
    writeFileSync(sarKubeconfig, readFileSync(pki.kubeconfig, 'utf8').replace(/server: (\S+)/, 'server: $1/apis/authorization.k8s.io/v1/subjectaccessreviews'));
    const corePort = await freePort();
    core = spawnTracked(process.execPath, [
      GATEHOUSE_BIN,
      'core-backend',
      `--secure-port=${corePort}`,
      `--data-dir=${tempDir('remote-core-data')}`,
      '--storage-backend=file',
      `--tls-cert-file=${pem.certFile}`,
      `--tls-private-key-file=${pem.keyFile}`,
      `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
      '--requestheader-allowed-names=front-proxy-client',
      '--requestheader-username-headers=X-Remote-User',
      '--requestheader-group-headers=X-Remote-Group',
      '--requestheader-extra-headers-prefix=X-Remote-Extra-',
      '--requestheader-uid-headers=X-Remote-Uid',
      '--authorization-mode=Webhook',
      `--authorization-webhook-config-file=${sarKubeconfig}`,
      '--authorization-webhook-version=v1',
      CBOR_GATE,
      ...saFlags,
    ]);
    core.child.stdin?.end();
    await core.waitFor('core-backend serving', (p) => p.stdout.includes('is serving on') || !p.running, 60_000);
    assert.ok(core.running, core.stderr);
    gh = await startGatehouse({
      dataDir: ghDir,
      port: ghPort,
      flags: [`--core-backend-url=https://127.0.0.1:${corePort}`, `--core-backend-ca-file=${pem.caFile}`, CBOR_GATE, ...saFlags],
    });
  });

  after(async () => {
    if (process.env.AGG_DEBUG) process.stderr.write(`gateway:\n${gh?.proc.stderr}\ncore:\n${core?.stderr}\n`);
    await stopAll();
  });

  it('serves the built-in groups from the backend: default namespaces, discovery, local APIServices', async () => {
    const ns = await gh.admin.request('GET', '/api/v1/namespaces');
    assert.equal(ns.status, 200, ns.text);
    assert.ok(ns.json.items.some((n: { metadata: { name: string } }) => n.metadata.name === 'kube-system'));
    const apis = await gh.admin.request('GET', '/apis');
    assert.ok(apis.json.groups.some((g: { name: string }) => g.name === 'rbac.authorization.k8s.io'));
    const ready = await gh.admin.request('GET', '/readyz?verbose');
    assert.equal(ready.status, 200, ready.text);
  });

  it('CRUD and watch through the gateway', async () => {
    await gh.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'team' } });
    const list = await gh.admin.request('GET', '/api/v1/namespaces/team/configmaps');
    const w = await gh.admin.watch(`/api/v1/namespaces/team/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    const c = await gh.admin.request('POST', '/api/v1/namespaces/team/configmaps', { metadata: { name: 'cm1' }, data: { a: '1' } });
    assert.equal(c.status, 201, c.text);
    const ev = await w.next(10_000);
    assert.equal(ev?.type, 'ADDED');
    assert.equal(ev?.object.metadata.name, 'cm1');
    w.stop();
    const u = await gh.admin.request(
      'PATCH',
      '/api/v1/namespaces/team/configmaps/cm1',
      { data: { a: '2' } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(u.json.data.a, '2');
    assert.equal((await gh.admin.request('DELETE', '/api/v1/namespaces/team/configmaps/cm1')).status, 200);
  });

  it('CBOR bodies and answers through the gateway (CBORServingAndStorage on both sides)', async () => {
    await gh.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'cb' } });
    const body = Buffer.from(new Encoder({ useRecords: false }).encode({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: '1' } }));
    const c = await rawRequest(
      gh.admin,
      gh.url,
      'POST',
      '/api/v1/namespaces/cb/configmaps',
      { 'content-type': 'application/cbor', accept: 'application/cbor' },
      body,
    );
    assert.equal(c.status, 201, c.body.toString());
    assert.equal(c.type, 'application/cbor');
    const created = cborDecode(c.body) as { data: unknown; metadata: { name: string } };
    assert.deepEqual(created.data, { a: '1' });
    const json = (await gh.admin.request('GET', '/api/v1/namespaces/cb/configmaps/c1')).json;
    const got = await rawRequest(gh.admin, gh.url, 'GET', '/api/v1/namespaces/cb/configmaps', { accept: 'application/cbor' });
    assert.deepEqual((cborDecode(got.body) as { items: unknown[] }).items, [json]);
    const missing = await rawRequest(gh.admin, gh.url, 'GET', '/api/v1/namespaces/cb/configmaps/nope', { accept: 'application/cbor' });
    assert.equal(missing.status, 404);
    assert.equal((cborDecode(missing.body) as { reason: string }).reason, 'NotFound');
  });

  it('kubectl create, get, delete through the gateway', { skip: kubectlBin ? false : 'kubectl is not installed' }, async () => {
    const k = new Kubectl(kubectlBin!, gh.kubeconfig);
    await k.ok(['create', 'namespace', 'kc']);
    await k.ok(['-n', 'kc', 'create', 'configmap', 'one', '--from-literal=x=y']);
    assert.match(await k.ok(['-n', 'kc', 'get', 'configmaps', 'one', '-o', 'jsonpath={.data.x}']), /^y$/);
    await k.ok(['-n', 'kc', 'delete', 'configmap', 'one']);
  });

  it('RBAC decisions follow bindings created through the gateway (read back through list+watch)', async () => {
    await gh.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'rb' } });
    const asAlice = { 'Impersonate-User': 'alice' };
    assert.equal((await gh.admin.request('GET', '/api/v1/namespaces/rb/configmaps', undefined, asAlice)).status, 403);
    const role = await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/rb/roles', {
      metadata: { name: 'read' },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list'] }],
    });
    assert.equal(role.status, 201, role.text);
    const rb = await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/rb/rolebindings', {
      metadata: { name: 'alice-read' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'read' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    });
    assert.equal(rb.status, 201, rb.text);
    await eventually(
      'alice may list',
      async () => ((await gh.admin.request('GET', '/api/v1/namespaces/rb/configmaps', undefined, asAlice)).status === 200 ? true : undefined),
      { timeoutMs: 15_000 },
    );
    await gh.admin.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/namespaces/rb/rolebindings/alice-read');
    await eventually(
      'alice may not list',
      async () => ((await gh.admin.request('GET', '/api/v1/namespaces/rb/configmaps', undefined, asAlice)).status === 403 ? true : undefined),
      { timeoutMs: 15_000 },
    );
  });

  it('a service-account token minted through the gateway authenticates at the gateway', async () => {
    await gh.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'sa' } });
    assert.equal((await gh.admin.request('POST', '/api/v1/namespaces/sa/serviceaccounts', { metadata: { name: 'bot' } })).status, 201);
    const tr = await gh.admin.request('POST', '/api/v1/namespaces/sa/serviceaccounts/bot/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    assert.equal(tr.status, 201, tr.text);
    const bot = new HttpsClient(gh.url, { ca: readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8') });
    const who = await bot.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { authorization: `Bearer ${tr.json.status.token}` },
    );
    bot.close();
    assert.equal(who.status, 201, who.text);
    assert.equal(who.json.status.userInfo.username, 'system:serviceaccount:sa:bot');
  });

  it('serves custom resources of a CRD created through the gateway: the gateway learns the group from the backend', async () => {
    const crd = crontabCrd({ group: 'remote.example.com' });
    const c = await gh.admin.request('POST', CRD_PATH, crd);
    assert.equal(c.status, 201, c.text);
    const path = '/apis/remote.example.com/v1/namespaces/default/crontabs';
    await eventually('the gateway routing the new group', async () => ((await gh.admin.request('GET', path)).status === 200 ? true : undefined), {
      timeoutMs: 15_000,
    });
    const cr = await gh.admin.request('POST', path, crontab('r1', { image: 'i', replicas: 1 }, 'remote.example.com'));
    assert.equal(cr.status, 201, cr.text);
    const apis = await gh.admin.request('GET', '/apis');
    assert.ok(apis.json.groups.some((g: { name: string }) => g.name === 'remote.example.com'));
    const v3 = await gh.admin.request('GET', '/openapi/v3');
    assert.ok(v3.json.paths['apis/remote.example.com/v1'], 'the gateway publishes its OpenAPI');
  });

  it('rejects --core-backend-url without its CA, in one line', async () => {
    const p = spawnTracked(process.execPath, [GATEHOUSE_BIN, 'serve', '--core-backend-url=https://127.0.0.1:1']);
    p.child.stdin?.end();
    const { code } = await p.waitExit(20_000);
    assert.equal(code, 1);
    assert.match(p.stderr, /^gatehouse: --core-backend-url requires --core-backend-ca-file\n$/);
  });
});
