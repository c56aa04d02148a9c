// Signs service-account tokens with the one signing key
// (--service-account-signing-key-file): RS256 for RSA, ES256/384/512 by curve,
// with the key id kube-apiserver writes so verifiers can pick the key.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { keyId, signingAlgorithm } from './keys.js';

export class TokenSigner {
  readonly alg: string;
  readonly kid: string;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly key: KeyObject,
    source = 'service-account signing key',
  ) {
    this.alg = signingAlgorithm(key, source);
    this.kid = keyId(createPublicKey(key));
  }

  /** A compact JWS of the payload. */
  async sign(payload: Record<string, unknown>): Promise<string> {
    // jose is imported on first use: its module loading is no part of a start (bench/startup.ts).
    const { CompactSign } = await import('jose');
    return new CompactSign(this.encoder.encode(JSON.stringify(payload))).setProtectedHeader({ alg: this.alg, kid: this.kid }).sign(this.key);
  }
}
