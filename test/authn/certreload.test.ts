// Reloading the serving certificate and the client CAs (--tls-cert-file,
// --tls-private-key-file, --client-ca-file, --requestheader-client-ca-file)
// while the gateway runs, as kube-apiserver's dynamic certificates do: new
// TLS connections get the new material, a bad or half-written file keeps the
// previous one (and the log says why), and a removed CA stops authenticating
// connections that are already open.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { connect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { devPkiPaths, ensureDevPki } from '../../certs/devpki.js';
import { generateCa, generateClientCert, generateFrontProxyClientCert, generateServingCert, type CertKeyPair } from '../../certs/pki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../authz/kit.js';

const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const BODY = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });

let work = '';
let dataDir = '';
let s: TestServer;
let devCa: CertKeyPair;
const caA = generateCa('ca-a');
const caB = generateCa('ca-b');
const proxyCa1 = generateCa('front-proxy-1');
const proxyCa2 = generateCa('front-proxy-2');
const file = (n: string) => join(work, n);
const agents: Agent[] = [];

/** Replaces a file in one step, as config management and kubelet's secret volumes do. */
async function replace(name: string, text: string): Promise<void> {
  await writeFile(`${file(name)}.tmp`, text);
  await rename(`${file(name)}.tmp`, file(name));
}

/** The fingerprint of the certificate a new TLS connection is served. */
function served(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: s.port, rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.on('error', reject);
  });
}

/** A keep-alive client with one connection at most, so a second request reuses the first one's connection. */
function clientWith(pair: CertKeyPair): Agent {
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: devCa.certPem, cert: pair.certPem, key: pair.keyPem });
  agents.push(agent);
  return agent;
}

/** Who the server says the client is (SelfSubjectReview), the status, and the client's port (names the connection). */
function whoami(agent: Agent, headers: Record<string, string> = {}): Promise<{ status: number; username?: string; port: number }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(PATH, s.url), { method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      // Read now: the socket goes back to the agent's pool when the response ends.
      const port = (res.socket as TLSSocket).localPort!;
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { status?: { userInfo?: { username?: string } } };
        const username = body.status?.userInfo?.username;
        resolve({ status: res.statusCode ?? 0, port, ...(username !== undefined ? { username } : {}) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(BODY);
  });
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'gatehouse-certreload-'));
  dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
  // The dev PKI exists first: its CA signs the serving certificates and the test server's admin client.
  await ensureDevPki(dataDir, { host: '127.0.0.1', port: 6443 });
  const pki = devPkiPaths(dataDir);
  devCa = { certPem: await readFile(pki.caCert, 'utf8'), keyPem: await readFile(pki.caKey, 'utf8') };
  const serving = generateServingCert(devCa, { commonName: 'first' });
  await writeFile(file('serving.crt'), serving.certPem);
  await writeFile(file('serving.key'), serving.keyPem);
  await writeFile(file('client-ca.crt'), devCa.certPem + caA.certPem);
  await writeFile(file('front-proxy-ca.crt'), proxyCa1.certPem);
  s = await startTestServer({
    dataDir,
    flags: [
      '--authorization-mode=AlwaysAllow',
      `--tls-cert-file=${file('serving.crt')}`,
      `--tls-private-key-file=${file('serving.key')}`,
      `--client-ca-file=${file('client-ca.crt')}`,
      `--requestheader-client-ca-file=${file('front-proxy-ca.crt')}`,
      '--requestheader-username-headers=X-Remote-User',
    ],
    // Re-read often, so a missed change event does not make the test wait kube's 60 s.
    hooks: { tlsReloadIntervalMs: 200 },
  });
});
after(async () => {
  for (const a of agents) a.destroy();
  await s?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('serving certificate reload', () => {
  it('serves a replaced certificate and key to new connections; open connections keep working', async () => {
    const admin = clientWith({
      certPem: await readFile(devPkiPaths(dataDir).adminCert, 'utf8'),
      keyPem: await readFile(devPkiPaths(dataDir).adminKey, 'utf8'),
    });
    const before = await whoami(admin);
    assert.equal(before.username, 'admin');
    const next = generateServingCert(devCa, { commonName: 'second' });
    assert.notEqual(await served(), fingerprint(next.certPem));
    // The key first: until the certificate follows, the pair does not match and the old one stays.
    await replace('serving.key', next.keyPem);
    await replace('serving.crt', next.certPem);
    await eventually('new connections get the new certificate', async () => (await served()) === fingerprint(next.certPem));
    assert.ok(
      s.logs.some((l) => l.startsWith(`serving certificate: reloaded "${file('serving.crt')}", "${file('serving.key')}" (sha256:`)),
      s.logs.join('\n'),
    );
    const after = await whoami(admin);
    assert.deepEqual([after.status, after.username, after.port], [201, 'admin', before.port]);
  });

  it('keeps the previous certificate when the key does not match it, or is not PEM, and logs why', async () => {
    const current = await served();
    const other = generateServingCert(devCa, { commonName: 'other' });
    const goodKey = await readFile(file('serving.key'), 'utf8');
    await replace('serving.key', other.keyPem);
    await eventually('the mismatch is logged', async () =>
      s.logs.some(
        (l) =>
          l.startsWith('serving certificate: keeping the previous configuration: ') &&
          l.includes(`--tls-private-key-file "${file('serving.key')}": the private key does not match the certificate`),
      ),
    );
    assert.equal(await served(), current);
    await replace('serving.key', 'half a key\n');
    await eventually('the bad key is logged', async () =>
      s.logs.some((l) => l.includes(`--tls-private-key-file "${file('serving.key')}": no PEM private key found`)),
    );
    assert.equal(await served(), current);
    await replace('serving.key', goodKey);
  });
});

describe('client CA reload', () => {
  it('authenticates certificates of a CA added to --client-ca-file and no longer those of a removed one, open connections included', async () => {
    const anna = clientWith(generateClientCert(caA, { user: 'anna' }));
    const bert = clientWith(generateClientCert(caB, { user: 'bert' }));
    const annaBefore = await whoami(anna);
    assert.deepEqual([annaBefore.status, annaBefore.username], [201, 'anna']);
    const bertBefore = await whoami(bert);
    assert.equal(bertBefore.status, 401);

    await replace('client-ca.crt', devCa.certPem + caB.certPem);
    await eventually('bert is authenticated on the connection that was refused', async () => (await whoami(bert)).status === 201);
    assert.equal((await whoami(bert)).port, bertBefore.port);
    const annaAfter = await whoami(anna);
    assert.deepEqual([annaAfter.status, annaAfter.port], [401, annaBefore.port]);
    const annaNew = await whoami(clientWith(generateClientCert(caA, { user: 'anna' })));
    assert.equal(annaNew.status, 401);
    assert.ok(
      s.logs.some((l) => l.startsWith(`client CA (--client-ca-file): reloaded "${file('client-ca.crt')}"`)),
      s.logs.join('\n'),
    );
  });

  it('keeps the previous client CAs when the file is not PEM, and logs why', async () => {
    const bert = clientWith(generateClientCert(caB, { user: 'bert' }));
    await replace('client-ca.crt', 'not a certificate\n');
    await eventually('the bad file is logged', async () =>
      s.logs.some((l) => l === 'client CA (--client-ca-file): keeping the previous configuration: --client-ca-file: no PEM certificate found'),
    );
    assert.equal((await whoami(bert)).username, 'bert');
  });

  it('trusts the proxy of a replaced --requestheader-client-ca-file and no longer the old one', async () => {
    const proxy1 = clientWith(generateFrontProxyClientCert(proxyCa1));
    const proxy2 = clientWith(generateFrontProxyClientCert(proxyCa2));
    const as = { 'X-Remote-User': 'carol' };
    assert.equal((await whoami(proxy1, as)).username, 'carol');
    assert.equal((await whoami(proxy2, as)).status, 401);
    await replace('front-proxy-ca.crt', proxyCa2.certPem);
    await eventually('the new proxy is trusted', async () => (await whoami(proxy2, as)).username === 'carol');
    assert.equal((await whoami(proxy1, as)).status, 401);
  });
});
