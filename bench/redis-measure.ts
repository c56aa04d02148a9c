// What the Redis floor sections (redis-create.ts, redis-read.ts) share:
// one load-generator measurement with the CPU shares of the server, the load
// generator and redis-server over it, the formatting of a measurement, and
// the section frame (title, skipped when Redis is unreachable).
import type { Child } from './procs.js';
import { cpuSecondsOf } from './procs.js';
import type { LoopResult } from './rawclient.js';
import { out, pct } from './report.js';

/** A `fixed` loop of the load generator against `server`, with CPU shares over the whole call. */
export async function measured(load: Child, server: Child, redisPid: number, args: Record<string, unknown>): Promise<LoopResult> {
  const t0 = performance.now();
  const c0 = [server.cpuSeconds(), load.cpuSeconds(), cpuSecondsOf(redisPid)];
  const r = await load.call<LoopResult>('fixed', args);
  const wall = (performance.now() - t0) / 1000;
  r.cpu = { server: (server.cpuSeconds() - c0[0]!) / wall, load: (load.cpuSeconds() - c0[1]!) / wall, redis: (cpuSecondsOf(redisPid) - c0[2]!) / wall };
  return r;
}

export const n0 = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
export const errs = (r: LoopResult): string =>
  r.errors === 0 && Object.keys(r.statuses).every((c) => Number(c) < 400) ? '' : ` (errors ${r.errors}, statuses ${JSON.stringify(r.statuses)})`;
export const cpuShares = (r: LoopResult): string =>
  r.cpu ? ` [cpu server ${pct(r.cpu.server, 1)}, load ${pct(r.cpu.load, 1)}, redis ${pct(r.cpu.redis ?? NaN, 1)}]` : '';
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Prints a section's title, runs it and prints its figures, or why it was skipped. */
export async function section<F>(title: string, run: () => Promise<F | { skipped: string }>, print: (f: F) => void): Promise<F | undefined> {
  out();
  out(`=== ${title} ===`);
  const f = await run();
  if (typeof f === 'object' && f !== null && 'skipped' in f) {
    out(`skipped: ${(f as { skipped: string }).skipped}`);
    return undefined;
  }
  print(f as F);
  return f as F;
}
