// A SubjectPublicKeyInfo as a node KeyObject, imported by the cheapest form
// OpenSSL 3 offers for each algorithm (bench/csr-floor.ts, CPU per fresh key):
// RSA as its PKCS#1 key (~7 µs against the SPKI decoder's ~120), P-256 and
// Ed25519 as JWK (~85 / ~19 µs). A JWK EC import checks the point by a scalar
// multiplication, cheap on P-256's tuned code but ~480 µs on P-384, so P-384,
// P-521 and everything else go through the SPKI decoder. Where a promise may
// be awaited (a write's prevalidate), P-256 is imported as WebCrypto's raw
// point instead: the same on-curve and range checks, without the order check
// (redundant on a prime-order curve, ~1/3 of import plus verify's instructions).
import { createPublicKey, KeyObject, webcrypto } from 'node:crypto';
import { bytesOf, children, decodeOid, expectTag, rawOf, readTlv, TAG, type Tlv } from './der.js';

export interface PublicKeyInfo {
  readonly key: KeyObject;
  /** 'rsa', 'ec', 'ed25519', or KeyObject.asymmetricKeyType for the others. */
  readonly type: string;
  /** EC: the named curve, as node names it. */
  readonly curve?: string;
  /** RSA: the modulus length in bits. */
  readonly rsaBits?: number;
}

/** The curve imported as JWK: P-256's OID. */
const P256 = '1.2.840.10045.3.1.7';
const P256_POINT = 1 + 2 * 32;

const b64url = (b: Buffer) => b.toString('base64url');

function rsaBits(der: Buffer, pkcs1: Tlv): number {
  const n = children(der, pkcs1)[0]!;
  let i = n.body;
  while (i < n.end && der[i] === 0) i++;
  if (i === n.end) return 0;
  return (n.end - i) * 8 - Math.clz32(der[i]!) + 24;
}

interface SpkiFields {
  readonly algOid: string;
  /** The algorithm's parameters (the curve's OID for EC keys). */
  readonly params: Tlv | undefined;
  /** The BIT STRING's bits (the unused-bits count skipped). */
  readonly keyBytes: Buffer;
}

function fieldsOf(der: Buffer, spki: Tlv): SpkiFields {
  const [alg, bits] = children(der, spki);
  const algFields = children(der, expectTag(alg, TAG.SEQUENCE, 'algorithm'));
  const algOid = decodeOid(der, expectTag(algFields[0], TAG.OID, 'algorithm'));
  const keyBytes = bytesOf(der, expectTag(bits, TAG.BIT_STRING, 'public key')).subarray(1);
  return { algOid, params: algFields[1], keyBytes };
}

/** An uncompressed P-256 point. */
function isP256Point(der: Buffer, f: SpkiFields): boolean {
  return (
    f.algOid === '1.2.840.10045.2.1' &&
    f.params?.tag === TAG.OID &&
    f.keyBytes[0] === 4 &&
    f.keyBytes.length === P256_POINT &&
    decodeOid(der, f.params) === P256
  );
}

const P256_RAW = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/**
 * importSpki, with an uncompressed P-256 point imported as WebCrypto's raw
 * point (no order check); rejects when the key does not parse, as importSpki throws.
 */
export async function importSpkiAsync(der: Buffer, spki: Tlv): Promise<PublicKeyInfo> {
  const f = fieldsOf(der, spki);
  if (!isP256Point(der, f)) return importSpki(der, spki);
  const key = await webcrypto.subtle.importKey('raw', f.keyBytes, P256_RAW, false, ['verify']);
  return { key: KeyObject.from(key), type: 'ec', curve: 'prime256v1' };
}

/** Throws when the key does not parse (the caller words the error). */
export function importSpki(der: Buffer, spki: Tlv): PublicKeyInfo {
  const f = fieldsOf(der, spki);
  const { algOid, keyBytes } = f;
  if (algOid === '1.2.840.113549.1.1.1') {
    const pkcs1 = readTlv(keyBytes, 0);
    return { key: createPublicKey({ key: keyBytes, format: 'der', type: 'pkcs1' }), type: 'rsa', rsaBits: rsaBits(keyBytes, pkcs1) };
  }
  if (isP256Point(der, f)) {
    const x = b64url(keyBytes.subarray(1, 33));
    const y = b64url(keyBytes.subarray(33));
    return { key: createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' }), type: 'ec', curve: 'prime256v1' };
  }
  if (algOid === '1.3.101.112' && keyBytes.length === 32) {
    return { key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(keyBytes) }, format: 'jwk' }), type: 'ed25519' };
  }
  // Compressed EC points, P-384, P-521, other curves and algorithms: the generic decoder.
  const key = createPublicKey({ key: rawOf(der, spki), format: 'der', type: 'spki' });
  const details = key.asymmetricKeyDetails ?? {};
  return { key, type: key.asymmetricKeyType ?? '', ...(details.namedCurve ? { curve: details.namedCurve } : {}) };
}
