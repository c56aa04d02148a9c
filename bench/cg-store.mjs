// The store's own instructions per create, without HTTP: N creates of a
// ConfigMap as the create path stores it (managedFields included) straight on
// a FileStore (STORE=file, default; a fresh directory, removed at exit) or a
// MemoryStore (STORE=memory), C in flight (default 50: the file store's group
// commit then carries batches of C). Run under callgrind at two N and
// subtract, the main thread's count (the thread pool's O_DSYNC write is
// another thread, its kernel time in neither):
//   for n in 1000 5000; do STORE=file N=$n valgrind --tool=callgrind --smc-check=all-non-file \
//     --separate-threads=yes --callgrind-out-file=/tmp/cs-$n node bench/cg-store.mjs; done
//   then (summary of /tmp/cs-5000-01 − of /tmp/cs-1000-01) / 4000
// Without valgrind it prints the process's CPU per create and the file store's syncs.
// DIST: the build (default ../dist).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dist = process.env.DIST ?? '../dist';
const N = Number(process.env.N ?? 2000);
const C = Number(process.env.C ?? 50);
const dir = mkdtempSync(join(tmpdir(), 'cg-store-'));
let store;
if (process.env.STORE === 'memory') {
  const { MemoryStore } = await import(`${dist}/backends/core/store/memory.js`);
  store = new MemoryStore({ historyWindowMs: 75_000 });
} else {
  const { FileStore } = await import(`${dist}/backends/core/store/file.js`);
  store = await FileStore.open({ dir, historyWindowMs: 75_000 });
}
const configMap = (i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: `c${i}`,
    namespace: 'default',
    uid: `6f1c2a4e-0000-4000-8000-${String(i).padStart(12, '0')}`,
    creationTimestamp: '2026-11-30T09:00:00Z',
    labels: { app: 'x', tier: 'y' },
    managedFields: [
      {
        manager: 'bench',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-30T09:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {}, 'f:b': {}, 'f:c': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:tier': {} } } },
      },
    ],
  },
  data: { a: 'x'.repeat(100), b: 'y', c: 'z' },
});
let next = 0;
const before = process.cpuUsage();
await Promise.all(
  Array.from({ length: C }, async () => {
    while (next < N) {
      const i = next++;
      await store.create(`core/configmaps/default/c${i}`, configMap(i));
    }
  }),
);
const used = process.cpuUsage(before);
const syncs = store.syncStats ? ` ${JSON.stringify(store.syncStats())}` : '';
console.log(`${process.env.STORE ?? 'file'}: cpu per create ${((used.user + used.system) / N).toFixed(1)} µs${syncs}`);
await store.close?.();
rmSync(dir, { recursive: true, force: true });
