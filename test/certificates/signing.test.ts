// kube-controller-manager's csrsigning through a started server: each
// kubernetes.io signer's rules (Failed with SignerValidationFailure), the
// NotAfter cap, nothing signed before approval, certificates from the CA the
// x509 authenticator trusts — the issued certificate logs in over mTLS and a
// node's is held to the Node authorizer — and a CA rotated on disk.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateCa } from '../../certs/pki.js';
import { eventually } from '../helpers/eventually.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { certClient, CLIENT_USAGES, csrBody, CSRS, hasOpenssl, makeCsr, withCondition, type KeySpec } from './csrkit.js';

const CLIENT = 'kubernetes.io/kube-apiserver-client';
const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
const SERVING = 'kubernetes.io/kubelet-serving';
const SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];

/** Creates and approves a request; returns its name. */
async function submitApproved(
  s: TestServer,
  name: string,
  csrPem: string,
  signer: string,
  usages: string[],
  extra: Record<string, unknown> = {},
): Promise<void> {
  const created = await s.admin.request('POST', CSRS, csrBody(name, csrPem, signer, usages, extra));
  assert.equal(created.status, 201, created.text);
  const approved = await s.admin.request('PUT', `${CSRS}/${name}/approval`, withCondition(created.json, 'Approved'));
  assert.equal(approved.status, 200, approved.text);
}

/** Waits for the request to be issued or failed; returns it. */
function settled(s: TestServer, name: string): Promise<any> {
  return eventually(
    `${name} issued or failed`,
    async () => {
      const r = await s.admin.request('GET', `${CSRS}/${name}`);
      const failed = (r.json.status?.conditions ?? []).some((c: any) => c.type === 'Failed');
      return r.json.status?.certificate || failed ? r.json : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

function certOf(csr: any): X509Certificate {
  return new X509Certificate(Buffer.from(csr.status.certificate, 'base64'));
}

function failure(csr: any): { reason: string; message: string } | undefined {
  return csr.status?.conditions?.find((c: any) => c.type === 'Failed');
}

describe('csrsigning', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({
      flags: ['--cluster-signing-duration=2h', '--controllers=-csrapproving,-csrcleaner,-serviceaccount,-root-ca-cert-publisher,*'],
    });
  });
  after(async () => {
    await s?.close();
  });

  it('issues an approved kube-apiserver-client request that then logs in over mTLS, capped by expirationSeconds', async () => {
    const pending = makeCsr('/O=devs/CN=pending-user');
    const created = await s.admin.request('POST', CSRS, csrBody('not-approved', pending.csrPem, CLIENT, CLIENT_USAGES));
    assert.equal(created.status, 201, created.text);
    const alice = makeCsr('/O=devs/O=qa/CN=alice', 'ed25519');
    await submitApproved(s, 'alice', alice.csrPem, CLIENT, CLIENT_USAGES, { expirationSeconds: 900 });
    const csr = await settled(s, 'alice');
    const cert = certOf(csr);
    const ca = new X509Certificate(await (await import('node:fs/promises')).readFile(join(s.dataDir, 'pki', 'ca.crt')));
    assert.ok(cert.verify(ca.publicKey), 'signed by the CA the x509 authenticator trusts');
    const lifetime = Date.parse(cert.validTo) - Date.now();
    assert.ok(lifetime <= 900_000 && lifetime > 600_000, `NotAfter follows expirationSeconds (${lifetime} ms left)`);
    assert.equal(cert.ca, false);
    const client = certClient(s, Buffer.from(csr.status.certificate, 'base64').toString(), alice.keyPem);
    try {
      const who = await client.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      assert.equal(who.status, 201, who.text);
      assert.equal(who.json.status.userInfo.username, 'alice');
      assert.deepEqual(who.json.status.userInfo.groups, ['devs', 'qa', 'system:authenticated']);
    } finally {
      client.close();
    }
    // The request nobody approved was seen by the same passes and left alone.
    const still = await s.admin.request('GET', `${CSRS}/not-approved`);
    assert.equal(still.json.status.certificate, undefined);
    assert.equal(failure(still.json), undefined);
  });

  it('caps NotAfter at --cluster-signing-duration', async () => {
    const long = makeCsr('/CN=long-lived');
    await submitApproved(s, 'long-lived', long.csrPem, CLIENT, CLIENT_USAGES, { expirationSeconds: 30 * 24 * 3600 });
    const lifetime = Date.parse(certOf(await settled(s, 'long-lived')).validTo) - Date.now();
    assert.ok(lifetime <= 2 * 3600_000 && lifetime > 3600_000, `capped at 2h (${lifetime} ms left)`);
  });

  it('fails requests that break their signer’s rules with SignerValidationFailure', async () => {
    const cases: Array<[string, string, KeySpec, string | undefined, string, string[], string]> = [
      ['client-server-usage', '/CN=bob', 'ec:P-256', undefined, CLIENT, ['client auth', 'server auth'], 'invalid usage for client certificate: server auth'],
      ['client-no-client-auth', '/CN=bob', 'ec:P-256', undefined, CLIENT, ['digital signature'], 'missing required usage for client certificate: client auth'],
      ['kubelet-wrong-org', '/O=devs/CN=system:node:n1', 'ec:P-256', undefined, KUBELET_CLIENT, CLIENT_USAGES, 'subject organization is not system:nodes'],
      [
        'kubelet-wrong-cn',
        '/O=system:nodes/CN=n1',
        'ec:P-256',
        undefined,
        KUBELET_CLIENT,
        CLIENT_USAGES,
        'subject common name does not begin with system:node:',
      ],
      ['kubelet-san', '/O=system:nodes/CN=system:node:n1', 'ec:P-256', 'DNS:n1', KUBELET_CLIENT, CLIENT_USAGES, 'DNS subjectAltNames are not allowed'],
      [
        'kubelet-usages',
        '/O=system:nodes/CN=system:node:n1',
        'ec:P-256',
        undefined,
        KUBELET_CLIENT,
        ['client auth'],
        'usages did not match [client auth digital signature key encipherment]',
      ],
      ['serving-no-san', '/O=system:nodes/CN=system:node:n1', 'ec:P-256', undefined, SERVING, SERVING_USAGES, 'DNS or IP subjectAltName is required'],
      [
        'serving-email',
        '/O=system:nodes/CN=system:node:n1',
        'ec:P-256',
        'DNS:n1,email:a@b.c',
        SERVING,
        SERVING_USAGES,
        'Email subjectAltNames are not allowed',
      ],
      ['small-rsa', '/CN=small', 'rsa:1024', undefined, CLIENT, CLIENT_USAGES, 'RSA keys of 1024 bits are not signed: at least 2048 bits are required'],
    ];
    for (const [name, subject, key, san, signer, usages] of cases) await submitApproved(s, name, makeCsr(subject, key, san).csrPem, signer, usages);
    for (const [name, , , , , , message] of cases) {
      const csr = await settled(s, name);
      assert.equal(csr.status.certificate, undefined, name);
      assert.deepEqual({ reason: failure(csr)?.reason, message: failure(csr)?.message }, { reason: 'SignerValidationFailure', message }, name);
    }
  });

  it('issues kubelet serving certificates with their SANs, and node client certificates held to the Node authorizer', async () => {
    const serving = makeCsr('/O=system:nodes/CN=system:node:n1', 'ec:P-256', 'DNS:n1.example,IP:10.1.2.3');
    await submitApproved(s, 'serving-ok', serving.csrPem, SERVING, SERVING_USAGES);
    const sc = certOf(await settled(s, 'serving-ok'));
    assert.equal(sc.subjectAltName, 'DNS:n1.example, IP Address:10.1.2.3');
    assert.deepEqual(sc.keyUsage, ['1.3.6.1.5.5.7.3.1']);

    const node = makeCsr('/O=system:nodes/CN=system:node:n1', 'rsa:2048');
    await submitApproved(s, 'node-ok', node.csrPem, KUBELET_CLIENT, CLIENT_USAGES);
    const csr = await settled(s, 'node-ok');
    const client = certClient(s, Buffer.from(csr.status.certificate, 'base64').toString(), node.keyPem);
    try {
      const who = await client.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      assert.equal(who.json.status.userInfo.username, 'system:node:n1');
      const allowed = await client.request('GET', CSRS);
      assert.equal(allowed.status, 200, allowed.text);
      const refused = await client.request('GET', '/api/v1/namespaces/default/secrets/unrelated');
      assert.equal(refused.status, 403, refused.text);
    } finally {
      client.close();
    }
  });
});

describe('csrsigning with --cluster-signing-* files', { skip: hasOpenssl ? false : 'openssl is not installed' }, () => {
  let s: TestServer;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-signing-'));
  const certFile = join(dir, 'ca.crt');
  const keyFile = join(dir, 'ca.key');
  const put = (pem: { certPem: string; keyPem: string }) => {
    // Replaced as a rotation does: whole files renamed into place.
    writeFileSync(`${certFile}.new`, pem.certPem);
    writeFileSync(`${keyFile}.new`, pem.keyPem);
    renameSync(`${keyFile}.new`, keyFile);
    renameSync(`${certFile}.new`, certFile);
  };
  before(async () => {
    put(generateCa('signing-ca-1'));
    s = await startTestServer({
      flags: [
        `--cluster-signing-kube-apiserver-client-cert-file=${certFile}`,
        `--cluster-signing-kube-apiserver-client-key-file=${keyFile}`,
        '--controllers=-csrapproving,-csrcleaner,-serviceaccount,-root-ca-cert-publisher,*',
      ],
    });
  });
  after(async () => {
    await s?.close();
  });

  it('signs with the per-signer CA and picks up a CA rotated on disk; the CA key is never logged', async () => {
    const first = makeCsr('/CN=first');
    await submitApproved(s, 'first', first.csrPem, CLIENT, CLIENT_USAGES);
    assert.match(certOf(await settled(s, 'first')).issuer, /CN=signing-ca-1/);
    const second = generateCa('signing-ca-2');
    put(second);
    await submitApproved(s, 'second', makeCsr('/CN=second').csrPem, CLIENT, CLIENT_USAGES);
    const cert = certOf(await settled(s, 'second'));
    assert.match(cert.issuer, /CN=signing-ca-2/);
    assert.ok(cert.verify(new X509Certificate(second.certPem).publicKey));
    // Other signers fall back to the general pair, by default the dev PKI CA.
    await submitApproved(s, 'kubelet', makeCsr('/O=system:nodes/CN=system:node:n9').csrPem, KUBELET_CLIENT, CLIENT_USAGES);
    assert.match(certOf(await settled(s, 'kubelet')).issuer, /CN=gatehouse-ca/);
    const keyBody = second.keyPem.split('\n')[1]!;
    assert.ok(!s.logs.some((l) => l.includes(keyBody)), 'no log line holds the CA key');
  });
});
