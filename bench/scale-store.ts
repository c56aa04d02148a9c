// A MemoryStore filled in process with bench/scale.ts's ConfigMaps (namespace
// `scale`, one uid each): what the store-only read benches measure against.
import { MemoryStore } from '../backends/core/store/memory.js';
import type { KObject } from '../lib/api/meta.js';

export const SCALE_PREFIX = 'core/configmaps/scale/';
export const scaleName = (i: number): string => `cm-${String(i).padStart(6, '0')}`;

/** A memory store holding n such ConfigMaps under SCALE_PREFIX. */
export function filledScaleStore(n: number): MemoryStore {
  const store = new MemoryStore({ historyWindowMs: 60_000 });
  for (let i = 0; i < n; i++) {
    const obj = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: scaleName(i),
        namespace: 'scale',
        uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        labels: { app: 'scale', shard: String(i % 16) },
      },
      data: { 'app.properties': `color=blue\nsize=large\nindex=${i}\n` },
    } as unknown as KObject;
    store.createNow(SCALE_PREFIX + scaleName(i), obj);
  }
  return store;
}
