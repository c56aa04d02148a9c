// Caches token decisions keyed by a hash of the whole credential (never the
// token itself) and the requested audiences. Successes live for their TTL
// (capped by the credential's own expiry); failures only briefly. Bounded.
import { createHash } from 'node:crypto';
import type { AuthnResult } from './types.js';
import { AuthnError } from './types.js';
import type { TokenAuthenticator } from './token.js';

interface Entry { until: number; result: AuthnResult | null | AuthnError }

export interface TokenCacheOptions {
  successTtlMs: number;
  failureTtlMs: number;
  maxEntries?: number;
  clock?: () => number;
}

export class CachedTokenAuthenticator implements TokenAuthenticator {
  readonly name: string;
  private readonly entries = new Map<string, Entry>();
  private readonly clock: () => number;
  private readonly max: number;

  constructor(private readonly inner: TokenAuthenticator, private readonly opts: TokenCacheOptions) {
    this.name = inner.name;
    this.clock = opts.clock ?? Date.now;
    this.max = opts.maxEntries ?? 10_000;
  }

  async authenticateToken(token: string, audiences: readonly string[]): Promise<AuthnResult | null> {
    const key = createHash('sha256').update(token).update('\0').update(audiences.join('\0')).digest('base64');
    const now = this.clock();
    const hit = this.entries.get(key);
    if (hit && hit.until > now) {
      if (hit.result instanceof AuthnError) throw hit.result;
      return hit.result;
    }
    let result: AuthnResult | null | AuthnError;
    try {
      result = await this.inner.authenticateToken(token, audiences);
    } catch (err) {
      if (!(err instanceof AuthnError)) throw err;
      result = err;
    }
    let until = now + (result instanceof AuthnError ? this.opts.failureTtlMs : this.opts.successTtlMs);
    if (result && !(result instanceof AuthnError)) {
      if (result.expiresAt !== undefined) until = Math.min(until, result.expiresAt);
    }
    if (this.entries.size >= this.max) {
      // Drop the oldest insertion (Map keeps insertion order).
      const first = this.entries.keys().next().value;
      if (first !== undefined) this.entries.delete(first);
    }
    this.entries.set(key, { until, result });
    if (result instanceof AuthnError) throw result;
    return result;
  }
}
