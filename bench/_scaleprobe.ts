// Scratch probe: one `gatehouse serve` (STORE, default memory) with node flags (NODE_FLAGS, default --trace-gc),
// filled to each of SIZES, then per size a GET window and LISTS LIST windows (50 connections, WINDOW_MS each):
// rate, p50/p99, the server's CPU a request (the main thread's beside), bytes an answer, and the collections
// (--trace-gc lines) inside each window. DIR: fill this data directory and keep it (NOMEASURE=1: fill only), e.g.
// for bench/cg-list.mjs. WINDOWS=<file>: each window's monotonic µs bounds, to cut a --cpu-prof to it.
//   SIZES=1499,100000 node --import tsx bench/_scaleprobe.ts
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedLoop, type Request, type Target } from './rawclient.js';
import { freePort } from '../test/helpers/ports.js';
import { scaleConfigMapJson, scaleName } from './scale-store.js';

const BIN = fileURLToPath(new URL('../bin/gatehouse.js', import.meta.url));
const SIZES = (process.env['SIZES'] ?? '1000,100000').split(',').map(Number);
const FLAGS = (process.env['NODE_FLAGS'] ?? '--trace-gc').split(' ').filter(Boolean);
const WINDOW_MS = Number(process.env['WINDOW_MS'] ?? 3000);
const LISTS = Number(process.env['LISTS'] ?? 2);
const STORE = process.env['STORE'] ?? 'memory';
const BASE = '/api/v1/namespaces/scale/configmaps';
const dir = process.env['DIR'] ?? mkdtempSync(join(tmpdir(), 'list100k-probe-'));
const port = await freePort();
const proc = spawn(process.execPath, [...FLAGS, BIN, 'serve', `--secure-port=${port}`, `--data-dir=${dir}`, `--storage-backend=${STORE}`], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let out = '';
proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let t!: Target;
for (;;) {
  try {
    const [ca, cert, key] = ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFileSync(join(dir, 'pki', f), 'utf8'));
    t = { port, ca: ca!, cert: cert!, key: key! };
    const r = await one('GET', '/readyz');
    if (r.status === 200) break;
  } catch {}
  await sleep(50);
}
async function one(method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  let got = { status: 0, body: '' };
  await closedLoop(
    { target: t, connections: 1, warmupMs: 0, durationMs: 60_000, maxRequests: 1 },
    {
      wantBody: true,
      next: () => ({ method, path, ...(body !== undefined ? { body } : {}) }),
      done: (_c, status, b) => void (got = { status, body: b?.toString() ?? '' }),
    },
  );
  return got;
}
function mainCpu(): number {
  const f = readFileSync(`/proc/${proc.pid}/task/${proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms
}
function cpu(): number {
  const f = readFileSync(`/proc/${proc.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 10; // ms
}
function gcs(text: string): string {
  let sc = 0,
    scMs = 0,
    mc = 0,
    mcMs = 0;
  for (const line of text.split('\n')) {
    const m = /: (Scavenge|Mark-Compact|Mark-Compact \(reduce\)|Minor Mark-Compact)[^,]*, ([\d.]+) \/ ([\d.]+) ms/.exec(line);
    if (!m) continue;
    if (m[1] === 'Scavenge' || m[1] === 'Minor Mark-Compact') {
      sc++;
      scMs += Number(m[2]);
    } else {
      mc++;
      mcMs += Number(m[2]);
    }
  }
  return `scav ${sc} (${scMs.toFixed(0)} ms) major ${mc} (${mcMs.toFixed(0)} ms)`;
}
const windows: string[] = [];
const CONTINUE = /"continue":"([^"]+)"/;
async function measure(
  name: string,
  script: { next: (c: number) => Request; done?: (c: number, s: number, b: Buffer | undefined) => number | void; wantBody?: boolean },
) {
  const o0 = out.length;
  const c0 = cpu();
  const m0 = mainCpu();
  const h0 = process.hrtime.bigint() / 1000n;
  const r = await closedLoop({ target: t, connections: 50, warmupMs: 0, durationMs: WINDOW_MS, maxRequests: 1e7 }, script);
  const c1 = cpu();
  const m1 = mainCpu();
  windows.push(`${name.split(' (')[0]} ${h0} ${process.hrtime.bigint() / 1000n} ${r.requests}`);
  const seg = out.slice(o0);
  console.log(
    `${name}: ${(r.requests / r.seconds).toFixed(0)} req/s p50 ${r.latency.p50.toFixed(1)} p99 ${r.latency.p99.toFixed(1)} ms; server CPU ${(((c1 - c0) / r.requests) * 1000).toFixed(0)} µs/req (main thread ${(((m1 - m0) / r.requests) * 1000).toFixed(0)}); ${(r.units / r.requests).toFixed(0)} B/answer; ${gcs(seg)}`,
  );
  if (process.env['SHOWGC'])
    console.log(
      seg
        .split('\n')
        .filter((l) => /Mark-Compact/.test(l))
        .join('\n'),
    );
}
const ns = await one('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: 'scale' } }));
if (ns.status !== 201) throw new Error('ns');
let have = 0;
for (const n of SIZES) {
  let next = have;
  await closedLoop(
    { target: t, connections: 50, warmupMs: 0, durationMs: 3_600_000, maxRequests: n - have },
    { next: () => ({ method: 'POST', path: BASE, body: scaleConfigMapJson(next++) }) },
  );
  have = n;
  const pool: Request[] = Array.from({ length: 4096 }, () => ({ method: 'GET', path: `${BASE}/${scaleName(Math.floor(Math.random() * n))}` }));
  let k = 0;
  if (process.env['NOMEASURE']) continue;
  const up = () => readFileSync('/proc/loadavg', 'utf8').split(' ')[0];
  await measure(`${n} GET (load ${up()})`, { next: () => pool[k++ & 4095]! });
  const cont: (string | undefined)[] = Array(50).fill(undefined);
  for (let i = 0; i < LISTS; i++)
    await measure(`${n} LIST#${i} (load ${up()})`, {
      wantBody: true,
      next: (c) => ({ method: 'GET', path: `${BASE}?limit=500${cont[c] ? `&continue=${encodeURIComponent(cont[c]!)}` : ''}` }),
      done: (c, _s, b) => {
        cont[c] = b ? CONTINUE.exec(b.toString('latin1', 0, 600))?.[1] : undefined;
        return b?.length ?? 0;
      },
    });
}
proc.kill('SIGTERM');
await new Promise((r) => proc.once('exit', r));
if (!process.env['DIR']) rmSync(dir, { recursive: true, force: true });
if (process.env['WINDOWS']) (await import('node:fs')).writeFileSync(process.env['WINDOWS'], windows.join('\n') + '\n');
