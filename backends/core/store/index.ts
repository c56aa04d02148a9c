// Opens the configured Store. The only entry point the rest of the core backend needs.
import type { Store } from './types.js';
import { MemoryStore } from './memory.js';
import { FileStore } from './file.js';

export interface OpenStoreOptions {
  backend: 'file' | 'memory';
  /** Required for `file`: the store directory (e.g. `<data-dir>/store`). */
  dir?: string;
  historyWindowMs: number;
  clock?: () => number;
  /** How long get(key, minRev) waits for a future revision (default 3000 ms). */
  tooLargeWaitMs?: number;
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
    case 'redis':
      throw new Error('invalid store backend "redis": not available in this build yet');
    default:
      throw new Error(`invalid store backend "${backend}": want file or memory`);
  }
}

export type { Store } from './types.js';
export { StoreError, guaranteedUpdate, revisionOf } from './types.js';
