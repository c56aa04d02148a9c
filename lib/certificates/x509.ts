// Writing and signing an X.509 v3 certificate: what the csrsigning controller
// (issue.ts) and the dev PKI (certs/pki.ts) share. The TBSCertificate is
// built with the DER writer and signed by node's crypto, so any CA key node
// holds (RSA, ECDSA, Ed25519) signs, in native code.
import { createHash, randomBytes, sign, type KeyObject, type X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { bool, bitString, children, explicit, octets, oid, rawOf, readTlv, seq, time, tlv, unsignedInt, TAG } from './der.js';

/** The signing key's signature algorithm: digest and AlgorithmIdentifier (SHA-256 but for P-384, as Go's x509). */
export function signatureAlgorithm(key: KeyObject): { digest: string | null; algId: Buffer } {
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

/** The SHA-1 of a SubjectPublicKeyInfo's key bits: a key identifier as Go and OpenSSL compute one (RFC 5280 4.2.1.2 (1)). */
export function keyIdOf(spkiDer: Buffer): Buffer {
  const spki = children(spkiDer, readTlv(spkiDer, 0));
  return createHash('sha1')
    .update(spkiDer.subarray(spki[1]!.body + 1, spki[1]!.end))
    .digest();
}

/** The issuing certificate's subject Name and key identifier (what its SKI holds when we or node-forge wrote it). */
export function issuerOf(ca: X509Certificate): { subject: Buffer; keyId: Buffer } {
  const der = ca.raw;
  const tbs = children(der, readTlv(der, 0))[0]!;
  const f = children(der, tbs);
  const off = f[0]!.tag === 0xa0 ? 1 : 0;
  return { subject: rawOf(der, f[off + 4]!), keyId: keyIdOf(rawOf(der, f[off + 5]!)) };
}

/** PrintableString's characters (X.680 41.4); anything else is a UTF8String, as Go's pkix marshals names. */
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
const NAME_OIDS = { commonName: '2.5.4.3', organizationName: '2.5.4.10' } as const;

/** A distinguished Name, one attribute per RDN, in the order given (Go puts O before CN). */
export function nameDer(attrs: readonly { name: keyof typeof NAME_OIDS; value: string }[]): Buffer {
  return seq(
    ...attrs.map((a) =>
      tlv(TAG.SET, seq(oid(NAME_OIDS[a.name]), tlv(PRINTABLE.test(a.value) ? TAG.PRINTABLE_STRING : TAG.UTF8_STRING, Buffer.from(a.value, 'utf8')))),
    ),
  );
}

export function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));
}

/** basicConstraints, always critical: a CA (no path length) or not. */
export const basicConstraints = (ca: boolean): Buffer => extension('2.5.29.19', true, ca ? seq(bool(true)) : seq());
export const subjectKeyId = (keyId: Buffer): Buffer => extension('2.5.29.14', false, octets(keyId));
export const authorityKeyId = (keyId: Buffer): Buffer => extension('2.5.29.35', false, seq(tlv(0x80, keyId)));

/** subjectAltName from DNS names, e-mail addresses, URIs and IP addresses; undefined when there are none. */
export function sanExtension(n: {
  readonly dnsNames?: readonly string[];
  readonly emailAddresses?: readonly string[];
  readonly uris?: readonly string[];
  readonly ipAddresses?: readonly string[];
}): Buffer | undefined {
  const names = [
    ...(n.emailAddresses ?? []).map((e) => tlv(0x81, Buffer.from(e, 'latin1'))),
    ...(n.dnsNames ?? []).map((d) => tlv(0x82, Buffer.from(d, 'latin1'))),
    ...(n.uris ?? []).map((u) => tlv(0x86, Buffer.from(u, 'latin1'))),
    ...(n.ipAddresses ?? []).map((ip) => tlv(0x87, ipBytes(ip))),
  ];
  return names.length ? extension('2.5.29.17', false, seq(...names)) : undefined;
}

/** subjectAltName of host names in the order given: each an iPAddress when it is an IP, else a dNSName. */
export function hostsSanExtension(hosts: readonly string[]): Buffer {
  return extension('2.5.29.17', false, seq(...hosts.map((h) => (isIP(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, 'latin1'))))));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const h = head ? head.split(':') : [];
  const t = ip.includes('::') ? (tail ? tail.split(':') : []) : [];
  const groups = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  const b = Buffer.alloc(16);
  groups.forEach((g, i) => b.writeUInt16BE(parseInt(g, 16), i * 2));
  return b;
}

/** 128 random bits, high bit cleared so the DER INTEGER stays positive without padding. */
export function randomSerial(): Buffer {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial;
}

export interface CertificateFields {
  readonly serial: Buffer;
  /** The issuer's Name (DER); the subject's own for a self-signed certificate. */
  readonly issuer: Buffer;
  readonly notBefore: number;
  readonly notAfter: number;
  readonly subject: Buffer;
  readonly spki: Buffer;
  readonly extensions: readonly Buffer[];
}

/** A v3 certificate with these fields, signed by `key`, as PEM. */
export function signCertificate(f: CertificateFields, key: KeyObject): string {
  const { digest, algId } = signatureAlgorithm(key);
  const tbs = seq(
    explicit(0, unsignedInt(Buffer.from([2]))),
    unsignedInt(f.serial),
    algId,
    f.issuer,
    seq(time(f.notBefore), time(f.notAfter)),
    f.subject,
    f.spki,
    explicit(3, seq(...f.extensions)),
  );
  const der = seq(tbs, algId, bitString(sign(digest, tbs, key)));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`;
}
