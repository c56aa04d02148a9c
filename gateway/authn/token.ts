// Bearer tokens: one interface for every token method (static file,
// bootstrap, service account, OIDC, webhook), a union over them that
// TokenReview also uses, and the Authenticator that reads the header.
import * as nodeCrypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AuthnError, type Authenticator, type AuthnResult } from './types.js';
import { connectionOf } from '../../lib/http/connection.js';
import { spanAttribute, type Trace } from '../../lib/tracing/span.js';

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `null` = not a token of this method; throws AuthnError when it is one and
   * fails. `audiences` are the audiences the caller wants the token valid for
   * (the API server's own, or a TokenReview's spec.audiences); a result's
   * `audiences` is the intersection it was valid for. `trace`: the recorded
   * request's authentication span, for a method that calls out (the webhook).
   * An answer known at once (a cache hit) may come without a promise.
   */
  authenticateToken(token: BearerToken, audiences: readonly string[], trace?: Trace): AuthnResult | null | Promise<AuthnResult | null>;
}

// crypto.hash (Node ≥ 20.12) skips the Hash object: about a third cheaper for a token.
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: string, outputEncoding: 'base64') => string }).hash;

/**
 * SHA-256 of a token (UTF-8) in base64: what the static token file and the
 * decision caches key on. A string, not a Buffer: every request with a token
 * computes one, and a Buffer per request costs an off-heap allocation.
 */
export function tokenDigest(token: string): string {
  return oneShot ? oneShot('sha256', token, 'base64') : nodeCrypto.createHash('sha256').update(token, 'utf8').digest('base64');
}

/**
 * A bearer token and its digest, made together once per request (or once per
 * connection, below) so that every method and cache keys on the same hash and
 * no caller can hand over a digest that is not this token's.
 */
export class BearerToken {
  // Nominal: a `{ value, digest }` literal is not a BearerToken.
  declare private readonly nominal: never;
  readonly digest: string;
  constructor(readonly value: string) {
    this.digest = tokenDigest(value);
  }
}

/** Kubernetes caps what fits a header; longer tokens are refused before any parsing. */
export const MAX_TOKEN_BYTES = 64 * 1024;

/**
 * Asks every method in order; the first answer wins. A method's AuthnError, or
 * anything else it throws (a bug, a broken peer), is recorded as that method's
 * failure and the next method is asked, as UnionAuthenticator does: a broken
 * method cannot turn another method's valid token into a 500.
 */
export class TokenUnion implements TokenAuthenticator {
  readonly name = 'token';
  constructor(private readonly methods: readonly TokenAuthenticator[]) {}

  async authenticateToken(token: BearerToken, audiences: readonly string[], trace?: Trace): Promise<AuthnResult | null> {
    if (token.value.length === 0 || token.value.length > MAX_TOKEN_BYTES) throw new AuthnError(this.name, 'token is empty or too long');
    const failures: string[] = [];
    for (const m of this.methods) {
      try {
        const r = await m.authenticateToken(token, audiences, trace);
        if (r) {
          spanAttribute(trace, 'authentication.token_authenticator', m.name);
          // Methods stamp their own results (made once, then cached); one that did not is named here.
          return r.method !== undefined ? r : Object.freeze({ ...r, method: m.name });
        }
      } catch (err) {
        if (err instanceof AuthnError) failures.push(`${m.name}: ${err.message}`);
        else failures.push(`${m.name}: internal error: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    if (failures.length) throw new AuthnError(this.name, failures.join('; '));
    return null;
  }
}

/** `Authorization: Bearer <token>` → the token, or undefined. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (typeof h !== 'string') return undefined;
  const space = h.indexOf(' ');
  if (space < 0 || h.slice(0, space).toLowerCase() !== 'bearer') return undefined;
  const token = h.slice(space + 1).trim();
  return token.length > 0 ? token : undefined;
}

/**
 * Per connection, not per request (it may stay a WeakMap: keyed by the connection, gone with it):
 * the last token a connection presented, with its digest: a keep-alive client
 * sends the same token on every request, and hashing a JWT (about 1 KB) was
 * the largest part of a cache hit. Compared in full, so another token on the
 * same connection is hashed as usual; gone with the connection.
 */
const lastToken = new WeakMap<object, BearerToken>();

function connectionToken(req: IncomingMessage, value: string): BearerToken {
  const conn = connectionOf(req);
  const memo = lastToken.get(conn);
  if (memo !== undefined && memo.value === value) return memo;
  const token = new BearerToken(value);
  lastToken.set(conn, token);
  return token;
}

/** Reads the bearer token and asks the token methods, for the API server's own audiences. */
export class BearerAuthenticator implements Authenticator {
  readonly name = 'bearer';
  /** A frozen copy: the token cache keys a connection's token by this array's identity (tokencache.ts). */
  private readonly apiAudiences: readonly string[];
  constructor(
    private readonly tokens: TokenAuthenticator,
    apiAudiences: readonly string[],
  ) {
    this.apiAudiences = Object.freeze([...apiAudiences]);
  }

  /** Synchronous when the token methods answer at once (a cached token). */
  authenticate(req: IncomingMessage, trace?: Trace): AuthnResult | null | Promise<AuthnResult | null> {
    const value = bearerToken(req);
    if (value === undefined) return null;
    const r = this.tokens.authenticateToken(connectionToken(req, value), this.apiAudiences, trace);
    return r instanceof Promise ? r.then(accepted) : accepted(r);
  }
}

function accepted(r: AuthnResult | null): AuthnResult {
  if (!r) throw new AuthnError('bearer', 'no token authenticator accepted the token');
  return r;
}
