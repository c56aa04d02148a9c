// What a LIST page costs in the memory store's process at scale, with no HTTP:
// N ConfigMaps of bench/scale.ts's shape (bench/scale-store.ts), then
// pages of 500 read (store.list with `after`) and rendered (render.ts
// listParts, or listPiecesParts from a store's kept pieces, as the list handler
// joins them; PROTO=1: protobuf lists) in walks over every key: CPU µs per page
// of the first walk and of later ones (median), and the heap used after a full
// GC; SELECT=1: with a label selector. For the one-form store's A/B
// (docs/decisions/2026-11-30-one-form-list-pages.md).
//   node --expose-gc --import tsx bench/store-list-page.ts   (N=100000 ROUNDS=3 PROTO=1 SELECT=1|few)
import { filledScaleStore, SCALE_PREFIX as PREFIX } from './scale-store.js';
import { listParts, listPiecesParts } from '../backends/core/render.js';
import { encodeList } from '../lib/protobuf/codec.js';
import { builtinRegistry } from '../lib/registry/index.js';
import type { KObject } from '../lib/api/meta.js';
import { labelJsonCheck, matchesLabels, parseLabelSelector } from '../lib/api/selectors.js';

const N = Number(process.env['N'] ?? 100_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 3);
const PAGE = 500;
/** PROTO=1: each page encoded as a protobuf list (what client-go's informers ask for). */
const PROTO = process.env['PROTO'] === '1';
/**
 * SELECT=1: each page read with a label selector every object matches (app=scale), as the list handler gives
 * it to the store (the filter and its check on kept JSON); SELECT=few: one that matches 1 in 16 (shard=3).
 */
const SELECT = process.env['SELECT'] ?? '';
const selector = parseLabelSelector(SELECT === 'few' ? 'shard=3' : 'app=scale');
const selected = (o: KObject): boolean => matchesLabels(selector, o.metadata.labels);
const mayMatchJson = labelJsonCheck(selector)!;
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
    const r = await store.list(PREFIX, { limit: PAGE, after, ...(SELECT !== '' ? { filter: selected, mayMatchJson } : {}) });
    const meta = { resourceVersion: String(r.rev) };
    // As the list handler: a store's kept pieces joined when it has them (JSON), else the items' bytes.
    if (PROTO) encodeList('v1', 'ConfigMapList', meta, r.items);
    else if (r.pieces !== undefined) listPiecesParts(t!, r.pieces, meta);
    else listParts(t!, r.items, meta);
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
const { heapUsed: heap, arrayBuffers } = process.memoryUsage();
console.log(
  `${N} objects: LIST page of ${PAGE} read and rendered: first walk ${first.toFixed(0)} µs CPU, later ${median(later).toFixed(0)} µs (median of ${ROUNDS} walks); heap used after a full GC ${(heap / 2 ** 20).toFixed(1)} MiB (${(heap / N).toFixed(0)} B an object, fixed base included), outside it in ArrayBuffers ${(arrayBuffers / N).toFixed(0)} B an object`,
);
await store.close();
