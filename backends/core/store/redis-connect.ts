// Builds the ioredis clients of a Redis store from --redis-url: one for
// commands and scripts, and blocking clients for the change-feed reads. All
// fail fast while disconnected (no offline queue, no resend after a
// reconnect, so a write whose connection broke is reported, never silently
// repeated) and reconnect by themselves forever.
//
// The URL forms are redis-url.ts's.
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import { StoreError } from './types.js';
import { parseRedisUrl, redact, type ParsedRedisUrl } from './redis-url.js';

/** Per-connection ioredis options (both layouts). */
function connectionOptions(p: ParsedRedisUrl, commandTimeoutMs: number): RedisOptions {
  const opts: RedisOptions = {
    lazyConnect: true,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2000,
    commandTimeout: commandTimeoutMs,
  };
  if (p.username !== undefined) opts.username = p.username;
  if (p.password !== undefined) opts.password = p.password;
  if (p.tls) {
    let ca: string | undefined;
    if (p.ca) {
      try {
        ca = readFileSync(p.ca, 'utf8');
      } catch (err) {
        throw new Error(`invalid redis url: cannot read the CA file "${p.ca}": ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const host = p.hosts[0]!.host;
    opts.tls = { ...(isIP(host) ? {} : { servername: host }), ...(ca ? { ca } : {}) };
  }
  return opts;
}

/** ioredis options for one Redis from the URL (not for a cluster URL). */
export function redisOptions(url: string, commandTimeoutMs: number): RedisOptions {
  const p = parseRedisUrl(url);
  if (p.cluster) throw new Error(`invalid redis url "${redact(url)}": names a cluster`);
  return {
    ...connectionOptions(p, commandTimeoutMs),
    ...(p.path !== undefined ? { path: p.path } : { host: p.hosts[0]!.host, port: p.hosts[0]!.port }),
    db: p.db,
    retryStrategy: (times) => Math.min(100 * times, 1000),
  };
}

/** How to build the clients of one store: standalone or cluster, with its options. */
export interface RedisTarget {
  cluster: boolean;
  where: string;
  /** Span attributes naming the server: one Redis's address, port and database; a cluster's are per command, so none. */
  peer: Record<string, string | number>;
  /**
   * A new, not yet connected client; blocking clients get a longer command bound. The others
   * pipeline automatically: the commands of one event-loop turn leave in one socket write. On
   * loopback each write wakes Redis, and that syscall was 13% of a create's CPU (one per
   * create); batched, a create costs ~20% less CPU in bench/redis-stack.ts, and Redis less too.
   */
  make(opts?: { blocking?: boolean; name?: string }): Redis;
}

// The revision check (redis-readindex.ts) is one GET in flight at a time, sent as
// reads arrive: nothing to pipeline with, and a pipeline object per check cost
// more CPU than the command itself (bench/redis-gets.mjs: 4.4 → 3.1 µs per GET, 16 GETs per check).
const UNPIPELINED = ['get'];

export function redisTarget(url: string, commandTimeoutMs: number): RedisTarget {
  const p = parseRedisUrl(url);
  const where = redact(url);
  const timeout = (blocking?: boolean): number => commandTimeoutMs + (blocking ? 1000 : 0);
  if (!p.cluster) {
    const base = redisOptions(url, commandTimeoutMs);
    return {
      cluster: false,
      where,
      peer:
        p.path !== undefined
          ? { 'server.address': p.path, 'network.transport': 'unix', 'db.redis.database_index': p.db }
          : { 'server.address': p.hosts[0]!.host, 'server.port': p.hosts[0]!.port, 'db.redis.database_index': p.db },
      make: (o = {}) =>
        new Redis({
          ...base,
          commandTimeout: timeout(o.blocking),
          enableAutoPipelining: !o.blocking,
          autoPipeliningIgnoredCommands: UNPIPELINED,
          ...(o.name ? { connectionName: o.name } : {}),
        }),
    };
  }
  return {
    cluster: true,
    where,
    peer: {},
    make: (o = {}) => {
      const conn = connectionOptions(p, timeout(o.blocking));
      const { lazyConnect: _l, enableOfflineQueue: _e, ...redisOpts } = conn;
      const opts: ClusterOptions = {
        lazyConnect: true,
        enableOfflineQueue: false,
        enableReadyCheck: true,
        maxRedirections: 16,
        retryDelayOnFailover: 100,
        retryDelayOnClusterDown: 100,
        slotsRefreshTimeout: 2000,
        clusterRetryStrategy: (times) => Math.min(100 * times, 1000),
        enableAutoPipelining: !o.blocking,
        autoPipeliningIgnoredCommands: UNPIPELINED,
        redisOptions: { ...redisOpts, ...(o.name ? { connectionName: o.name } : {}) },
      };
      // A Cluster speaks the same commands as one Redis; the store uses only those.
      return new Cluster(p.hosts, opts) as unknown as Redis;
    },
  };
}

export function isCluster(client: Redis): boolean {
  return (client as unknown) instanceof Cluster;
}

/** The masters of a cluster client, or the client itself. */
export function masters(client: Redis): Redis[] {
  return isCluster(client) ? (client as unknown as Cluster).nodes('master') : [client];
}

/** Connects client; rejects with `unreachable` (and disconnects it) when the first connection fails. */
/** How long opening a connection may take before the store reports `unreachable`. */
export const CONNECT_TIMEOUT_MS = 5000;

export async function connect(client: Redis, connectTimeoutMs: number, what: string): Promise<Redis> {
  let lastError = '';
  client.on('error', (err: Error) => {
    lastError = err.message;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('timed out')), connectTimeoutMs);
      }),
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

/** A connected client; rejects with `unreachable` when the first connection fails. */
export async function connectClient(opts: RedisOptions, connectTimeoutMs: number, what: string): Promise<Redis> {
  return connect(new Redis(opts), connectTimeoutMs, what);
}

/** Any failure of a Redis call, as the store reports it. */
export function unreachable(err: unknown): StoreError {
  if (err instanceof StoreError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  // ioredis words "not connected" in several ways; say it once, plainly.
  if (/max retries per request|enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET|Cluster isn't ready|None of startup nodes/.test(msg)) {
    return new StoreError('unreachable', 'redis: not connected');
  }
  return new StoreError('unreachable', `redis: ${msg}`);
}
