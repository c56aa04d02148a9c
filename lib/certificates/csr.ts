// PKCS#10 certificate requests as kube reads them (certificates.ParseCSR and
// x509.CertificateRequest.CheckSignature): one PEM CERTIFICATE REQUEST block,
// its subject, subject alternative names and public key, and a signature that
// verifies over the exact bytes of certificationRequestInfo. Node's crypto
// verifies, so RSA, ECDSA and Ed25519 keys are read alike; DSA, which Go no
// longer verifies, is refused as kube refuses it.
import { verify, type KeyObject } from 'node:crypto';
import { bytesOf, children, decodeOid, expectTag, rawOf, readTlv, TAG, type Tlv } from './der.js';
import { importSpki, importSpkiAsync, type PublicKeyInfo } from './spki.js';
import { readSans, readSubject, type RequestNames } from './names.js';

/** The verified key itself is not kept: a remembered parse would hold a native key object alive. */
export interface ParsedCsr extends RequestNames {
  /** The subject Name as it was encoded (copied into an issued certificate). */
  readonly subjectDer: Buffer;
  /** SubjectPublicKeyInfo as it was encoded. */
  readonly spkiDer: Buffer;
  /** 'rsa', 'ec', 'ed25519', … (KeyObject.asymmetricKeyType). */
  readonly keyType: string;
  /** RSA modulus length in bits. */
  readonly rsaBits?: number;
}

/** signatureAlgorithm OID → [digest, key type it needs]; digest null for Ed25519. */
const SIGNATURE_ALGORITHMS: ReadonlyMap<string, readonly [string | null, string]> = new Map([
  ['1.2.840.113549.1.1.5', ['sha1', 'rsa']],
  ['1.2.840.113549.1.1.11', ['sha256', 'rsa']],
  ['1.2.840.113549.1.1.12', ['sha384', 'rsa']],
  ['1.2.840.113549.1.1.13', ['sha512', 'rsa']],
  ['1.2.840.10045.4.1', ['sha1', 'ec']],
  ['1.2.840.10045.4.3.2', ['sha256', 'ec']],
  ['1.2.840.10045.4.3.3', ['sha384', 'ec']],
  ['1.2.840.10045.4.3.4', ['sha512', 'ec']],
  ['1.3.101.112', [null, 'ed25519']],
]);

/** The curves Go's x509 parses. */
const CURVES = new Set(['prime256v1', 'secp384r1', 'secp521r1']);

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/;

/** The DER of the first PEM block, which must be a CERTIFICATE REQUEST (kube's wording otherwise). */
export function csrDer(pem: Buffer | string): Buffer {
  const m = PEM_BLOCK.exec(typeof pem === 'string' ? pem : pem.toString('latin1'));
  if (!m || m[1] !== 'CERTIFICATE REQUEST' || /^[A-Za-z-]+:/m.test(m[2]!)) throw new Error('PEM block type must be CERTIFICATE REQUEST');
  return Buffer.from(m[2]!.replace(/\s+/g, ''), 'base64');
}

/** A request's DER and its top-level parts, its shape checked. */
interface CsrParts {
  readonly der: Buffer;
  /** certificationRequestInfo, signatureAlgorithm, signature. */
  readonly parts: Tlv[];
  /** version, subject, subjectPKInfo, attributes. */
  readonly info: Tlv[];
}

function partsOf(pem: Buffer | string): CsrParts {
  const der = csrDer(pem);
  try {
    const outer = expectTag(readTlv(der, 0), TAG.SEQUENCE, 'certificate request');
    if (outer.end !== der.length) throw new Error('asn1: trailing data');
    const parts = children(der, outer);
    const info = children(der, expectTag(parts[0], TAG.SEQUENCE, 'certificate request info'));
    expectTag(parts[1], TAG.SEQUENCE, 'signature algorithm');
    expectTag(parts[2], TAG.BIT_STRING, 'signature');
    expectTag(info[0], TAG.INTEGER, 'version');
    expectTag(info[1], TAG.SEQUENCE, 'subject');
    expectTag(info[2], TAG.SEQUENCE, 'public key');
    return { der, parts, info };
  } catch (err) {
    throw new Error(`x509: malformed certificate request: ${(err as Error).message}`);
  }
}

const UNSUPPORTED_KEY = 'x509: unsupported public key algorithm';

/** The rest of a parse once the key is imported: the key's limits, the signature, the names. */
function finish({ der, parts, info }: CsrParts, pk: PublicKeyInfo): ParsedCsr {
  const { key: publicKey, type: keyType } = pk;
  if (keyType === 'ec' && !CURVES.has(pk.curve ?? '')) throw new Error('x509: unsupported elliptic curve');
  if (keyType === 'rsa' && (pk.rsaBits ?? 0) < 1024)
    throw new Error(`crypto/rsa: ${pk.rsaBits ?? 0}-bit keys are insecure (see https://go.dev/pkg/crypto/rsa#hdr-Minimum_key_size)`);
  checkSignature(der, parts, publicKey, keyType);
  const subject = readSubject(der, info[1]!);
  const sans = readSans(der, info[3]);
  return {
    ...subject,
    ...sans,
    subjectDer: rawOf(der, info[1]!),
    spkiDer: rawOf(der, info[2]!),
    keyType,
    ...(pk.rsaBits !== undefined ? { rsaBits: pk.rsaBits } : {}),
  };
}

/** Parses a PEM request and checks its signature; throws an Error whose message says why it is refused. */
export function parseCsr(pem: Buffer | string): ParsedCsr {
  const p = partsOf(pem);
  let pk: PublicKeyInfo;
  try {
    pk = importSpki(p.der, p.info[2]!);
  } catch {
    throw new Error(UNSUPPORTED_KEY);
  }
  return finish(p, pk);
}

/** parseCsr with the key imported by importSpkiAsync: the same answer, a P-256 key imported for less. */
export async function parseCsrAsync(pem: Buffer | string): Promise<ParsedCsr> {
  const p = partsOf(pem);
  let pk: PublicKeyInfo;
  try {
    pk = await importSpkiAsync(p.der, p.info[2]!);
  } catch {
    throw new Error(UNSUPPORTED_KEY);
  }
  return finish(p, pk);
}

const CACHE_SIZE = 256;
/** Larger requests are not remembered: the cache holds at most CACHE_SIZE × this many characters. */
const CACHE_MAX_CHARS = 16 * 1024;
const recent = new Map<string, ParsedCsr | Error>();

function remember(request: string, v: ParsedCsr | Error): void {
  if (request.length > CACHE_MAX_CHARS) return;
  if (recent.size >= CACHE_SIZE) recent.delete(recent.keys().next().value!);
  recent.set(request, v);
}

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

/**
 * parseCsr of a CertificateSigningRequest's spec.request (base64), remembered
 * for the last few requests: validation, admission and the controllers read
 * the same request within moments, and a key import plus a signature check
 * cost more than the rest of a create.
 */
export function parseCsrBase64(request: string): ParsedCsr {
  let v = recent.get(request);
  if (v === undefined) {
    try {
      v = parseCsr(Buffer.from(request, 'base64'));
    } catch (err) {
      v = asError(err);
    }
    remember(request, v);
  }
  if (v instanceof Error) throw v;
  return v;
}

/**
 * Parses a request that parseCsrBase64 will be asked for next (a create's
 * prevalidate, before its validation and admission), by parseCsrAsync, and
 * remembers the result; never rejects. A request too large to be remembered
 * is left to parseCsrBase64.
 */
export async function prepareCsrBase64(request: string): Promise<void> {
  if (request.length > CACHE_MAX_CHARS || recent.has(request)) return;
  let v: ParsedCsr | Error;
  try {
    v = await parseCsrAsync(Buffer.from(request, 'base64'));
  } catch (err) {
    v = asError(err);
  }
  remember(request, v);
}

function checkSignature(der: Buffer, parts: Tlv[], key: KeyObject, keyType: string): void {
  const algOid = decodeOid(der, expectTag(children(der, parts[1]!)[0], TAG.OID, 'signature algorithm'));
  const alg = SIGNATURE_ALGORITHMS.get(algOid);
  if (!alg) throw new Error('x509: cannot verify signature: algorithm unimplemented');
  if (alg[1] !== keyType) throw new Error('x509: signature algorithm specifies an incompatible public key type');
  const sigBits = bytesOf(der, parts[2]!);
  if (sigBits[0] !== 0) throw new Error('x509: malformed signature');
  const ok = verify(alg[0], rawOf(der, parts[0]!), key, sigBits.subarray(1));
  if (!ok) {
    throw new Error(
      keyType === 'rsa' ? 'crypto/rsa: verification error' : keyType === 'ec' ? 'x509: ECDSA verification failure' : 'x509: Ed25519 verification failure',
    );
  }
}
