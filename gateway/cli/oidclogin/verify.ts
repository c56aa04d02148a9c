// An ID token is checked before it is cached or printed: signed by a key of
// the provider's JWKS (with an algorithm it announces), issued by the
// discovered issuer, for this client, not expired, and carrying the nonce
// this login sent. openid-client checks the claims of a code flow too, but it
// trusts the TLS channel for the signature; a token kubectl will carry to the
// API server is checked whole here, whatever grant produced it.
import { createLocalJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import { LoginError, describeError, type Provider } from './provider.js';

const NAMES: Record<string, string> = { iss: 'issuer', aud: 'audience', exp: 'expiry', nbf: 'not-before', iat: 'issued-at' };

async function jwks(p: Provider, timeoutSec: number): Promise<JSONWebKeySet> {
  const uri = p.config.serverMetadata().jwks_uri;
  if (!uri) throw new LoginError(`the provider ${p.issuer} announces no jwks_uri: its ID tokens cannot be verified`);
  let body: unknown;
  try {
    const r = await p.fetch(uri, { method: 'GET', headers: { accept: 'application/json' }, body: undefined, redirect: 'manual' } as Parameters<
      Provider['fetch']
    >[1]);
    if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
    body = await r.json();
  } catch (err) {
    throw new LoginError(`the provider's JWKS at ${uri} cannot be read: ${describeError(err, p.issuer, timeoutSec)}`);
  }
  if (typeof body !== 'object' || body === null || !Array.isArray((body as { keys?: unknown }).keys)) {
    throw new LoginError(`the provider's JWKS at ${uri} is not a JSON Web Key Set`);
  }
  return body as JSONWebKeySet;
}

export interface Expect {
  clientId: string;
  /** The nonce the authorization request sent; absent for grants that send none. */
  nonce?: string;
  timeoutSec: number;
}

export async function verifyIdToken(p: Provider, idToken: string, expect: Expect): Promise<JWTPayload> {
  const keys = createLocalJWKSet(await jwks(p, expect.timeoutSec));
  const algs = p.config.serverMetadata().id_token_signing_alg_values_supported?.filter((a) => a !== 'none') ?? ['RS256'];
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(idToken, keys, { issuer: p.issuer, audience: expect.clientId, algorithms: algs }));
  } catch (err) {
    if (err instanceof errors.JWTExpired) throw new LoginError('the ID token was refused: it has expired (exp is in the past)');
    if (err instanceof errors.JWTClaimValidationFailed) {
      const claim = err.claim;
      const got = (err.payload as Record<string, unknown>)[claim];
      const want = claim === 'iss' ? p.issuer : claim === 'aud' ? expect.clientId : undefined;
      throw new LoginError(
        `the ID token was refused: its ${NAMES[claim] ?? claim} (${claim}) is ${JSON.stringify(got)}${want !== undefined ? `, expected ${JSON.stringify(want)}` : ''}`,
      );
    }
    if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWSSignatureVerificationFailed) {
      throw new LoginError(`the ID token was refused: its signature does not verify with any key of the provider's JWKS`);
    }
    if (err instanceof errors.JOSEAlgNotAllowed)
      throw new LoginError(`the ID token was refused: its algorithm is not one the provider announces (${algs.join(', ')})`);
    throw new LoginError(`the ID token was refused: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (expect.nonce !== undefined && payload['nonce'] !== expect.nonce) {
    throw new LoginError(`the ID token was refused: its nonce ${JSON.stringify(payload['nonce'])} is not the one this login sent`);
  }
  return payload;
}
