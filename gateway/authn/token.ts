// Bearer tokens: one interface for every token method (static file,
// bootstrap, service account, OIDC, webhook), a union over them that
// TokenReview also uses, and the Authenticator that reads the header.
import * as nodeCrypto from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { AuthnError, type Authenticator, type AuthnResult } from './types.js';

export interface TokenAuthenticator {
  readonly name: string;
  /**
   * `null` = not a token of this method; throws AuthnError when it is one and
   * fails. `audiences` are the audiences the caller wants the token valid for
   * (the API server's own, or a TokenReview's spec.audiences); a result's
   * `audiences` is the intersection it was valid for. `digest` is
   * tokenDigest(token) when the caller has it already (the union hashes each
   * token once for the static lookup and every cache); methods that need it
   * compute it when it is not given.
   */
  authenticateToken(token: string, audiences: readonly string[], digest?: string): Promise<AuthnResult | null>;
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

/** Kubernetes caps what fits a header; longer tokens are refused before any parsing. */
export const MAX_TOKEN_BYTES = 64 * 1024;

export class TokenUnion implements TokenAuthenticator {
  readonly name = 'token';
  constructor(private readonly methods: readonly TokenAuthenticator[]) {}

  async authenticateToken(token: string, audiences: readonly string[], digest?: string): Promise<AuthnResult | null> {
    if (token.length === 0 || token.length > MAX_TOKEN_BYTES) throw new AuthnError(this.name, 'token is empty or too long');
    const d = digest ?? tokenDigest(token);
    const failures: string[] = [];
    for (const m of this.methods) {
      try {
        const r = await m.authenticateToken(token, audiences, d);
        if (r) return r;
      } catch (err) {
        if (!(err instanceof AuthnError)) throw err;
        failures.push(`${m.name}: ${err.message}`);
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
 * The last token a connection presented, with its digest: a keep-alive client
 * sends the same token on every request, and hashing a JWT (about 1 KB) was
 * the largest part of a cache hit. Compared in full, so another token on the
 * same connection is hashed as usual; gone with the connection.
 */
const lastToken = new WeakMap<object, { token: string; digest: string }>();

function connectionDigest(req: IncomingMessage, token: string): string {
  const memo = lastToken.get(req.socket);
  if (memo !== undefined && memo.token === token) return memo.digest;
  const digest = tokenDigest(token);
  lastToken.set(req.socket, { token, digest });
  return digest;
}

/** Reads the bearer token and asks the token methods, for the API server's own audiences. */
export class BearerAuthenticator implements Authenticator {
  readonly name = 'bearer';
  constructor(private readonly tokens: TokenAuthenticator, private readonly apiAudiences: readonly string[]) {}

  async authenticate(req: IncomingMessage): Promise<AuthnResult | null> {
    const token = bearerToken(req);
    if (token === undefined) return null;
    const r = await this.tokens.authenticateToken(token, this.apiAudiences, connectionDigest(req, token));
    if (!r) throw new AuthnError(this.name, 'no token authenticator accepted the token');
    return r;
  }
}
