// Which account a set of flags logs in to: the scopes asked for and the
// cache key they are stored under.
import type { LoginOptions } from './flags.js';
import type { CacheKey } from './tokencache.js';

/** openid and the extra scopes, as kubelogin asks for them. */
export function scopesOf(o: LoginOptions): string[] {
  return ['openid', ...o.extraScopes.filter((s) => s !== 'openid')];
}

export function cacheKeyOf(o: LoginOptions): CacheKey {
  return { issuerUrl: o.issuerUrl, clientId: o.clientId, scopes: scopesOf(o), username: o.username };
}
