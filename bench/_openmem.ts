// A scratch measure (third one-form attempt): fill a file store dir with 100,000 ConfigMaps, or open it and print
// the heap, external memory and RSS the open adds, before and after a full GC.
//   node --import tsx bench/_openmem.ts <dir> fill|open
import { FileStore } from '../backends/core/store/file.js';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { randomUUID } from 'node:crypto';
const dir = process.argv[2]!;
const mode = process.argv[3];
const N = 100_000;
const name = (i: number): string => `cm-${String(i).padStart(6, '0')}`;
const mb = (x: number) => (x / 2 ** 20).toFixed(0);
if (mode === 'fill') {
  const store = await FileStore.open({ dir, historyWindowMs: 300_000 });
  for (let i = 0; i < N; i += 500) {
    await Promise.all(Array.from({ length: 500 }, (_, j) => store.create(`core/configmaps/scale/${name(i + j)}`, {
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: { name: name(i + j), namespace: 'scale', uid: randomUUID(), labels: { app: 'scale', shard: String((i + j) % 16) } },
      data: { 'app.properties': `color=blue\nsize=large\nindex=${i + j}\n` },
    } as never)));
  }
  await store.close();
} else {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const m0 = process.memoryUsage();
  const t0 = performance.now();
  const store = await FileStore.open({ dir, historyWindowMs: 300_000 });
  const t1 = performance.now();
  const m1 = process.memoryUsage();
  gc();
  const m2 = process.memoryUsage();
  console.log(`open ${(t1 - t0).toFixed(0)} ms; heapUsed +${mb(m1.heapUsed - m0.heapUsed)} MiB (after gc +${mb(m2.heapUsed - m0.heapUsed)}), external +${mb(m1.external - m0.external)} (after gc +${mb(m2.external - m0.external)}), rss +${mb(m1.rss - m0.rss)} (after gc +${mb(m2.rss - m0.rss)})`);
  await store.close();
}
