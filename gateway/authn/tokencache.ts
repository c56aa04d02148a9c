// Caches token decisions keyed by a hash of the whole credential (never the
// token itself) and the requested audiences. Successes live for their TTL
// (capped by the credential's own expiry); failures only briefly. Bounded,
// least recently used first out.
// Concurrent misses of one key share one lookup (one webhook call, one
// signature check), as kube's cached token authenticator does. Lookups are
// counted as kube counts them (authentication_token_cache_*: hits and misses,
// and the fetches a miss makes).
import { LRUCache } from 'lru-cache';
import type { AuthnResult } from './types.js';
import { AuthnError } from './types.js';
import type { BearerToken, TokenAuthenticator } from './token.js';
import type { Trace } from '../../lib/tracing/span.js';
import { countTokenCache, countTokenFetch } from '../metrics/authn.js';

interface Entry {
  until: number;
  result: AuthnResult | null | AuthnError;
}

export interface TokenCacheOptions {
  successTtlMs: number;
  failureTtlMs: number;
  maxEntries?: number;
  clock?: () => number;
}

/**
 * The last key made for a token, and for which audiences: a keep-alive connection presents the same BearerToken
 * object (token.ts keeps it per connection) with the server's one audiences array on every request, so its key is
 * joined once, not per request.
 */
const lastKey = new WeakMap<BearerToken, { audiences: readonly string[]; key: string }>();

function cacheKey(token: BearerToken, audiences: readonly string[]): string {
  const memo = lastKey.get(token);
  if (memo !== undefined && memo.audiences === audiences) return memo.key;
  const key = `${token.digest}\0${audiences.join('\0')}`;
  // Only a frozen array can stand for its content by identity.
  if (Object.isFrozen(audiences)) lastKey.set(token, { audiences, key });
  return key;
}

export class CachedTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly entries: LRUCache<string, Entry>;
  private readonly inflight = new Map<string, Promise<AuthnResult | null | AuthnError>>();
  private readonly clock: () => number;

  constructor(
    private readonly inner: TokenAuthenticator,
    private readonly opts: TokenCacheOptions,
  ) {
    this.name = inner.name;
    this.clock = opts.clock ?? Date.now;
    this.entries = new LRUCache({ max: opts.maxEntries ?? 10_000 });
  }

  /** A cached success is answered at once, not as a promise (no promise and no microtask turn per cached request). */
  authenticateToken(token: BearerToken, audiences: readonly string[], trace?: Trace): AuthnResult | null | Promise<AuthnResult | null> {
    const key = cacheKey(token, audiences);
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) {
      countTokenCache('hit');
      // A failure stays a rejection, as every caller saw it before.
      if (hit.result instanceof AuthnError) return Promise.reject(hit.result);
      return hit.result;
    }
    countTokenCache('miss');
    return this.miss(key, token, audiences, now, trace);
  }

  /** Joins the lookup of `key` under way, or starts it. */
  private async miss(key: string, token: BearerToken, audiences: readonly string[], now: number, trace: Trace | undefined): Promise<AuthnResult | null> {
    let flight = this.inflight.get(key);
    if (!flight) {
      flight = this.lookup(key, token, audiences, now, trace);
      this.inflight.set(key, flight);
      const done = (): void => {
        this.inflight.delete(key);
      };
      flight.then(done, done);
    }
    const result = await flight;
    if (result instanceof AuthnError) throw result;
    return result;
  }

  /** Asks the inner method and stores its decision; errors other than AuthnError are not cached and reach every waiter. */
  /** `trace`: the request that asked first (the call is its; the others wait for it). */
  private async lookup(
    key: string,
    token: BearerToken,
    audiences: readonly string[],
    now: number,
    trace: Trace | undefined,
  ): Promise<AuthnResult | null | AuthnError> {
    let result: AuthnResult | null | AuthnError;
    try {
      result = await this.inner.authenticateToken(token, audiences, trace);
    } catch (err) {
      if (!(err instanceof AuthnError)) {
        countTokenFetch('error');
        throw err;
      }
      result = err;
    }
    countTokenFetch('ok');
    let until = now + (result instanceof AuthnError ? this.opts.failureTtlMs : this.opts.successTtlMs);
    if (result && !(result instanceof AuthnError)) {
      if (result.expiresAt !== undefined) until = Math.min(until, result.expiresAt);
    }
    this.entries.set(key, { until, result });
    return result;
  }
}
