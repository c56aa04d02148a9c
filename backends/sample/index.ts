// The sample backend's public entry: the core backend's resource machinery
// (handlers, watch cache, paging, patches) over a Registry of the sample
// types alone, on a store of its own (its own file-store directory, or its
// own Redis key prefix), without the built-in controllers. Served over
// HTTPS as its own process by `gatehouse sample-backend`
// (gateway/backendprocess/server.ts), registered by an APIService.
import { join } from 'node:path';
import { Registry } from '../../lib/registry/index.js';
import { startCoreBackend, type RunningCoreBackend } from '../core/index.js';
import { SAMPLE_TYPES } from './types.js';

export { SAMPLE_GROUP, SAMPLE_VERSION, SAMPLE_TYPES } from './types.js';

export interface SampleBackendOptions {
  readonly storageBackend: 'file' | 'memory' | 'redis';
  readonly dataDir: string;
  readonly redisUrl?: string;
  /** Redis key prefix; the sample's keys live under `<prefix>-samples`. */
  readonly storagePrefix?: string;
  readonly historyWindowMs: number;
  readonly bodyLimit: number;
  readonly log: (msg: string) => void;
  readonly clock?: () => number;
  /** Store calls as spans (the process traces: --tracing-config-file). */
  readonly traceStore?: boolean;
}

let registry: Registry | undefined;

export function sampleRegistry(): Registry {
  registry ??= new Registry(SAMPLE_TYPES);
  return registry;
}

export function startSampleBackend(o: SampleBackendOptions): Promise<RunningCoreBackend> {
  return startCoreBackend({
    registry: sampleRegistry(),
    builtins: false,
    storageBackend: o.storageBackend,
    dataDir: o.dataDir,
    storeDir: join(o.dataDir, 'samples-store'),
    ...(o.storageBackend === 'redis' ? { redisUrl: o.redisUrl, storagePrefix: `${o.storagePrefix ?? 'gatehouse'}-samples` } : {}),
    historyWindowMs: o.historyWindowMs,
    bodyLimit: o.bodyLimit,
    log: o.log,
    ...(o.clock ? { clock: o.clock } : {}),
    ...(o.traceStore ? { traceStore: true } : {}),
  });
}
