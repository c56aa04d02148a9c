// Heap each stored object keeps, in process (no machine-load dependence):
// an in-process Gatehouse on the memory store (bench/inprocess.ts), N
// ConfigMaps of bench/scale.ts's shape created over HTTPS, then two full GCs
// and V8's heap used; the same after a first BASE creates, so the server's
// fixed heap cancels out. LIST=1 lists them all first (as the scale bench
// has by its probe: each object's item bytes are then kept too). Also printed:
// the ArrayBuffers' bytes (outside the heap: kept list bytes) and RSS per object.
// SNAPSHOT=<file> writes a heap snapshot at the end.
//   node --expose-gc --import tsx bench/heap-per-object.ts   (N=100000 BASE=1000)
import { writeHeapSnapshot } from 'node:v8';
import { withInProcessServer, type Call } from './inprocess.js';
import { fillOverHttp } from './scale-store.js';

const N = Number(process.env['N'] ?? 100_000);
const BASE = Number(process.env['BASE'] ?? 1000);
const NS = 'scale';
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

/** Heap used, ArrayBuffers (a store's kept bytes live there) and RSS, after two full GCs. */
async function settledHeap(call: Call): Promise<{ heap: number; bytes: number; rss: number }> {
  if (process.env['LIST'] === '1') {
    const r = await call('GET', `/api/v1/namespaces/${NS}/configmaps`, '', '');
    if (r.status !== 200) throw new Error(`list: ${r.status}`);
  }
  await new Promise((r) => setTimeout(r, 200));
  gc!();
  gc!();
  const m = process.memoryUsage();
  return { heap: m.heapUsed, bytes: m.arrayBuffers, rss: m.rss };
}

await withInProcessServer('heap', async (call) => {
  const ns = await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: NS } }), 'application/json');
  if (ns.status !== 201) throw new Error(`namespace: ${ns.status}`);
  await fillOverHttp(call, 0, BASE);
  const base = await settledHeap(call);
  const cpu0 = process.cpuUsage();
  await fillOverHttp(call, BASE, N);
  const cpu = process.cpuUsage(cpu0);
  const used = await settledHeap(call);
  const per = (k: 'heap' | 'bytes' | 'rss'): string => ((used[k] - base[k]) / (N - BASE)).toFixed(0);
  console.log(
    `heap used ${(base.heap / 2 ** 20).toFixed(1)} → ${(used.heap / 2 ** 20).toFixed(1)} MiB: ${per('heap')} B per object; ` +
      `ArrayBuffers ${per('bytes')} B, heap + ArrayBuffers ${((used.heap + used.bytes - base.heap - base.bytes) / (N - BASE)).toFixed(0)} B, RSS ${per('rss')} B per object; ` +
      `CPU ${((cpu.user + cpu.system) / (N - BASE)).toFixed(1)} µs per create (client and server)`,
  );
  const snap = process.env['SNAPSHOT'];
  if (snap) writeHeapSnapshot(snap);
});
