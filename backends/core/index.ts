// The core backend's public entry: opens its store, builds the handlers and
// controllers, and reports health. The gateway composes it through this
// file only; stores stay private to the backend.
import { join } from 'node:path';
import type { Registry } from '../../lib/registry/index.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { CoreBackend } from './backend.js';
import { storeObjectSource } from './objectsource.js';
import type { CoreEnv } from './env.js';
import { DEFAULT_NAMESPACES, NamespaceController, namespaceType } from './namespaces.js';
import { objectKey } from './keys.js';
import { prepareCreate } from './objects.js';
import { openStore } from './store/index.js';
import { StoreError, type Store } from './store/types.js';

export interface CoreBackendOptions {
  storageBackend: 'file' | 'memory' | 'redis';
  dataDir: string;
  /** For `redis`: the server URL and the key prefix. */
  redisUrl?: string;
  storagePrefix?: string;
  historyWindowMs: number;
  registry: Registry;
  bodyLimit: number;
  log: (msg: string) => void;
  clock?: () => number;
  tooLargeWaitMs?: number;
  bookmarkIntervalMs?: number;
}

export interface RunningCoreBackend {
  readonly backend: CoreBackend;
  /** Read access for gateway components in the same process. */
  readonly objects: ObjectSource;
  /** Health of the backing store. */
  checkStore(): Promise<void>;
  /** Post-start tasks, by name. */
  readonly hooks: ReadonlyArray<{ name: string; run: () => Promise<void> }>;
  close(): Promise<void>;
}

export async function startCoreBackend(opts: CoreBackendOptions): Promise<RunningCoreBackend> {
  const clock = opts.clock ?? Date.now;
  const store: Store = await openStore({
    backend: opts.storageBackend,
    dir: join(opts.dataDir, 'store'),
    historyWindowMs: opts.historyWindowMs,
    clock,
    ...(opts.storageBackend === 'redis' ? { redisUrl: opts.redisUrl, prefix: opts.storagePrefix, log: opts.log } : {}),
  });
  const env: CoreEnv = {
    store, registry: opts.registry, clock, log: opts.log,
    tooLargeWaitMs: opts.tooLargeWaitMs ?? 3000,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    bodyLimit: opts.bodyLimit,
    watches: new Set(),
  };
  const backend = new CoreBackend(env);
  const namespaces = new NamespaceController(env);
  return {
    backend,
    objects: storeObjectSource(env),
    checkStore: () => store.check(),
    hooks: [
      { name: 'bootstrap-namespaces', run: () => ensureDefaultNamespaces(env) },
      { name: 'start-namespace-controller', run: () => namespaces.start() },
    ],
    async close() {
      namespaces.stop();
      backend.closeWatches();
      await store.close();
    },
  };
}

async function ensureDefaultNamespaces(env: CoreEnv): Promise<void> {
  const t = namespaceType(env.registry);
  for (const name of DEFAULT_NAMESPACES) {
    const key = objectKey(t, '', name);
    if (await env.store.get(key)) continue;
    const obj = prepareCreate(t, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, env.clock());
    try {
      await env.store.create(key, obj);
    } catch (err) {
      if (!(err instanceof StoreError && err.code === 'exists')) throw err;
    }
  }
}
