// Issues an X.509 certificate for a parsed request, as kube-controller-manager's
// csrsigning authority does: the request's subject, public key and subject
// alternative names, the usages the CertificateSigningRequest asked for, not a
// CA, notBefore backdated five minutes, notAfter never past the CA's. Written
// with the DER writer so any key type the request verified with (RSA, ECDSA,
// Ed25519) can be certified, and signed by node's crypto with the CA key.
import { createHash, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { bitString, bool, explicit, octets, oid, seq, time, tlv, unsignedInt, children, readTlv, rawOf, TAG } from './der.js';
import type { ParsedCsr } from './csr.js';
import { usagesFor } from './usages.js';

export interface SigningCa {
  readonly cert: X509Certificate;
  readonly key: KeyObject;
}

export interface IssueOptions {
  readonly usages: readonly string[];
  /** Requested lifetime, already capped by the signer. */
  readonly ttlMs: number;
  readonly now: number;
}

const BACKDATE_MS = 5 * 60_000;

/** The CA key's signature algorithm: digest and AlgorithmIdentifier. */
function signatureAlgorithm(key: KeyObject): { digest: string | null; algId: Buffer } {
  switch (key.asymmetricKeyType) {
    case 'rsa':
      return { digest: 'sha256', algId: seq(oid('1.2.840.113549.1.1.11'), tlv(TAG.NULL)) };
    case 'ec':
      return key.asymmetricKeyDetails?.namedCurve === 'secp384r1'
        ? { digest: 'sha384', algId: seq(oid('1.2.840.10045.4.3.3')) }
        : { digest: 'sha256', algId: seq(oid('1.2.840.10045.4.3.2')) };
    case 'ed25519':
      return { digest: null, algId: seq(oid('1.3.101.112')) };
    default:
      throw new Error(`the signing key type "${key.asymmetricKeyType ?? 'unknown'}" is not supported`);
  }
}

/** The CA certificate's subject Name and key identifier (its SKI, else the SHA-1 of its key, as Go computes one). */
function issuerOf(ca: X509Certificate): { subject: Buffer; keyId: Buffer } {
  const der = ca.raw;
  const tbs = children(der, readTlv(der, 0))[0]!;
  const f = children(der, tbs);
  const off = f[0]!.tag === 0xa0 ? 1 : 0;
  const subject = rawOf(der, f[off + 4]!);
  const spki = children(der, f[off + 5]!);
  const keyBits = der.subarray(spki[1]!.body + 1, spki[1]!.end);
  return { subject, keyId: createHash('sha1').update(keyBits).digest() };
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

function sanExtension(csr: ParsedCsr): Buffer | undefined {
  const names = [
    ...csr.emailAddresses.map((e) => tlv(0x81, Buffer.from(e, 'latin1'))),
    ...csr.dnsNames.map((d) => tlv(0x82, Buffer.from(d, 'latin1'))),
    ...csr.uris.map((u) => tlv(0x86, Buffer.from(u, 'latin1'))),
    ...csr.ipAddresses.map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  return names.length ? extension('2.5.29.17', false, seq(...names)) : undefined;
}

function ipBytes(ip: string): Buffer {
  if (ip.includes('.') && !ip.includes(':')) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

/** Signs a certificate for `csr`; returns its PEM. */
export function issueCertificate(ca: SigningCa, csr: ParsedCsr, o: IssueOptions): string {
  const { digest, algId } = signatureAlgorithm(ca.key);
  const issuer = issuerOf(ca.cert);
  const caNotAfter = Date.parse(ca.cert.validTo);
  const notAfter = Math.min(o.now + o.ttlMs, caNotAfter);
  const { keyUsageBits, extKeyUsageOids } = usagesFor(o.usages);
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  const extensions = [
    ...(keyUsageBits ? [extension('2.5.29.15', true, keyUsageBits)] : []),
    ...(extKeyUsageOids.length ? [extension('2.5.29.37', false, seq(...extKeyUsageOids.map(oid)))] : []),
    extension('2.5.29.19', true, seq()),
    extension('2.5.29.35', false, seq(tlv(0x80, issuer.keyId))),
    ...[sanExtension(csr)].filter((e): e is Buffer => e !== undefined),
  ];
  const tbs = seq(
    explicit(0, unsignedInt(Buffer.from([2]))),
    unsignedInt(serial),
    algId,
    issuer.subject,
    seq(time(o.now - BACKDATE_MS), time(notAfter)),
    csr.subjectDer,
    csr.spkiDer,
    explicit(3, seq(...extensions)),
  );
  const signature = sign(digest, tbs, ca.key);
  const der = seq(tbs, algId, bitString(signature));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`;
}
