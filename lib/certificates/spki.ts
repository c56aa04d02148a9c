// A SubjectPublicKeyInfo as a node KeyObject, imported by the cheapest form
// OpenSSL 3 offers for each algorithm: RSA as its PKCS#1 key, EC and Ed25519
// as JWK. The generic SPKI decoder costs ~0.35 ms a key, which would be most
// of a CertificateSigningRequest create; other algorithms still go through it.
import { createPublicKey, type KeyObject } from 'node:crypto';
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

const CURVES: ReadonlyMap<string, readonly [jwk: string, node: string, bytes: number]> = new Map([
  ['1.2.840.10045.3.1.7', ['P-256', 'prime256v1', 32]],
  ['1.3.132.0.34', ['P-384', 'secp384r1', 48]],
  ['1.3.132.0.35', ['P-521', 'secp521r1', 66]],
]);

const b64url = (b: Buffer) => b.toString('base64url');

function rsaBits(der: Buffer, pkcs1: Tlv): number {
  const n = children(der, pkcs1)[0]!;
  let i = n.body;
  while (i < n.end && der[i] === 0) i++;
  if (i === n.end) return 0;
  return (n.end - i) * 8 - Math.clz32(der[i]!) + 24;
}

/** Throws when the key does not parse (the caller words the error). */
export function importSpki(der: Buffer, spki: Tlv): PublicKeyInfo {
  const [alg, bits] = children(der, spki);
  const algFields = children(der, expectTag(alg, TAG.SEQUENCE, 'algorithm'));
  const algOid = decodeOid(der, expectTag(algFields[0], TAG.OID, 'algorithm'));
  const keyBytes = bytesOf(der, expectTag(bits, TAG.BIT_STRING, 'public key')).subarray(1);
  if (algOid === '1.2.840.113549.1.1.1') {
    const pkcs1 = readTlv(keyBytes, 0);
    return { key: createPublicKey({ key: keyBytes, format: 'der', type: 'pkcs1' }), type: 'rsa', rsaBits: rsaBits(keyBytes, pkcs1) };
  }
  if (algOid === '1.2.840.10045.2.1' && algFields[1]?.tag === TAG.OID) {
    const curve = CURVES.get(decodeOid(der, algFields[1]));
    if (curve && keyBytes[0] === 4 && keyBytes.length === 1 + 2 * curve[2]) {
      const x = keyBytes.subarray(1, 1 + curve[2]);
      const y = keyBytes.subarray(1 + curve[2]);
      return { key: createPublicKey({ key: { kty: 'EC', crv: curve[0], x: b64url(x), y: b64url(y) }, format: 'jwk' }), type: 'ec', curve: curve[1] };
    }
  }
  if (algOid === '1.3.101.112' && keyBytes.length === 32) {
    return { key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: b64url(keyBytes) }, format: 'jwk' }), type: 'ed25519' };
  }
  // Compressed EC points, other curves and algorithms: the generic decoder.
  const key = createPublicKey({ key: rawOf(der, spki), format: 'der', type: 'spki' });
  const details = key.asymmetricKeyDetails ?? {};
  return { key, type: key.asymmetricKeyType ?? '', ...(details.namedCurve ? { curve: details.namedCurve } : {}) };
}
