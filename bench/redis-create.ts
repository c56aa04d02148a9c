// `redis-create` section (issue 23): creates on the Redis store against the
// design's floor (bench/floor.ts: TLS + request + JSON + one Lua call + the
// feed read, nothing else), in the same run. One `gatehouse serve` on Redis
// (a fresh prefix) and the floor server; the load generator POSTs a small
// ConfigMap with a new name each time over 50 keep-alive connections. Rounds
// alternate floor and Gatehouse back to back, as this machine's speed drifts
// within minutes; each round's ratio is a figure, the median is reported with
// the server CPU per create of both. Target: creates ≥ 60% of the floor.
// For changes smaller than the drift, instructions per create:
// `STORE=redis` with bench/cg-creates.mjs (its header).
//
// Entry: runRedisCreateBench(opts) → figures or {skipped};
// runRedisCreateSection() prints them. `node --import tsx bench/redis-create.ts`
// runs it alone. Knobs: REDIS_URL, BENCH_REDIS_DURATION_MS (default 2000),
// BENCH_REDIS_CREATE_ROUNDS (default 3), BENCH_CPU_PROF (a profile of Gatehouse's first round).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { cpuSecondsOf, freePort, startChild, type Child } from './procs.js';
import type { LoopResult, Target } from './rawclient.js';
import { drop } from './redis.js';
import { Admin } from './admin.js';
import { configMap, redisUnreachable } from './redis-stack.js';
import { cpuUs, out, pct, rps } from './report.js';

export interface RedisCreateOptions { url?: string; durationMs?: number; rounds?: number }

export interface CreatePair { floor: LoopResult; redis: LoopResult; ratio: number }

export interface RedisCreateFigures { url: string; rounds: CreatePair[] }

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runRedisCreateBench(opts: RedisCreateOptions = {}): Promise<RedisCreateFigures | { skipped: string }> {
  const url = opts.url ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const skipped = await redisUnreachable(url);
  if (skipped) return { skipped };
  const duration = opts.durationMs ?? Number(process.env['BENCH_REDIS_DURATION_MS'] ?? 2000);
  const rounds = opts.rounds ?? Number(process.env['BENCH_REDIS_CREATE_ROUNDS'] ?? 3);
  const prefix = `gh-bench-create-${randomBytes(4).toString('hex')}`;
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-redis-create-'));
  const raw = new Redis(url, { maxRetriesPerRequest: 1 });
  const children: Child[] = [];
  let admin: Admin | undefined;
  try {
    // Gatehouse generates the dev PKI the floor serves with too.
    const ghPort = await freePort();
    const ghDir = join(root, 'gatehouse');
    const gh = await startChild('gatehouse-redis', './server.ts', ['--secure-port', String(ghPort), '--data-dir', ghDir,
      '--storage-backend', 'redis', '--redis-url', url, '--storage-prefix', prefix, '--authorization-mode', 'AlwaysAllow'], 0, ['--expose-gc']);
    children.push(gh);
    const pki = join(ghDir, 'pki');
    const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
    const tls = { ca: ca!, cert: cert!, key: key! };
    admin = new Admin(ghPort, tls);
    await admin.ready();
    await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-create' } });
    const floorPort = await freePort();
    const floor = await startChild('floor', './floor.ts', [String(floorPort), join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt'), url, `${prefix}-floor`], 0);
    children.push(floor);
    const load = await startChild('loadgen', './loadgen.ts', [], 1);
    children.push(load);
    const redisPid = Number(/process_id:(\d+)/.exec(await raw.info('server'))?.[1] ?? 0);
    const server = new Map<number, Child>([[ghPort, gh], [floorPort, floor]]);
    const loop = { connections: 50, warmupMs: 500, durationMs: duration, maxRequests: 5_000_000 };
    const body = JSON.stringify(configMap('bench-create'));
    const creates = async (port: number): Promise<LoopResult> => {
      const s = server.get(port)!;
      const t0 = performance.now();
      const c0 = [s.cpuSeconds(), load.cpuSeconds(), cpuSecondsOf(redisPid)];
      const target: Target = { port, ...tls };
      const r = await load.call<LoopResult>('fixed', { ...loop, target, req: { method: 'POST', path: '/api/v1/namespaces/bench-create/configmaps', body }, uniqueNames: true, changingData: false, objects: 1 });
      const wall = (performance.now() - t0) / 1000;
      r.cpu = { server: (s.cpuSeconds() - c0[0]!) / wall, load: (load.cpuSeconds() - c0[1]!) / wall, redis: (cpuSecondsOf(redisPid) - c0[2]!) / wall };
      return r;
    };
    const profiled = async (run: () => Promise<LoopResult>): Promise<LoopResult> => {
      const dir = process.env['BENCH_CPU_PROF'];
      if (!dir) return run();
      await gh.call('profStart');
      try { return await run(); } finally { await gh.call('profStop', { file: join(dir, 'redis-create-section.cpuprofile') }); }
    };
    const pairs: CreatePair[] = [];
    for (let round = 0; round < rounds; round++) {
      const f = await creates(floorPort);
      const r = round === 0 ? await profiled(() => creates(ghPort)) : await creates(ghPort);
      pairs.push({ floor: f, redis: r, ratio: rps(r) / rps(f) });
    }
    return { url, rounds: pairs };
  } finally {
    admin?.close();
    await Promise.all(children.map((c) => c.stop()));
    await drop(raw, prefix).catch(() => undefined);
    await drop(raw, `${prefix}-floor`).catch(() => undefined);
    raw.disconnect();
    await rm(root, { recursive: true, force: true });
  }
}

const n0 = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const errs = (r: LoopResult): string => (r.errors === 0 && Object.keys(r.statuses).every((c) => Number(c) < 400) ? '' : ` (errors ${r.errors}, statuses ${JSON.stringify(r.statuses)})`);
const cpu = (r: LoopResult): string => (r.cpu ? ` [cpu server ${pct(r.cpu.server, 1)}, load ${pct(r.cpu.load, 1)}, redis ${pct(r.cpu.redis ?? NaN, 1)}]` : '');

export function printRedisCreate(f: RedisCreateFigures): void {
  const m = median(f.rounds.map((p) => p.ratio));
  const mid = f.rounds.find((p) => p.ratio === m)!;
  out(`Redis creates against the design's floor (${f.url}; bench/floor.ts: HTTPS + JSON + the write script + the feed read)`);
  out(`  creates  gatehouse ${n0(rps(mid.redis))}/s${errs(mid.redis)} (${n0(cpuUs(mid.redis))} µs CPU per create)${cpu(mid.redis)}   floor ${n0(rps(mid.floor))}/s${errs(mid.floor)} (${n0(cpuUs(mid.floor))} µs)${cpu(mid.floor)}`);
  out(`           → ${pct(m, 1)} of the floor (target ≥ 60%; median of ${f.rounds.length} back-to-back rounds: ${f.rounds.map((p) => pct(p.ratio, 1)).join(', ')}) ${m >= 0.6 ? 'met' : 'NOT met'}`);
  out();
}

/** The `redis-create` section: skipped, with the reason, when Redis is unreachable. */
export async function runRedisCreateSection(): Promise<RedisCreateFigures | undefined> {
  out();
  out('=== Redis creates (bench/redis-create.ts) ===');
  const f = await runRedisCreateBench();
  if ('skipped' in f) {
    out(`skipped: ${f.skipped}`);
    return undefined;
  }
  printRedisCreate(f);
  return f;
}

if (import.meta.url === `file://${process.argv[1]}`) await runRedisCreateSection();
