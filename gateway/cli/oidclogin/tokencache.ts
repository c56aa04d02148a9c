// The token cache: one file per account (issuer, client id, scopes, username)
// in a 0700 directory, 0600 files written whole by rename, so a concurrent
// reader sees the old tokens or the new ones, never half. A file that is not
// ours to trust (corrupt, or readable by others) is ignored with a warning
// and rewritten at the next login.
import { chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from './sha256.js';

export interface CachedTokens {
  id_token: string;
  refresh_token?: string;
}

export interface CacheKey {
  issuerUrl: string;
  clientId: string;
  scopes: readonly string[];
  username?: string | undefined;
}

export function cacheFileName(key: CacheKey): string {
  const material = JSON.stringify([key.issuerUrl, key.clientId, [...key.scopes].sort(), key.username ?? '']);
  return sha256Hex(material);
}

export type Warn = (msg: string) => void;

/** The cached tokens, or undefined when there are none we may use. */
export function readCache(dir: string, key: CacheKey, warn: Warn): CachedTokens | undefined {
  const file = join(dir, cacheFileName(key));
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if ((st.mode & 0o077) !== 0) {
      warn(`warning: token cache file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}): ignored; it is rewritten 0600 at the next login`);
      return undefined;
    }
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      warn(`warning: token cache file ${file} belongs to another user: ignored`);
      return undefined;
    }
    const text = readFileSync(fd, 'utf8');
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      warn(`warning: token cache file ${file} is not JSON: ignored; it is rewritten at the next login`);
      return undefined;
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      warn(`warning: token cache file ${file} is not a JSON object: ignored`);
      return undefined;
    }
    const idToken = Object.hasOwn(v, 'id_token') ? (v as Record<string, unknown>)['id_token'] : undefined;
    const refresh = Object.hasOwn(v, 'refresh_token') ? (v as Record<string, unknown>)['refresh_token'] : undefined;
    if (typeof idToken !== 'string' || (refresh !== undefined && typeof refresh !== 'string')) {
      warn(`warning: token cache file ${file} has no string id_token: ignored`);
      return undefined;
    }
    return refresh === undefined ? { id_token: idToken } : { id_token: idToken, refresh_token: refresh };
  } finally {
    closeSync(fd);
  }
}

/** Creates the cache directory 0700 (and tightens one that others can read). */
export function ensureCacheDir(dir: string, warn: Warn): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    warn(`warning: token cache directory ${dir} was mode ${mode.toString(8)}: set to 700`);
    chmodSync(dir, 0o700);
  }
}

export function writeCache(dir: string, key: CacheKey, tokens: CachedTokens, warn: Warn): void {
  ensureCacheDir(dir, warn);
  const file = join(dir, cacheFileName(key));
  const tmp = `${file}.${process.pid}.tmp`;
  const body: CachedTokens = tokens.refresh_token ? { id_token: tokens.id_token, refresh_token: tokens.refresh_token } : { id_token: tokens.id_token };
  // A fresh file (flag wx) gets mode 0600 at creation; a stale tmp of a dead run is replaced.
  rmSync(tmp, { force: true });
  writeFileSync(tmp, JSON.stringify(body), { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
}

/** Removes one account's file; true when there was one. */
export function removeCache(dir: string, key: CacheKey): boolean {
  try {
    unlinkSync(join(dir, cacheFileName(key)));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

export function cachePath(dir: string, key: CacheKey): string {
  return join(dir, cacheFileName(key));
}
