// The scale benches' ConfigMaps (namespace `scale`): the body a client POSTs,
// a fill of an in-process server over HTTPS, and a MemoryStore filled in
// process (one uid each) for the store-only read benches.
import { MemoryStore } from '../backends/core/store/memory.js';
import type { KObject } from '../lib/api/meta.js';
import { CONNECTIONS, type Call } from './inprocess.js';

export const SCALE_PREFIX = 'core/configmaps/scale/';
export const scaleName = (i: number): string => `cm-${String(i).padStart(6, '0')}`;

/** The i-th ConfigMap as a client creates it (~350 bytes stored, with server-set metadata). */
function scaleConfigMap(i: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: scaleName(i), labels: { app: 'scale', shard: String(i % 16) } },
    data: { 'app.properties': `color=blue\nsize=large\nindex=${i}\n` },
  };
}

/** Its JSON body. */
export const scaleConfigMapJson = (i: number): string => JSON.stringify(scaleConfigMap(i));

/** ConfigMaps from..to-1 created in namespace `scale` of an in-process server, CONNECTIONS at a time. */
export async function fillOverHttp(call: Call, from: number, to: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (next < to) {
        const i = next++;
        const r = await call('POST', '/api/v1/namespaces/scale/configmaps', scaleConfigMapJson(i), 'application/json');
        if (r.status !== 201) throw new Error(`create ${i}: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }),
  );
}

/** A memory store holding n such ConfigMaps under SCALE_PREFIX. */
export function filledScaleStore(n: number): MemoryStore {
  const store = new MemoryStore({ historyWindowMs: 60_000 });
  for (let i = 0; i < n; i++) {
    const made = scaleConfigMap(i) as { metadata: Record<string, unknown> };
    const obj = {
      ...made,
      metadata: { name: scaleName(i), namespace: 'scale', uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`, labels: made.metadata['labels'] },
    } as unknown as KObject;
    store.createNow(SCALE_PREFIX + scaleName(i), obj);
  }
  return store;
}
