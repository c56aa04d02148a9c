// What a LIST page costs in the memory store's process at scale, with no HTTP:
// N ConfigMaps of bench/scale.ts's shape created through a MemoryStore, then
// pages of 500 read (store.list with `after`) and rendered (render.ts
// listParts, as the list handler joins them) in walks over every key: CPU µs
// per page of the first walk and of later ones (median), and the heap used
// after a full GC. For the one-form store's A/B
// (docs/decisions/2026-11-30-one-form-per-object.md): pages parse kept texts.
//   node --expose-gc --import tsx bench/store-list-page.ts   (N=100000 ROUNDS=3)
import { filledScaleStore, SCALE_PREFIX as PREFIX } from './scale-store.js';
import { listParts } from '../backends/core/render.js';
import { builtinRegistry } from '../lib/registry/index.js';

const N = Number(process.env['N'] ?? 100_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 3);
const PAGE = 500;
const gc = (globalThis as { gc?: () => void }).gc;

const t = builtinRegistry().lookup('', 'v1', 'configmaps');
if (!t) throw new Error('no configmaps type');
const store = filledScaleStore(N);

/** CPU µs a page of one walk over every page. */
async function walk(): Promise<number> {
  const t0 = process.cpuUsage();
  let pages = 0;
  let after: string | undefined;
  for (;;) {
    const r = await store.list(PREFIX, { limit: PAGE, after });
    listParts(t!, r.items, { resourceVersion: String(r.rev) });
    pages++;
    if (r.continueAfter === undefined) break;
    after = r.continueAfter;
  }
  const c = process.cpuUsage(t0);
  return (c.user + c.system) / pages;
}

const median = (xs: number[]): number => xs.sort((a, b) => a - b)[xs.length >> 1]!;
const first = await walk();
const later: number[] = [];
for (let r = 0; r < ROUNDS; r++) later.push(await walk());
gc?.();
gc?.();
const heap = process.memoryUsage().heapUsed;
console.log(
  `${N} objects: LIST page of ${PAGE} read and rendered: first walk ${first.toFixed(0)} µs CPU, later ${median(later).toFixed(0)} µs (median of ${ROUNDS} walks); heap used after a full GC ${(heap / 2 ** 20).toFixed(1)} MiB (${(heap / N).toFixed(0)} B an object, fixed base included)`,
);
await store.close();
