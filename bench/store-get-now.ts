// What a GET costs in the memory store's process, with no HTTP: N ConfigMaps
// of bench/scale.ts's shape created through a MemoryStore, then getNow and the
// answer's text (json.ts jsonAnswerText, what a JSON GET sends) of HOT keys
// read round after round (a hot key's GET), and of keys spread over all N (a
// cold GET: with the one-form store, a parse of its kept bytes when it is not
// among the recently parsed). CPU ns a read, median of ROUNDS rounds.
// For docs/decisions/2026-11-30-one-form-list-pages.md.
//   node --expose-gc --import tsx bench/store-get-now.ts   (N=30000 HOT=64 READS=2000000 ROUNDS=5)
import { filledScaleStore, SCALE_PREFIX as PREFIX, scaleName as name } from './scale-store.js';
import { jsonAnswerText } from '../lib/api/json.js';

const N = Number(process.env['N'] ?? 30_000);
const HOT = Number(process.env['HOT'] ?? 64);
const READS = Number(process.env['READS'] ?? 2_000_000);
const ROUNDS = Number(process.env['ROUNDS'] ?? 5);

const store = filledScaleStore(N);
const keys = (n: number, spread: boolean): string[] => Array.from({ length: n }, (_, j) => PREFIX + name(spread ? Math.floor((j * 7919) % N) : N - 1 - j));

/** CPU ns a read of `reads` reads cycling over ks. */
function round(ks: string[], reads: number): number {
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < reads; i++) sink += jsonAnswerText(store.getNow(ks[i % ks.length]!)!).length;
  const c = process.cpuUsage(t0);
  if (sink === 0) throw new Error('nothing read');
  return ((c.user + c.system) * 1000) / reads;
}

const median = (xs: number[]): number => xs.sort((a, b) => a - b)[xs.length >> 1]!;
const hot = keys(HOT, false);
const cold = keys(N, true);
const hots: number[] = [];
const colds: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  hots.push(round(hot, READS));
  colds.push(round(cold, Math.min(READS, N * 4)));
}
console.log(
  `${N} objects: getNow + jsonAnswerText of ${HOT} hot keys ${median(hots).toFixed(1)} ns CPU a read; of keys spread over all ${median(colds).toFixed(1)} ns (median of ${ROUNDS} rounds)`,
);
await store.close();
