// Start time: `gatehouse serve` on an empty data directory (the dev PKI is
// generated, the defaults are written) to its first 200 on /readyz, and each
// CLI to its first byte of output, beside the floor of the same run: a bare
// `node` that writes one byte. Each figure is the median of ROUNDS spawns;
// the processes are the built dist/ through bin/ (as `npm start` and the
// installed plugin run), with a fresh dist/ so bin/fresh.js picks it.
// `BENCH_ONLY=startup npm run bench`; alone: `node --import tsx bench/startup.ts`.
// Knob: BENCH_STARTUP_ROUNDS (default 5).
// What module loading costs was found with `node --cpu-prof` over the same
// commands: docs/decisions/2026-11-29-start-time.md.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openTls } from './rawclient.js';
import { freePort } from '../test/helpers/ports.js';
import { recordRow } from './summary.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env['BENCH_STARTUP_ROUNDS'] ?? 5);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** ms from spawn to the first byte on stdout or stderr; the process is left to finish. */
function firstOutput(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let done = false;
    const first = (): void => {
      if (done) return;
      done = true;
      resolve(performance.now() - t0);
    };
    p.stdout.once('data', first);
    p.stderr.once('data', first);
    p.stdout.resume();
    p.stderr.resume();
    p.once('error', reject);
    p.once('exit', (code) => {
      if (!done) reject(new Error(`${args.join(' ')} exited ${code} without output`));
    });
  });
}

/** One 200 on /readyz, or false (connection refused, not ready yet). */
function readyOnce(port: number, tls: { ca: string; cert: string; key: string }): Promise<boolean> {
  return openTls({ port, ...tls }).then(
    (s) =>
      new Promise<boolean>((resolve) => {
        s.once('data', (c: Buffer) => {
          resolve(c.toString('latin1', 9, 12) === '200');
          s.destroy();
        });
        s.once('error', () => resolve(false));
        s.write(`GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      }),
    () => false,
  );
}

/** CPU (user + system) a process has used so far, in ms; undefined off Linux. Wall time on a loaded machine is mostly waiting. */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // USER_HZ is 100 on Linux
  } catch {
    return undefined;
  }
}

const serveCpu: number[] = [];

/** ms from spawning `gatehouse serve` on an empty data dir to a 200 on /readyz; its CPU to then goes to serveCpu. */
async function serveToReady(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gh-startup-'));
  const port = await freePort();
  const t0 = performance.now();
  const p = spawn(process.execPath, ['bin/gatehouse.js', 'serve', `--secure-port=${port}`, `--data-dir=${dir}`], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  p.stderr.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-2000)));
  try {
    let tls: { ca: string; cert: string; key: string } | undefined;
    for (;;) {
      if (p.exitCode !== null) throw new Error(`gatehouse serve exited ${p.exitCode}: ${err}`);
      if (performance.now() - t0 > 60_000) throw new Error(`gatehouse serve not ready in 60 s: ${err}`);
      if (!tls) {
        try {
          const [ca, cert, key] = ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFileSync(join(dir, 'pki', f), 'utf8'));
          tls = { ca: ca!, cert: cert!, key: key! };
        } catch {
          // The PKI is written early in the start; until then nothing listens either.
        }
      }
      if (tls && (await readyOnce(port, tls))) {
        const ms = performance.now() - t0;
        const cpu = cpuMsOf(p.pid!);
        if (cpu !== undefined) serveCpu.push(cpu);
        return ms;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    const exited = new Promise((r) => p.once('exit', r));
    if (p.exitCode === null) p.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

async function medianOf(what: () => Promise<number>): Promise<number> {
  await what(); // the page cache warm, as for any start after the first
  const xs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) xs.push(await what());
  return median(xs);
}

export async function runStartupBench(): Promise<void> {
  process.stdout.write(`\n=== Start time (bench/startup.ts; median of ${ROUNDS} spawns after one unmeasured) ===\n`);
  const floor = await medianOf(() => firstOutput(['-e', 'process.stdout.write("x")']));
  const rows: [string, string[], number][] = [
    ['gatehouse help', ['bin/gatehouse.js', 'help'], 150],
    ['gatehouse certs help', ['bin/gatehouse.js', 'certs', 'help'], 150],
    ['kubectl gatehouse help', ['bin/kubectl-gatehouse', 'help'], 150],
  ];
  process.stdout.write(`  floor: node writing one byte: ${floor.toFixed(0)} ms\n`);
  recordRow({ name: 'start: node writing one byte (floor)', value: floor, unit: 'ms', target: 'reference' });
  for (const [label, args, target] of rows) {
    const ms = await medianOf(() => firstOutput(args));
    process.stdout.write(`  ${label} to first output: ${ms.toFixed(0)} ms (floor + ${(ms - floor).toFixed(0)} ms; target ≤ ${target} ms)\n`);
    recordRow({ name: `start: ${label} to first output`, value: ms, unit: 'ms', target: `≤ ${target} ms`, atMost: target });
  }
  const serve = await medianOf(serveToReady);
  const cpu = serveCpu.length > 1 ? median(serveCpu.slice(1)) : undefined; // the first is the unmeasured start
  process.stdout.write(
    `  gatehouse serve, empty data dir, to /readyz 200: ${serve.toFixed(0)} ms (target ≤ 1000 ms)${cpu === undefined ? '' : `; its CPU to then: ${cpu.toFixed(0)} ms`}\n`,
  );
  if (cpu !== undefined) recordRow({ name: 'start: gatehouse serve on an empty data dir, CPU to ready', value: cpu, unit: 'ms', target: 'reference' });
  recordRow({ name: 'start: gatehouse serve on an empty data dir to ready', value: serve, unit: 'ms', target: '≤ 1 s', atMost: 1000 });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runStartupBench();
}
