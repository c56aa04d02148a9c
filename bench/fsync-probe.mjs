// The disk's durable-append latency alone: N appends of BYTES (default 300 of 14,000, a
// group-commit batch of ~20 creates) one after another through the file store's LogAppender
// (one O_DSYNC write each), in a fresh directory; prints p50/p90/p99/max wall ms and the load
// average. DUMP=<file> writes the samples, one a line, for bench/file-commit-model.mjs.
// DIST: the build (default ../dist). `node bench/fsync-probe.mjs`
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { LogAppender } = await import(`${process.env.DIST ?? '../dist'}/backends/core/store/file-append.js`);
const dir = mkdtempSync(join(tmpdir(), 'fsync-probe-'));
const log = await LogAppender.open(join(dir, 'log'));
const buf = Buffer.alloc(Number(process.env.BYTES ?? 14_000), 'x');
const walls = [];
try {
  for (let i = 0; i < Number(process.env.N ?? 300); i++) {
    const t0 = performance.now();
    await log.append(buf, 1);
    walls.push(performance.now() - t0);
  }
} finally {
  await log.close();
  rmSync(dir, { recursive: true, force: true });
}
if (process.env.DUMP) writeFileSync(process.env.DUMP, walls.join('\n'));
walls.sort((a, b) => a - b);
const q = (p) => walls[Math.min(walls.length - 1, Math.floor(p * walls.length))].toFixed(2);
const load = readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
console.log(`load ${load}: ${walls.length} appends of ${buf.length} bytes, p50 ${q(0.5)} p90 ${q(0.9)} p99 ${q(0.99)} max ${q(1)} ms`);
