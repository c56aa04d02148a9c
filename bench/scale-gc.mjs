// A bench-only preload for the scale section's servers (bench/scale.ts):
//   node --expose-gc --import ./bench/scale-gc.mjs bin/gatehouse.js serve …
// with SCALE_GC_OUT=<file> in the environment. On SIGUSR2 it runs two full
// GCs and writes the process's memory then, as one JSON object, to that file
// (a temporary name renamed over it, so a reader never sees half of it):
// VmRSS from /proc and process.memoryUsage() (the main thread's V8 heap,
// external and array buffer bytes; each V8 space's size and bytes used), and
// the two collections' time. Nothing
// in the product listens for or sends SIGUSR2 (`gatehouse serve` handles
// SIGTERM and SIGINT; Node keeps SIGUSR1 for the inspector and uses SIGUSR2
// only with --report-on-signal or --heapsnapshot-signal, neither given).
// The handler is taken before the server's modules load and harden the
// intrinsics; it changes nothing the server keeps.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

const gc = globalThis.gc;
const out = process.env['SCALE_GC_OUT'];
if (typeof gc !== 'function') throw new Error('bench/scale-gc.mjs: run node with --expose-gc');
if (!out) throw new Error('bench/scale-gc.mjs: SCALE_GC_OUT names no file');

process.on('SIGUSR2', () => {
  const t0 = performance.now();
  gc();
  gc();
  const gcMs = performance.now() - t0;
  const m = process.memoryUsage();
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) * 1024;
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]));
  const tmp = `${out}.tmp`;
  writeFileSync(tmp, JSON.stringify({ rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, spaces, gcMs }));
  renameSync(tmp, out);
});
