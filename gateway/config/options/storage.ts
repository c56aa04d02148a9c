// Where the core backend keeps objects, and how long watch history lasts.
import { ConfigError } from '../../../lib/config/error.js';
import { duration, nonEmpty, flagsOf, type OptionGroup } from './flag.js';
import { parseRedisUrl } from '../../../backends/core/store/redis-url.js';

export const STORAGE_BACKENDS = ['file', 'memory', 'redis'] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

export interface StorageOptions {
  readonly dataDir: string;
  readonly storageBackend: StorageBackend;
  readonly redisUrl: string | undefined;
  readonly storagePrefix: string;
  readonly watchHistoryMs: number;
}

const flag = flagsOf<StorageOptions>();

export const storage: OptionGroup<StorageOptions> = {
  title: 'Storage',
  defaults: {
    dataDir: './data',
    storageBackend: 'file',
    redisUrl: undefined,
    storagePrefix: 'gatehouse',
    watchHistoryMs: 5 * 60_000,
  },
  flags: [
    flag({ name: 'data-dir', key: 'dataDir', arg: 'dir', help: 'Where the file store and the generated dev PKI live', parse: nonEmpty }),
    flag({
      name: 'storage-backend',
      key: 'storageBackend',
      arg: 'file|memory|redis',
      help: 'Where objects are stored',
      parse: (raw) => {
        if (!(STORAGE_BACKENDS as readonly string[]).includes(raw)) throw new ConfigError(`must be one of ${STORAGE_BACKENDS.join(', ')}`);
        return raw as StorageBackend;
      },
    }),
    flag({
      name: 'redis-url',
      key: 'redisUrl',
      arg: 'url',
      help: 'redis://[user:password@]host:port[/db] or rediss://…[?ca=file]; a Redis Cluster: several seeds host:port,host:port,… or redis+cluster://…; a Unix socket: unix:///path/redis.sock[?db=N] (with --storage-backend=redis)',
      parse: (raw) => {
        // The store's own parser, so the flag and the store accept the same URLs; its error shows the URL without its password.
        parseRedisUrl(raw);
        return raw;
      },
    }),
    flag({
      name: 'storage-prefix',
      key: 'storagePrefix',
      arg: 'prefix',
      help: 'Key prefix for every stored object (redis)',
      parse: (raw) => {
        if (/[{}\s*?[\]\\]/.test(nonEmpty(raw))) throw new ConfigError('must not contain braces, spaces or glob characters');
        return raw;
      },
    }),
    flag({
      name: 'watch-history',
      key: 'watchHistoryMs',
      arg: 'duration',
      help: 'How long watch history is kept before a watch gets 410 Gone',
      parse: (raw) => duration(raw, true),
    }),
  ],
  checks(o) {
    const out: string[] = [];
    const redis = o.storageBackend === 'redis';
    if (o.redisUrl !== undefined && !redis) out.push('--redis-url requires --storage-backend=redis');
    if (redis && o.redisUrl === undefined) out.push('--storage-backend=redis requires --redis-url');
    return out;
  },
};
