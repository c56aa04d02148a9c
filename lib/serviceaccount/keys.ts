// Service-account keys: every key of a PEM file (RSA or ECDSA; private or
// public keys, or certificates), their key ids as kube-apiserver computes
// them, and the JWS algorithms each key type may verify. Never `none`, never
// an HMAC algorithm: a public key is never a shared secret.
import { X509Certificate, createHash, createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
import { ConfigError } from '../config/error.js';
import { ownValue } from '../api/own.js';

export interface VerificationKey {
  /** base64url(SHA-256(DER SubjectPublicKeyInfo)), the `kid` kube-apiserver writes. */
  readonly kid: string;
  readonly key: KeyObject;
  /** Algorithms a token signed with this key may name. */
  readonly algorithms: readonly string[];
}

const RSA_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const;
const EC_ALGORITHMS: Readonly<Record<string, string>> = { prime256v1: 'ES256', secp384r1: 'ES384', secp521r1: 'ES512' };

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----\r?\n[\s\S]*?-----END \1-----/g;

/** The algorithms a public key can verify; throws for key types Gatehouse does not accept. */
export function algorithmsFor(key: KeyObject, source: string): readonly string[] {
  if (key.asymmetricKeyType === 'rsa') return RSA_ALGORITHMS;
  if (key.asymmetricKeyType === 'ec') {
    const curve = key.asymmetricKeyDetails?.namedCurve ?? '';
    const alg = ownValue(EC_ALGORITHMS, curve) as string | undefined;
    if (alg) return [alg];
    throw new ConfigError(`unsupported elliptic curve "${curve}" (P-256, P-384 or P-521)`, { file: source });
  }
  throw new ConfigError(`unsupported key type "${key.asymmetricKeyType ?? 'unknown'}" (RSA or ECDSA)`, { file: source });
}

/** The algorithm Gatehouse signs with for a private key: RS256 for RSA, ES256/384/512 by curve. */
export function signingAlgorithm(key: KeyObject, source: string): string {
  return algorithmsFor(key.type === 'private' ? createPublicKey(key) : key, source)[0]!;
}

export function keyId(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** The public key of one PEM block, or undefined for blocks that hold no key (EC PARAMETERS). */
function publicKeyOf(type: string, block: string, source: string): KeyObject | undefined {
  try {
    switch (type) {
      case 'PUBLIC KEY':
      case 'RSA PUBLIC KEY':
        return createPublicKey(block);
      case 'PRIVATE KEY':
      case 'RSA PRIVATE KEY':
      case 'EC PRIVATE KEY':
        return createPublicKey(createPrivateKey(block));
      case 'CERTIFICATE':
        return new X509Certificate(block).publicKey;
      case 'EC PARAMETERS':
        return undefined;
      default:
        throw new ConfigError(`unexpected PEM block "${type}"`, { file: source });
    }
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`unreadable "${type}" block: ${err instanceof Error ? err.message : String(err)}`, { file: source });
  }
}

/** Every public key of a PEM file's text; a file without any key is an error. */
export function parseVerificationKeys(pem: string, source: string): VerificationKey[] {
  const out: VerificationKey[] = [];
  for (const m of pem.matchAll(PEM_BLOCK)) {
    const key = publicKeyOf(m[1]!, m[0], source);
    if (!key) continue;
    out.push(Object.freeze({ kid: keyId(key), key, algorithms: algorithmsFor(key, source) }));
  }
  if (out.length === 0) throw new ConfigError('no PEM public key, private key or certificate found', { file: source });
  return out;
}

/** The one private key of a signing key file (PKCS#1, PKCS#8 or SEC 1 PEM). */
export function parseSigningKey(pem: string, source: string): KeyObject {
  const blocks = [...pem.matchAll(PEM_BLOCK)].filter((m) => m[1]!.endsWith('PRIVATE KEY'));
  if (blocks.length !== 1) throw new ConfigError(`expected exactly one PEM private key, found ${blocks.length}`, { file: source });
  let key: KeyObject;
  try {
    key = createPrivateKey(blocks[0]![0]);
  } catch (err) {
    throw new ConfigError(`unreadable private key: ${err instanceof Error ? err.message : String(err)}`, { file: source });
  }
  signingAlgorithm(key, source);
  return key;
}
