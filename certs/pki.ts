// Certificate and key generation for the dev PKI. Keys come from Node's native
// RSA generator (node-forge's pure-JS one takes seconds per key); node-forge
// builds and signs the X.509 certificates. Everything in and out is PEM.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import forge from 'node-forge';

/** A certificate and its private key (PKCS#8), both PEM. */
export interface CertKeyPair {
  certPem: string;
  keyPem: string;
}

/** A service-account signing key pair: PKCS#8 private key, SPKI public key, both PEM. */
export interface KeyPairPem {
  privateKeyPem: string;
  publicKeyPem: string;
}

export interface CertOptions {
  /** The clock; defaults to the current time. Injected so tests can pin validity windows. */
  now?: Date;
}

export interface ServingCertOptions extends CertOptions {
  commonName?: string;
  /** Extra DNS names and IP addresses, beside the built-in 127.0.0.1, ::1 and localhost. */
  hosts?: readonly string[];
}

export interface ClientCertOptions extends CertOptions {
  user: string;
  groups?: readonly string[];
}

const DAY_MS = 24 * 60 * 60 * 1000;
export const CA_VALIDITY_MS = 10 * 365 * DAY_MS;
export const LEAF_VALIDITY_MS = 365 * DAY_MS;
/** notBefore is backdated so that a peer whose clock runs a little behind still accepts a fresh cert. */
export const CLOCK_SKEW_MS = 5 * 60 * 1000;
export const DEFAULT_SANS: readonly string[] = ['127.0.0.1', '::1', 'localhost'];

export function generateRsaKeyPair(bits = 2048): KeyPairPem {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: bits,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** The service-account token signing key (`--service-account-signing-key-file` / `--service-account-key-file`). */
export function generateServiceAccountKeyPair(): KeyPairPem {
  return generateRsaKeyPair(2048);
}

export function generateCa(commonName = 'gatehouse-ca', opts: CertOptions = {}): CertKeyPair {
  const keys = generateRsaKeyPair();
  const cert = newCertificate(keys, opts.now, CA_VALIDITY_MS);
  const subject = [{ name: 'commonName', value: commonName }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const key = forge.pki.privateKeyFromPem(keys.privateKeyPem);
  cert.sign(key, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

/** The CA that signs the front proxy's client certificate (`--requestheader-client-ca-file`). */
export function generateFrontProxyCa(opts: CertOptions = {}): CertKeyPair {
  return generateCa('front-proxy-ca', opts);
}

/** The API server's TLS certificate; always valid for 127.0.0.1, ::1 and localhost. */
export function generateServingCert(ca: CertKeyPair, opts: ServingCertOptions = {}): CertKeyPair {
  const hosts = uniqueHosts([...DEFAULT_SANS, ...(opts.hosts ?? [])]);
  const altNames = hosts.map((h) => (isIP(h) ? { type: 7, ip: h } : { type: 2, value: h }));
  return signLeaf(ca, [{ name: 'commonName', value: opts.commonName ?? 'gatehouse-apiserver' }], opts.now, [
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
}

/** A client certificate as Kubernetes reads it: CN is the user name, each O a group. */
export function generateClientCert(ca: CertKeyPair, opts: ClientCertOptions): CertKeyPair {
  if (opts.user === '') throw new Error('invalid client certificate: user name must not be empty');
  const subject = [...(opts.groups ?? []).map((g) => ({ name: 'organizationName', value: g })), { name: 'commonName', value: opts.user }];
  return signLeaf(ca, subject, opts.now, [
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', clientAuth: true },
  ]);
}

/** The front proxy's client certificate, presented to backends that trust request headers. */
export function generateFrontProxyClientCert(frontProxyCa: CertKeyPair, opts: CertOptions = {}): CertKeyPair {
  return generateClientCert(frontProxyCa, { ...opts, user: 'front-proxy-client' });
}

/** Lower-cased, de-duplicated host list, IPs normalised so `::1` and `0:0::1` count once. */
function uniqueHosts(hosts: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of hosts) {
    const h = raw
      .trim()
      .toLowerCase()
      .replace(/^\[(.*)\]$/, '$1');
    if (h === '') continue;
    const key = isIP(h) === 6 ? new URL(`http://[${h}]/`).hostname : h;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(h);
  }
  return out;
}

type Attr = { name: string; value: string };
type Extension = Record<string, unknown> & { name: string };

function signLeaf(ca: CertKeyPair, subject: Attr[], now: Date | undefined, extensions: Extension[]): CertKeyPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = generateRsaKeyPair();
  const cert = newCertificate(keys, now, LEAF_VALIDITY_MS);
  // A leaf must not outlive its issuer: OpenSSL and Go reject such chains once the CA expires anyway.
  if (cert.validity.notAfter > caCert.validity.notAfter) cert.validity.notAfter = caCert.validity.notAfter;
  cert.setSubject(subject);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    ...extensions,
    { name: 'subjectKeyIdentifier' },
    // forge's `keyIdentifier: true` would use the leaf's own key; chain builders match this against the CA's SKI.
    { name: 'authorityKeyIdentifier', keyIdentifier: caKeyIdentifier(caCert) },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: keys.privateKeyPem };
}

function caKeyIdentifier(caCert: forge.pki.Certificate): string {
  const ext = caCert.getExtension('subjectKeyIdentifier') as { subjectKeyIdentifier?: string } | undefined;
  if (ext?.subjectKeyIdentifier) return forge.util.hexToBytes(ext.subjectKeyIdentifier);
  return caCert.generateSubjectKeyIdentifier().getBytes();
}

function newCertificate(keys: KeyPairPem, now: Date | undefined, validityMs: number): forge.pki.Certificate {
  const start = (now ?? new Date()).getTime();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKeyPem);
  cert.serialNumber = randomSerial();
  cert.validity.notBefore = new Date(start - CLOCK_SKEW_MS);
  cert.validity.notAfter = new Date(start + validityMs);
  return cert;
}

/** 128 random bits, high bit cleared so the DER INTEGER stays positive without padding. */
function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01;
  return bytes.toString('hex');
}
