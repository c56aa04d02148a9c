// `logout` forgets one account: its cache file goes, and its refresh token is
// revoked at the provider (RFC 7009) so a copy of the file is worth nothing.
// `clean` forgets every account in a cache directory, locally only.
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as client from 'openid-client';
import type { LoginOptions } from './flags.js';
import { cacheKeyOf } from './account.js';
import { cachePath, readCache, removeCache, type Warn } from './tokencache.js';
import { describeError, discover, LoginError } from './provider.js';

export async function logout(o: LoginOptions, warn: Warn): Promise<number> {
  const key = cacheKeyOf(o);
  const cached = readCache(o.tokenCacheDir, key, warn);
  if (cached?.refresh_token) {
    const p = await discover(o, Date.now() + o.authenticationTimeoutSec * 1000);
    try {
      if (!p.config.serverMetadata().revocation_endpoint) {
        warn(`warning: the provider ${p.issuer} announces no revocation_endpoint: the refresh token stays valid there until it expires`);
      } else {
        await client.tokenRevocation(p.config, cached.refresh_token, { token_type_hint: 'refresh_token' }).catch((err: unknown) => {
          throw new LoginError(`revoking the refresh token failed: ${describeError(err, p.issuer, o.authenticationTimeoutSec)}; the cache file was kept`);
        });
        process.stderr.write('Revoked the refresh token at the provider.\n');
      }
    } finally {
      await p.close();
    }
  }
  const removed = removeCache(o.tokenCacheDir, key);
  process.stderr.write(removed ? `Removed ${cachePath(o.tokenCacheDir, key)}.\n` : 'No cached tokens for this account.\n');
  return 0;
}

export function clean(dir: string, warn: Warn): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      process.stderr.write(`No token cache at ${dir}.\n`);
      return 0;
    }
    throw err;
  }
  // Only the cache's own files (64 hex digits, their locks and temporaries): a mistyped --token-cache-dir loses nothing else.
  const ours = names.filter((n) => /^[0-9a-f]{64}(\.lock|\.\d+\.tmp)?$/.test(n));
  for (const n of ours) rmSync(join(dir, n), { force: true });
  if (ours.length < names.length) warn(`note: ${names.length - ours.length} other file(s) in ${dir} were left alone`);
  process.stderr.write(`Deleted ${ours.length} cached token file(s) from ${dir}.\n`);
  return 0;
}
