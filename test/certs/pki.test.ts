import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  CA_VALIDITY_MS,
  CLOCK_SKEW_MS,
  LEAF_VALIDITY_MS,
  generateCa,
  generateClientCert,
  generateFrontProxyCa,
  generateFrontProxyClientCert,
  generateServiceAccountKeyPair,
  generateServingCert,
} from '../../certs/pki.js';

const now = new Date('2026-01-01T00:00:00Z');
const ca = generateCa('test-ca', { now });
const caX = new X509Certificate(ca.certPem);
const serving = generateServingCert(ca, { hosts: ['gatehouse.example', '10.0.0.7', 'fd00::1'], now });
const servingX = new X509Certificate(serving.certPem);
const client = generateClientCert(ca, { user: 'jane', groups: ['dev', 'system:masters'], now });
const clientX = new X509Certificate(client.certPem);

const tmp = mkdtempSync(join(tmpdir(), 'gatehouse-pki-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

function opensslVerify(caPem: string, leafPem: string, purpose: string): { status: number | null; out: string } {
  const caFile = join(tmp, `ca-${Math.random()}.pem`);
  const leafFile = join(tmp, `leaf-${Math.random()}.pem`);
  writeFileSync(caFile, caPem);
  writeFileSync(leafFile, leafPem);
  const r = spawnSync('openssl', ['verify', '-CAfile', caFile, '-purpose', purpose, '-attime', String(now.getTime() / 1000 + 3600), leafFile], {
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('CA certificate', () => {
  it('is self-signed and marked as a CA', () => {
    assert.ok(caX.ca);
    assert.ok(caX.checkIssued(caX));
    assert.ok(caX.verify(caX.publicKey));
    assert.equal(caX.subject, 'CN=test-ca');
    assert.equal(caX.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  });

  it('is valid for ten years and starts slightly in the past', () => {
    assert.equal(Date.parse(caX.validFrom), now.getTime() - CLOCK_SKEW_MS);
    assert.equal(Date.parse(caX.validTo), now.getTime() + CA_VALIDITY_MS);
  });

  it('has a random serial number', () => {
    const other = new X509Certificate(generateCa('test-ca', { now }).certPem);
    assert.notEqual(other.serialNumber, caX.serialNumber);
    assert.ok(caX.serialNumber.length >= 30);
  });

  it('private key matches the certificate and is PKCS#8', () => {
    assert.ok(caX.checkPrivateKey(createPrivateKey(ca.keyPem)));
    assert.match(ca.keyPem, /^-----BEGIN PRIVATE KEY-----/);
  });
});

describe('serving certificate', () => {
  it('is issued and signed by the CA', () => {
    assert.ok(servingX.checkIssued(caX));
    assert.ok(servingX.verify(caX.publicKey));
    assert.equal(servingX.ca, false);
    assert.ok(servingX.checkPrivateKey(createPrivateKey(serving.keyPem)));
  });

  it('covers loopback, localhost and the extra names', () => {
    assert.equal(servingX.checkIP('127.0.0.1'), '127.0.0.1');
    assert.equal(servingX.checkIP('::1'), '::1');
    assert.equal(servingX.checkHost('localhost'), 'localhost');
    assert.equal(servingX.checkHost('gatehouse.example'), 'gatehouse.example');
    assert.equal(servingX.checkIP('10.0.0.7'), '10.0.0.7');
    assert.equal(servingX.checkIP('fd00::1'), 'fd00::1');
    assert.equal(servingX.checkHost('other.example'), undefined);
    assert.equal(servingX.checkIP('10.0.0.8'), undefined);
    const sans = (servingX.subjectAltName ?? '').split(', ');
    for (const s of ['DNS:localhost', 'DNS:gatehouse.example', 'IP Address:127.0.0.1', 'IP Address:10.0.0.7']) assert.ok(sans.includes(s), s);
  });

  it('is for server authentication and valid for one year', () => {
    assert.deepEqual(servingX.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.equal(Date.parse(servingX.validTo), now.getTime() + LEAF_VALIDITY_MS);
  });

  it('does not repeat a SAN given twice', () => {
    const x = new X509Certificate(generateServingCert(ca, { hosts: ['LOCALHOST', '0:0::1', '127.0.0.1'], now }).certPem);
    assert.equal(x.subjectAltName, 'IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost');
  });

  it('is accepted by openssl verify as a TLS server certificate', () => {
    const r = opensslVerify(ca.certPem, serving.certPem, 'sslserver');
    assert.equal(r.status, 0, r.out);
  });
});

describe('client certificate', () => {
  it('names the user in CN and each group in its own O', () => {
    assert.equal(clientX.subject, 'O=dev\nO=system:masters\nCN=jane');
    assert.deepEqual(clientX.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.ok(clientX.checkIssued(caX));
    assert.ok(clientX.verify(caX.publicKey));
  });

  it('is accepted by openssl verify as a TLS client certificate and rejected by another CA', () => {
    assert.equal(opensslVerify(ca.certPem, client.certPem, 'sslclient').status, 0);
    const other = generateCa('other', { now });
    assert.notEqual(opensslVerify(other.certPem, client.certPem, 'sslclient').status, 0);
  });

  it('refuses an empty user name', () => {
    assert.throws(() => generateClientCert(ca, { user: '' }), /user name must not be empty/);
  });
});

describe('front proxy', () => {
  it('client certificate has CN front-proxy-client and chains to the front-proxy CA', () => {
    const fca = generateFrontProxyCa({ now });
    const fcaX = new X509Certificate(fca.certPem);
    const leaf = new X509Certificate(generateFrontProxyClientCert(fca, { now }).certPem);
    assert.equal(fcaX.subject, 'CN=front-proxy-ca');
    assert.equal(leaf.subject, 'CN=front-proxy-client');
    assert.ok(leaf.checkIssued(fcaX) && leaf.verify(fcaX.publicKey));
    assert.equal(leaf.checkIssued(caX), false);
  });
});

describe('service-account key pair', () => {
  it('is an ECDSA P-256 (ES256) PKCS#8 private key with its SPKI public key', () => {
    const pair = generateServiceAccountKeyPair();
    assert.match(pair.privateKeyPem, /^-----BEGIN PRIVATE KEY-----/);
    assert.match(pair.publicKeyPem, /^-----BEGIN PUBLIC KEY-----/);
    const data = Buffer.from('token');
    const sig = sign('sha256', data, createPrivateKey(pair.privateKeyPem));
    assert.ok(verify('sha256', data, createPublicKey(pair.publicKeyPem), sig));
    assert.equal(createPublicKey(pair.publicKeyPem).asymmetricKeyType, 'ec');
    assert.equal(createPublicKey(pair.publicKeyPem).asymmetricKeyDetails?.namedCurve, 'prime256v1');
  });
});

describe('a CA made before with an RSA key', () => {
  it('still issues: the leaf is signed sha256WithRSAEncryption, its AKI is the CA SKI OpenSSL wrote, and openssl verify accepts it', () => {
    const keyFile = join(tmp, 'rsa-ca.key');
    const certFile = join(tmp, 'rsa-ca.crt');
    const r = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=rsa-ca', '-days', '3650', '-keyout', keyFile, '-out', certFile],
      {
        encoding: 'utf8',
      },
    );
    assert.equal(r.status, 0, r.stderr);
    const rsaCa = { certPem: readFileSync(certFile, 'utf8'), keyPem: readFileSync(keyFile, 'utf8') };
    const leaf = generateClientCert(rsaCa, { user: 'old', now: new Date() });
    const leafX = new X509Certificate(leaf.certPem);
    const rsaCaX = new X509Certificate(rsaCa.certPem);
    assert.ok(leafX.checkIssued(rsaCaX) && leafX.verify(rsaCaX.publicKey));
    assert.equal(leafX.publicKey.asymmetricKeyType, 'ec');
    const text = spawnSync('openssl', ['x509', '-noout', '-text'], { input: leaf.certPem, encoding: 'utf8' }).stdout;
    assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
    const caText = spawnSync('openssl', ['x509', '-noout', '-ext', 'subjectKeyIdentifier', '-in', certFile], { encoding: 'utf8' }).stdout;
    const ski = caText.split('\n')[1]!.trim();
    assert.match(text, new RegExp(`Authority Key Identifier:\\s*\\n\\s*(keyid:)?${ski}`));
    const v = spawnSync('openssl', ['verify', '-CAfile', certFile, '-purpose', 'sslclient'], { input: leaf.certPem, encoding: 'utf8' });
    assert.equal(v.status, 0, `${v.stdout}${v.stderr}`);
  });
});
