// `get-token`: kubectl runs this on every call, so a fresh cached ID token is
// answered from the cache file alone (no network, no OIDC or JOSE library);
// everything else (refresh, a login) is imported only when it is needed.
import { execCredential } from './execcredential.js';
import { isFresh } from './idtoken.js';
import type { LoginOptions } from './flags.js';
import { readCache, type Warn } from './tokencache.js';
import { cacheKeyOf } from './account.js';

export async function getToken(o: LoginOptions, warn: Warn): Promise<string> {
  if (o.tokenCacheStorage === 'disk' && !o.forceRefresh) {
    const cached = readCache(o.tokenCacheDir, cacheKeyOf(o), warn);
    if (cached && isFresh(cached.id_token, Date.now())) return execCredential(cached.id_token, process.env['KUBERNETES_EXEC_INFO']);
  }
  const { obtainToken } = await import('./obtain.js');
  const tokens = await obtainToken(o, warn);
  return execCredential(tokens.id_token, process.env['KUBERNETES_EXEC_INFO']);
}
