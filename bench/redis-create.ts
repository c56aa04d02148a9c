// `redis-create` section: creates on the Redis store against the
// design's floor (bench/floor.ts: TLS + request + JSON + one Lua call + the
// feed read, nothing else), in the same run. One `gatehouse serve` on Redis
// (a fresh prefix) and the floor server; the load generator POSTs a small
// ConfigMap with a new name each time over 50 keep-alive connections. Rounds
// alternate floor and Gatehouse back to back, as this machine's speed drifts
// within minutes; each round's ratio is a figure, the median is reported with
// the server CPU per create of both. Target: creates ≥ 60% of the floor.
// Beside them, each round, Gatehouse on the memory store (the same request
// path with no storage cost at all): its ratio to the floor is as far as any
// store can take Gatehouse's creates, printed and recorded as a floor row.
// For changes smaller than the drift, instructions per create:
// `STORE=redis` with bench/cg-creates.mjs (its header).
//
// Entry: runRedisCreateBench(opts) → figures or {skipped};
// runRedisCreateSection() prints them. `node --import tsx bench/redis-create.ts`
// runs it alone. Knobs: REDIS_URL, BENCH_REDIS_DURATION_MS (default 2000),
// BENCH_REDIS_CREATE_ROUNDS (default 3), BENCH_CPU_PROF (a profile of Gatehouse's first round).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { freePort, startChild, type Child, devPki, serverTlsArgs } from './procs.js';
import type { LoopResult, Target } from './rawclient.js';
import { drop } from './redis.js';
import { Admin } from './admin.js';
import { configMap, redisUnreachable } from './redis-stack.js';
import { cpuUs, out, pct, rps } from './report.js';
import { cpuShares, errs, measured, median, n0, section } from './redis-measure.js';
import { recordRow } from './summary.js';

export interface RedisCreateOptions {
  url?: string;
  durationMs?: number;
  rounds?: number;
}

export interface CreatePair {
  floor: LoopResult;
  redis: LoopResult;
  memory: LoopResult;
  ratio: number;
}

export interface RedisCreateFigures {
  url: string;
  rounds: CreatePair[];
}

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
    const gh = await startChild(
      'gatehouse-redis',
      './server.ts',
      [
        '--secure-port',
        String(ghPort),
        '--data-dir',
        ghDir,
        '--storage-backend',
        'redis',
        '--redis-url',
        url,
        '--storage-prefix',
        prefix,
        '--authorization-mode',
        'AlwaysAllow',
      ],
      0,
      ['--expose-gc'],
    );
    children.push(gh);
    const { pki, tls, tlsFlags } = await devPki(ghDir);
    admin = new Admin(ghPort, tls);
    await admin.ready();
    await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-create' } });
    // The request path alone: the same serve flags on the memory store, serving with the same PKI.
    const memPort = await freePort();
    const mem = await startChild(
      'gatehouse-memory',
      './server.ts',
      ['--secure-port', String(memPort), '--data-dir', join(root, 'memory'), '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow', ...tlsFlags],
      0,
      ['--expose-gc'],
    );
    children.push(mem);
    const memAdmin = new Admin(memPort, tls);
    try {
      await memAdmin.ready();
      await memAdmin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-create' } });
    } finally {
      memAdmin.close();
    }
    const floorPort = await freePort();
    const floor = await startChild('floor', './floor.ts', [String(floorPort), ...serverTlsArgs(pki), url, `${prefix}-floor`], 0);
    children.push(floor);
    const load = await startChild('loadgen', './loadgen.ts', [], 1);
    children.push(load);
    const redisPid = Number(/process_id:(\d+)/.exec(await raw.info('server'))?.[1] ?? 0);
    const server = new Map<number, Child>([
      [ghPort, gh],
      [floorPort, floor],
      [memPort, mem],
    ]);
    const loop = { connections: 50, warmupMs: 500, durationMs: duration, maxRequests: 5_000_000 };
    const body = JSON.stringify(configMap('bench-create'));
    const creates = (port: number): Promise<LoopResult> =>
      measured(load, server.get(port)!, redisPid, {
        ...loop,
        target: { port, ...tls } satisfies Target,
        req: { method: 'POST', path: '/api/v1/namespaces/bench-create/configmaps', body },
        uniqueNames: true,
        changingData: false,
        objects: 1,
      });
    const profiled = async (run: () => Promise<LoopResult>): Promise<LoopResult> => {
      const dir = process.env['BENCH_CPU_PROF'];
      if (!dir) return run();
      await gh.call('profStart');
      try {
        return await run();
      } finally {
        await gh.call('profStop', { file: join(dir, 'redis-create-section.cpuprofile') });
      }
    };
    const pairs: CreatePair[] = [];
    for (let round = 0; round < rounds; round++) {
      const f = await creates(floorPort);
      const r = round === 0 ? await profiled(() => creates(ghPort)) : await creates(ghPort);
      const m = await creates(memPort);
      pairs.push({ floor: f, redis: r, memory: m, ratio: rps(r) / rps(f) });
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

export function printRedisCreate(f: RedisCreateFigures): void {
  const m = median(f.rounds.map((p) => p.ratio));
  const mid = f.rounds.find((p) => p.ratio === m)!;
  recordRow({ name: 'Redis create vs bench/floor.ts (median of rounds)', value: m, unit: 'ratio', target: '≥ 60% of the floor', atLeast: 0.6 });
  out(`Redis creates against the design's floor (${f.url}; bench/floor.ts: HTTPS + JSON + the write script + the feed read)`);
  out(
    `  creates  gatehouse ${n0(rps(mid.redis))}/s${errs(mid.redis)} (${n0(cpuUs(mid.redis))} µs CPU per create)${cpuShares(mid.redis)}   floor ${n0(rps(mid.floor))}/s${errs(mid.floor)} (${n0(cpuUs(mid.floor))} µs)${cpuShares(mid.floor)}`,
  );
  out(
    `           → ${pct(m, 1)} of the floor (target ≥ 60%; median of ${f.rounds.length} back-to-back rounds: ${f.rounds.map((p) => pct(p.ratio, 1)).join(', ')}) ${m >= 0.6 ? 'met' : 'NOT met'}`,
  );
  // The request path's own floor: no store can take Gatehouse's creates further than the memory store does.
  const memRatios = f.rounds.map((p) => rps(p.memory) / rps(p.floor));
  const mm = median(memRatios);
  const memMid = f.rounds[memRatios.indexOf(mm)]!;
  const redisVsMem = median(f.rounds.map((p) => rps(p.redis) / rps(p.memory)));
  recordRow({
    name: 'floor: Gatehouse on the memory store vs bench/floor.ts (the request path alone, median of rounds)',
    value: mm,
    unit: 'ratio',
    target: 'floor (no target)',
  });
  out(
    `  memory store (the request path, no storage cost) ${n0(rps(memMid.memory))}/s (${n0(cpuUs(memMid.memory))} µs CPU per create) → ${pct(mm, 1)} of the floor (rounds: ${memRatios.map((r) => pct(r, 1)).join(', ')});`,
  );
  out(
    `           Redis creates are ${pct(redisVsMem, 1)} of the memory store's (median of rounds)${mm < 0.6 ? ': the 60% target is above what the request path itself reaches' : ''}`,
  );
  out();
}

/** The `redis-create` section: skipped, with the reason, when Redis is unreachable. */
export function runRedisCreateSection(): Promise<RedisCreateFigures | undefined> {
  return section('Redis creates (bench/redis-create.ts)', () => runRedisCreateBench(), printRedisCreate);
}

if (import.meta.url === `file://${process.argv[1]}`) await runRedisCreateSection();
