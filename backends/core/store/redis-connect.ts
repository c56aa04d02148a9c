// Builds the ioredis clients of a Redis store from --redis-url: one for
// commands and scripts, one for the blocking change-feed reads. Both fail
// fast while disconnected (no offline queue, no resend after a reconnect, so
// a write whose connection broke is reported, never silently repeated) and
// reconnect by themselves forever.
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { StoreError } from './types.js';

export interface RedisConnectOptions {
  /** redis://[user:password@]host:port[/db] or rediss://…[?ca=<PEM file>] */
  url: string;
  /** Per-command bound while connected (a hung Redis); default 5000 ms. */
  commandTimeoutMs?: number;
  /** How long open waits for the first connection; default 5000 ms. */
  connectTimeoutMs?: number;
}

/** ioredis options from the URL, with credentials kept out of messages. */
export function redisOptions(url: string, commandTimeoutMs: number): RedisOptions {
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') throw new Error(`invalid redis url "${redact(url)}": want redis:// or rediss://`);
  const db = u.pathname.replace(/^\//, '');
  if (db !== '' && !/^[0-9]+$/.test(db)) throw new Error(`invalid redis url "${redact(url)}": database must be a number`);
  const opts: RedisOptions = {
    host: u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
    port: u.port ? Number(u.port) : 6379,
    db: db === '' ? 0 : Number(db),
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: commandTimeoutMs,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  };
  if (u.username) opts.username = decodeURIComponent(u.username);
  if (u.password) opts.password = decodeURIComponent(u.password);
  if (u.protocol === 'rediss:') {
    const ca = u.searchParams.get('ca');
    opts.tls = { servername: opts.host, ...(ca ? { ca: readFileSync(ca, 'utf8') } : {}) };
  }
  return opts;
}

export function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/** A connected client; rejects with `unreachable` when the first connection fails. */
export async function connectClient(opts: RedisOptions, connectTimeoutMs: number, what: string): Promise<Redis> {
  const client = new Redis(opts);
  let lastError = '';
  client.on('error', (err: Error) => { lastError = err.message; });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), connectTimeoutMs); }),
    ]);
    return client;
  } catch (err) {
    client.disconnect();
    const why = err instanceof Error ? err.message : String(err);
    throw new StoreError('unreachable', `cannot connect to redis at ${what}: ${lastError || why}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Any failure of a Redis call, as the store reports it. */
export function unreachable(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  // ioredis words "not connected" in several ways; say it once, plainly.
  if (/max retries per request|enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET/.test(msg)) {
    return new StoreError('unreachable', 'redis: not connected');
  }
  return new StoreError('unreachable', `redis: ${msg}`);
}
