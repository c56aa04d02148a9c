// A/B of two builds of Gatehouse on creates, for changes smaller than this
// machine's drift (±25% within minutes): both servers run side by side on
// CPU 0 and are measured in interleaved windows (A B, B A, …), so drift lands
// on both; each round prints the two rates and the server CPU per create, and
// the end the median ratio B/A. A is a copy of an earlier build (`cp -r dist
// <dir>` before the change; the directory must sit under the repository, e.g.
// node_modules/.ab-dist, so the build's imports resolve), B is dist/.
//
// `node --import tsx bench/ab.ts <dir of build A>`
// Knobs: AB_REDIS=1 (Redis store, REDIS_URL, each server under its own prefix;
// default the memory store), AB_ROUNDS (6), AB_MS (measured window, 1500),
// AB_FLAGS_B (node flags of B only, to A/B a runtime flag on one build),
// AB_ENV_A (`K=V …` set for A only, e.g. BENCH_NO_HARDEN=1 to A/B the hardening on one build),
// AB_FILE=1 (the file store, each server its own directory; each round also prints the p50 and p99).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort, startChild, withCpu, type Child } from './procs.js';
import { Admin, metricValue } from './admin.js';
import { drop } from './redis.js';
import type { LoopResult } from './rawclient.js';
import { cpuUs, rps } from './report.js';
import { configMap } from './redis-stack.js';

const distA = process.argv[2];
if (!distA) throw new Error('usage: bench/ab.ts <dir of build A>');
const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const redis = process.env['AB_REDIS'] === '1';
const file = process.env['AB_FILE'] === '1';
const rounds = Number(process.env['AB_ROUNDS'] ?? 6);
const windowMs = Number(process.env['AB_MS'] ?? 1500);
const flagsB = (process.env['AB_FLAGS_B'] ?? '').split(' ').filter(Boolean);
const envA = Object.fromEntries(
  (process.env['AB_ENV_A'] ?? '')
    .split(' ')
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const prefixes = [0, 1].map(() => `gh-bench-ab-${randomBytes(4).toString('hex')}`);
const storeFlags = (i: number): string[] =>
  redis
    ? ['--storage-backend', 'redis', '--redis-url', url, '--storage-prefix', prefixes[i]!]
    : file
      ? ['--storage-backend', 'file']
      : ['--storage-backend', 'memory'];
const body = JSON.stringify(configMap('bench'));

const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-ab-'));
const children: Child[] = [];
const admins = new Map<number, Admin>();
try {
  // A generates the dev PKI; B and the load generator use it.
  const portA = await freePort();
  const a = await startChild(
    'A',
    './server.ts',
    ['--secure-port', String(portA), '--data-dir', join(root, 'a'), ...storeFlags(0), '--authorization-mode', 'AlwaysAllow'],
    0,
    [],
    { ...envA, BENCH_DIST: resolve(distA) },
  );
  children.push(a);
  const pki = join(root, 'a', 'pki');
  const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
  const tls = { ca: ca!, cert: cert!, key: key! };
  const portB = await freePort();
  const b = await startChild(
    'B',
    './server.ts',
    [
      '--secure-port',
      String(portB),
      '--data-dir',
      join(root, 'b'),
      ...storeFlags(1),
      '--authorization-mode',
      'AlwaysAllow',
      '--tls-cert-file',
      join(pki, 'apiserver.crt'),
      '--tls-private-key-file',
      join(pki, 'apiserver.key'),
      '--client-ca-file',
      join(pki, 'ca.crt'),
    ],
    0,
    flagsB,
  );
  children.push(b);
  const load = await startChild('loadgen', './loadgen.ts', [], 1);
  children.push(load);
  for (const port of [portA, portB]) {
    const adm = new Admin(port, tls);
    await adm.ready();
    await adm.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    admins.set(port, adm);
  }
  /** The file store's log writes and syncs so far (its /metrics), for the writes each sync carried. */
  const syncFigures = async (port: number): Promise<[number, number]> => {
    if (!file) return [0, 0];
    const text = await admins.get(port)!.must('GET', '/metrics');
    return [metricValue(text, 'gatehouse_file_store_writes_total'), metricValue(text, 'gatehouse_file_store_syncs_total')];
  };
  /** Creates/s and server CPU µs per create over one window (CPU includes the 300 ms warm-up, on both sides alike). */
  const measure = async (port: number, server: Child): Promise<{ rate: number; us: number; p50: number; p99: number; batch: number }> => {
    const [w0, s0] = await syncFigures(port);
    const r = await withCpu(server, load, () =>
      load.call<LoopResult>('fixed', {
        connections: 50,
        warmupMs: 300,
        durationMs: windowMs,
        maxRequests: 5_000_000,
        target: { port, ...tls },
        req: { method: 'POST', path: '/api/v1/namespaces/bench/configmaps', body },
        uniqueNames: true,
      }),
    );
    if (r.errors > 0 || Object.keys(r.statuses).some((c) => c !== '201')) console.log(`  (errors ${r.errors}, statuses ${JSON.stringify(r.statuses)})`);
    const [w1, s1] = await syncFigures(port);
    return { rate: rps(r), us: cpuUs(r), p50: r.latency.p50, p99: r.latency.p99, batch: (w1 - w0) / (s1 - s0) };
  };
  await measure(portA, a);
  await measure(portB, b);
  const ratios: number[] = [];
  type Figures = { rate: number; us: number; p50: number; p99: number; batch: number };
  const of = { A: [] as Figures[], B: [] as Figures[] };
  const latency = (f: Figures): string => (file ? ` p50 ${f.p50.toFixed(1)} p99 ${f.p99.toFixed(1)} ms ${f.batch.toFixed(1)} a sync` : '');
  for (let i = 0; i < rounds; i++) {
    for (const side of i % 2 === 0 ? (['A', 'B'] as const) : (['B', 'A'] as const)) {
      of[side].push(side === 'A' ? await measure(portA, a) : await measure(portB, b));
    }
    const [x, y] = [of.A[i]!, of.B[i]!];
    ratios.push(y.us / x.us);
    console.log(
      `round ${i + 1}: A ${Math.round(x.rate)}/s ${Math.round(x.us)} µs${latency(x)}   B ${Math.round(y.rate)}/s ${Math.round(y.us)} µs${latency(y)}   B/A CPU ${ratios[i]!.toFixed(3)}`,
    );
  }
  const median = (xs: number[]): number => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]!;
  console.log(
    `median: A ${Math.round(median(of.A.map((x) => x.rate)))}/s ${Math.round(median(of.A.map((x) => x.us)))} µs, B ${Math.round(median(of.B.map((x) => x.rate)))}/s ${Math.round(median(of.B.map((x) => x.us)))} µs; B/A CPU per create ${median(ratios).toFixed(3)} [${ratios.map((r) => r.toFixed(2)).join(' ')}]`,
  );
  if (file)
    console.log(
      `median p99: A ${median(of.A.map((x) => x.p99)).toFixed(1)} ms, B ${median(of.B.map((x) => x.p99)).toFixed(1)} ms; p50: A ${median(of.A.map((x) => x.p50)).toFixed(1)} ms, B ${median(of.B.map((x) => x.p50)).toFixed(1)} ms`,
    );
} finally {
  for (const adm of admins.values()) adm.close();
  await Promise.all(children.map((c) => c.stop()));
  if (redis) {
    const raw = new Redis(url);
    for (const p of prefixes) await drop(raw, p).catch(() => undefined);
    raw.disconnect();
  }
  await rm(root, { recursive: true, force: true });
}
