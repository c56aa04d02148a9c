// A token when the cache has no fresh one: under the account's lock (so
// concurrent kubectl calls make one login), look at the cache again, refresh
// with the refresh token, and log in with the grant only when that fails.
// Whatever comes back is verified before it is cached or printed.
import type { LoginOptions } from './flags.js';
import { isFresh } from './idtoken.js';
import { acquireLock } from './lock.js';
import { cacheKeyOf, scopesOf } from './account.js';
import { cachePath, ensureCacheDir, readCache, writeCache, type CachedTokens, type Warn } from './tokencache.js';
import { discover, LoginError, type Provider } from './provider.js';
import { verifyIdToken } from './verify.js';
import { authorizationCodeLogin } from './authcode.js';
import { clientCredentialsLogin, deviceCodeLogin, keyboardLogin, passwordLogin, refresh, type TokenResponse } from './grants.js';

export { LoginError };

function grantOf(o: LoginOptions): Exclude<LoginOptions['grantType'], 'auto'> {
  if (o.grantType !== 'auto') return o.grantType;
  return o.username !== undefined ? 'password' : 'authcode';
}

/** The token kubectl will send: the ID token, or for client credentials without one, a JWT access token. */
function tokenOf(r: TokenResponse, grant: string): string {
  const t = r.tokens;
  if (typeof t.id_token === 'string') return t.id_token;
  if (grant === 'client-credentials' && typeof t.access_token === 'string' && t.access_token.split('.').length === 3) return t.access_token;
  throw new LoginError(`the provider's ${grant} response carries no id_token (is "openid" among the client's allowed scopes?)`);
}

async function login(p: Provider, o: LoginOptions, deadline: number, warn: Warn): Promise<TokenResponse> {
  const scopes = scopesOf(o);
  switch (grantOf(o)) {
    case 'authcode':
      return authorizationCodeLogin(p, o, scopes, deadline, warn);
    case 'authcode-keyboard':
      return keyboardLogin(p, o, scopes, warn);
    case 'device-code':
      return deviceCodeLogin(p, o, scopes, deadline, warn);
    case 'password':
      return passwordLogin(p, o, scopes);
    case 'client-credentials':
      return clientCredentialsLogin(p, o, scopes);
  }
}

/** Verifies a token response and turns it into what is cached (a refresh keeps the old refresh token when none is sent). */
async function accept(p: Provider, o: LoginOptions, r: TokenResponse, grant: string, previousRefresh?: string): Promise<CachedTokens> {
  const idToken = tokenOf(r, grant);
  await verifyIdToken(p, idToken, { clientId: o.clientId, ...(r.nonce !== undefined ? { nonce: r.nonce } : {}), timeoutSec: o.authenticationTimeoutSec });
  const refreshToken = typeof r.tokens.refresh_token === 'string' ? r.tokens.refresh_token : previousRefresh;
  return refreshToken ? { id_token: idToken, refresh_token: refreshToken } : { id_token: idToken };
}

async function refreshOrLogin(o: LoginOptions, cached: CachedTokens | undefined, deadline: number, warn: Warn): Promise<CachedTokens> {
  const p = await discover(o, deadline);
  try {
    if (cached?.refresh_token) {
      try {
        return await accept(p, o, await refresh(p, o, cached.refresh_token), 'refresh', cached.refresh_token);
      } catch (err) {
        warn(`note: the refresh token was not accepted (${err instanceof Error ? err.message : String(err)}); logging in again`);
      }
    }
    const grant = grantOf(o);
    return await accept(p, o, await login(p, o, deadline, warn), grant);
  } finally {
    await p.close();
  }
}

export async function obtainToken(o: LoginOptions, warn: Warn): Promise<CachedTokens> {
  const deadline = Date.now() + o.authenticationTimeoutSec * 1000;
  if (o.tokenCacheStorage === 'none') return refreshOrLogin(o, undefined, deadline, warn);
  const key = cacheKeyOf(o);
  ensureCacheDir(o.tokenCacheDir, warn);
  const lock = await acquireLock(`${cachePath(o.tokenCacheDir, key)}.lock`, o.authenticationTimeoutSec * 1000, () =>
    warn('note: another kubectl call is logging in to this account; waiting for it'),
  );
  try {
    // The lock's last holder may have logged in while this call waited.
    const cached = readCache(o.tokenCacheDir, key, warn);
    if (cached && !o.forceRefresh && isFresh(cached.id_token, Date.now())) return cached;
    const tokens = await refreshOrLogin(o, cached, deadline, warn);
    writeCache(o.tokenCacheDir, key, tokens, warn);
    return tokens;
  } finally {
    lock.release();
  }
}
