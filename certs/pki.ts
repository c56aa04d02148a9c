// Certificate and key generation for the dev PKI. Keys are ECDSA P-256 (as
// kubeadm's `encryptionAlgorithm: ECDSA-P256`) from node's crypto; the
// certificates are written with lib/certificates' DER writer and signed by
// node's crypto with the CA's key, whatever its type (a PKI made before with
// RSA keys keeps signing). Everything in and out is PEM.
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { isIP } from 'node:net';
import {
  authorityKeyId,
  basicConstraints,
  extension,
  issuerOf,
  keyIdOf,
  nameDer,
  randomSerial,
  hostsSanExtension,
  signCertificate,
  subjectKeyId,
} from '../lib/certificates/x509.js';
import { oid, seq } from '../lib/certificates/der.js';
import { usagesFor } from '../lib/certificates/usages.js';

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

/**
 * The dev PKI's key type: ECDSA P-256. An RSA-2048 key costs 50–800 ms of CPU to find (random prime search), and
 * the PKI needs six: seconds of a first start; a P-256 key costs well under 1 ms.
 */
export function generateEcKeyPair(): KeyPairPem {
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKeyPem: privateKey, publicKeyPem: publicKey };
}

/** The service-account token signing key (`--service-account-signing-key-file` / `--service-account-key-file`): ES256. */
export function generateServiceAccountKeyPair(): KeyPairPem {
  return generateEcKeyPair();
}

export function generateCa(commonName = 'gatehouse-ca', opts: CertOptions = {}): CertKeyPair {
  const keys = generateEcKeyPair();
  const key = createPrivateKey(keys.privateKeyPem);
  const spki = spkiDer(keys);
  const subject = nameDer([{ name: 'commonName', value: commonName }]);
  const start = (opts.now ?? new Date()).getTime();
  const certPem = signCertificate(
    {
      serial: randomSerial(),
      issuer: subject,
      notBefore: start - CLOCK_SKEW_MS,
      notAfter: start + CA_VALIDITY_MS,
      subject,
      spki,
      extensions: [basicConstraints(true), keyUsage(['digital signature', 'key encipherment', 'cert sign', 'crl sign']), subjectKeyId(keyIdOf(spki))],
    },
    key,
  );
  return { certPem, keyPem: keys.privateKeyPem };
}

/** The CA that signs the front proxy's client certificate (`--requestheader-client-ca-file`). */
export function generateFrontProxyCa(opts: CertOptions = {}): CertKeyPair {
  return generateCa('front-proxy-ca', opts);
}

/** The API server's TLS certificate; always valid for 127.0.0.1, ::1 and localhost. */
export function generateServingCert(ca: CertKeyPair, opts: ServingCertOptions = {}): CertKeyPair {
  const hosts = uniqueHosts([...DEFAULT_SANS, ...(opts.hosts ?? [])]);
  return signLeaf(ca, [{ name: 'commonName', value: opts.commonName ?? 'gatehouse-apiserver' }], opts.now, [
    keyUsage(['digital signature', 'key encipherment']),
    extKeyUsage(['server auth']),
    hostsSanExtension(hosts),
  ]);
}

/** A client certificate as Kubernetes reads it: CN is the user name, each O a group. */
export function generateClientCert(ca: CertKeyPair, opts: ClientCertOptions): CertKeyPair {
  if (opts.user === '') throw new Error('invalid client certificate: user name must not be empty');
  const subject: Attr[] = [...(opts.groups ?? []).map((g) => ({ name: 'organizationName' as const, value: g })), { name: 'commonName', value: opts.user }];
  return signLeaf(ca, subject, opts.now, [keyUsage(['digital signature', 'key encipherment']), extKeyUsage(['client auth'])]);
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

type Attr = Parameters<typeof nameDer>[0][number];

/** keyUsage, critical, from kube's usage names. */
const keyUsage = (usages: string[]): Buffer => extension('2.5.29.15', true, usagesFor(usages).keyUsageBits!);
const extKeyUsage = (usages: string[]): Buffer => extension('2.5.29.37', false, seq(...usagesFor(usages).extKeyUsageOids.map(oid)));

function spkiDer(keys: KeyPairPem): Buffer {
  return createPublicKey(keys.publicKeyPem).export({ type: 'spki', format: 'der' });
}

function signLeaf(ca: CertKeyPair, subject: Attr[], now: Date | undefined, extensions: Buffer[]): CertKeyPair {
  const caCert = new X509Certificate(ca.certPem);
  const issuer = issuerOf(caCert);
  const keys = generateEcKeyPair();
  const spki = spkiDer(keys);
  const start = (now ?? new Date()).getTime();
  const certPem = signCertificate(
    {
      serial: randomSerial(),
      issuer: issuer.subject,
      notBefore: start - CLOCK_SKEW_MS,
      // A leaf must not outlive its issuer: OpenSSL and Go reject such chains once the CA expires anyway.
      notAfter: Math.min(start + LEAF_VALIDITY_MS, Date.parse(caCert.validTo)),
      subject: nameDer(subject),
      spki,
      extensions: [
        basicConstraints(false),
        ...extensions,
        subjectKeyId(keyIdOf(spki)),
        // The CA's key identifier (its SKI), which chain builders match; not the leaf's own.
        authorityKeyId(issuer.keyId),
      ],
    },
    createPrivateKey(ca.keyPem),
  );
  return { certPem, keyPem: keys.privateKeyPem };
}
