// Opens the configured Store. The only entry point the rest of the core backend needs.
import type { Store } from './types.js';
import { MemoryStore } from './memory.js';
import { FileStore } from './file.js';

export interface OpenStoreOptions {
  backend: 'file' | 'memory' | 'redis';
  /** Required for `file`: the store directory (e.g. `<data-dir>/store`). */
  dir?: string;
  /** Required for `redis`: redis:// or rediss:// URL; several seeds or redis+cluster:// for a Redis Cluster. */
  redisUrl?: string;
  /** For `redis`: the key prefix (default `gatehouse`). */
  prefix?: string;
  /** For `redis`: outages, recoveries and cache rebuilds. */
  log?: (msg: string) => void;
  historyWindowMs: number;
  clock?: () => number;
  /** How long get(key, minRev) waits for a future revision (default 3000 ms). */
  tooLargeWaitMs?: number;
  /** For `redis`: each command a span under the store call's span (the process traces). */
  traceCommands?: boolean;
}

export async function openStore(opts: OpenStoreOptions): Promise<Store> {
  const backend: string = opts.backend;
  const common = { historyWindowMs: opts.historyWindowMs, clock: opts.clock, tooLargeWaitMs: opts.tooLargeWaitMs };
  switch (backend) {
    case 'memory':
      return new MemoryStore(common);
    case 'file':
      if (!opts.dir) throw new Error('invalid store options: backend "file" needs a dir');
      return FileStore.open({ ...common, dir: opts.dir });
    case 'redis': {
      if (!opts.redisUrl) throw new Error('invalid store options: backend "redis" needs a url');
      // Imported only for this backend: ioredis and the Redis store are ~1 MB of heap the others would carry.
      const { RedisStore } = await import('./redis.js');
      return RedisStore.open({
        ...common,
        url: opts.redisUrl,
        prefix: opts.prefix ?? 'gatehouse',
        ...(opts.log ? { log: opts.log } : {}),
        ...(opts.traceCommands ? { traceCommands: true } : {}),
      });
    }
    default:
      throw new Error(`invalid store backend "${backend}": want file, memory or redis`);
  }
}

/** A store that can tell its size (kube's apiserver_storage_size_bytes) under an identity of its own. */
export interface SizedStore {
  readonly clusterId: string;
  sizeBytes(): Promise<number>;
}

/** The file and Redis stores tell their size; a memory store has no database to measure. */
export function sizedStore(store: Store): SizedStore | undefined {
  const s = store as Store & Partial<SizedStore>;
  return typeof s.sizeBytes === 'function' && typeof s.clusterId === 'string' ? (s as Store & SizedStore) : undefined;
}

export type { Store } from './types.js';
export { TracedStore } from './traced.js';
export { FileStore } from './file.js';
export type { SyncStats } from './file-append.js';
export { StoreError, guaranteedUpdate, revisionOf } from './types.js';
