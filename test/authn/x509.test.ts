import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { ensureDevPki, devPkiPaths } from '../../certs/devpki.js';
import { generateCa, generateClientCert, generateServingCert, type CertKeyPair } from '../../certs/pki.js';
import { HttpsClient } from '../helpers/client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const PATH = '/apis/authentication.k8s.io/v1/selfsubjectreviews';
const BODY = { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' };

let dataDir = '';
let work = '';
let s: TestServer;
let devCa: CertKeyPair;
let devCaPem = '';
const clients: HttpsClient[] = [];

/** A CA and a client certificate (CN olga, O dev and ops) made by the openssl command line. */
async function opensslPki(dir: string): Promise<{ caFile: string; cert: string; key: string }> {
  const f = (n: string) => join(dir, n);
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=openssl-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  await run('openssl', ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('olga.key'), '-out', f('olga.csr'), '-subj', '/O=dev/O=ops/CN=olga']);
  await writeFile(f('ext.cnf'), 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    f('olga.csr'),
    '-CA',
    f('ca.crt'),
    '-CAkey',
    f('ca.key'),
    '-CAcreateserial',
    '-out',
    f('olga.crt'),
    '-days',
    '30',
    '-extfile',
    f('ext.cnf'),
  ]);
  return { caFile: f('ca.crt'), cert: await readFile(f('olga.crt'), 'utf8'), key: await readFile(f('olga.key'), 'utf8') };
}

function clientWith(pair: { cert: string; key: string }): HttpsClient {
  const c = new HttpsClient(s.url, { ca: devCaPem, cert: pair.cert, key: pair.key });
  clients.push(c);
  return c;
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'gatehouse-x509-'));
  dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-test-'));
  // The dev PKI exists before the server starts, so both CAs can be named on the command line.
  const pki = await ensureDevPki(dataDir, { host: '127.0.0.1', port: 6443 });
  const openssl = await opensslPki(work);
  await writeFile(join(work, 'olga.pair'), JSON.stringify(openssl));
  s = await startTestServer({ dataDir, flags: ['--authorization-mode=AlwaysAllow', `--client-ca-file=${pki.caCert},${openssl.caFile}`] });
  devCaPem = await readFile(pki.caCert, 'utf8');
  devCa = { certPem: devCaPem, keyPem: await readFile(devPkiPaths(dataDir).caKey, 'utf8') };
});
after(async () => {
  for (const c of clients) c.close();
  await s?.close();
  await rm(dataDir, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

describe('client certificate authentication', () => {
  it('accepts a certificate made by openssl under a second --client-ca-file: CN is the user, each O a group', async () => {
    const pair = JSON.parse(await readFile(join(work, 'olga.pair'), 'utf8')) as { cert: string; key: string };
    const r = await clientWith(pair).request('POST', PATH, BODY);
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.status.userInfo, { username: 'olga', groups: ['dev', 'ops', 'system:authenticated'] });
  });

  it('accepts a certificate from gatehouse certs client, used by kubectl', async () => {
    const out = join(work, 'carl.kubeconfig');
    await run(process.execPath, ['bin/gatehouse.js', 'certs', 'client', '--dir', dataDir, '--user', 'carl', '--group', 'qa', '--out', out, '--server', s.url]);
    const { stdout } = await run('kubectl', ['--kubeconfig', out, 'auth', 'whoami', '-o', 'json']);
    assert.deepEqual(JSON.parse(stdout).status.userInfo, { username: 'carl', groups: ['qa', 'system:authenticated'] });
  });

  it('refuses a certificate from another CA with 401', async () => {
    const stranger = generateClientCert(generateCa('stranger'), { user: 'mallory', groups: ['system:masters'] });
    const r = await clientWith({ cert: stranger.certPem, key: stranger.keyPem }).request('POST', PATH, BODY);
    assert.equal(r.status, 401);
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    assert.ok(
      s.logs.some((l) => /x509: client certificate rejected: client certificate is not signed by a trusted CA/.test(l)),
      s.logs.join('\n'),
    );
  });

  it('refuses an expired certificate from a trusted CA with 401', async () => {
    const old = generateClientCert(devCa, { user: 'old-timer', now: new Date(Date.now() - 400 * 24 * 3600_000) });
    const r = await clientWith({ cert: old.certPem, key: old.keyPem }).request('POST', PATH, BODY);
    assert.equal(r.status, 401);
    assert.ok(s.logs.some((l) => /client certificate expired at/.test(l)));
  });

  it('refuses a certificate that is not for client authentication', async () => {
    const serving = generateServingCert(devCa, { commonName: 'admin' });
    const r = await clientWith({ cert: serving.certPem, key: serving.keyPem }).request('POST', PATH, BODY);
    assert.equal(r.status, 401);
    assert.ok(s.logs.some((l) => /not valid for client authentication/.test(l)));
  });

  it('keeps serving the admin from the dev PKI', async () => {
    const r = await s.admin.request('POST', PATH, BODY);
    assert.equal(r.json.status.userInfo.username, 'admin');
  });
});
