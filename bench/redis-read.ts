// `redis-read` section: consistent reads on the Redis store against
// the memory store, through the full stack, in the same run. Two `gatehouse
// serve` processes (memory; redis on a fresh prefix) hold the same 1000
// ConfigMaps; the load generator sends GET of one object and LIST limit=50
// (resourceVersion="", i.e. a consistent read) over 50 keep-alive connections.
// Rounds alternate memory and redis back to back, as this machine's speed
// drifts within minutes; each round's ratio is a figure, the median is
// reported. Targets: Redis GET and LIST(limit=50) ≥ 85% of the memory store's.
// Beside them, a floor: a third process on the memory store whose consistent
// GET and LIST first wait for a revision check against the same Redis, shared
// as the Redis store shares its checks (bench/server.ts BENCH_FENCED_MEMORY):
// what any read that must ask Redis after it arrives costs, with no cache,
// feed or decoding of Redis's around it.
//
// Entry: runRedisReadBench(opts) → figures or {skipped}; printRedisReadSection()
// prints them. `node --import tsx bench/redis-read.ts` runs it alone.
// Knobs: REDIS_URL, BENCH_REDIS_DURATION_MS (window per measurement, default 2000),
// BENCH_REDIS_READ_ROUNDS (default 3), BENCH_CPU_PROF (profiles of both processes' first GET and LIST rounds).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { redisOptions } from '../backends/core/store/redis-connect.js';
import { freePort, startChild, type Child, devPki } from './procs.js';
import type { LoopResult, Target } from './rawclient.js';
import { drop } from './redis.js';
import { Admin } from './admin.js';
import { configMap, redisUnreachable } from './redis-stack.js';
import { cpuUs, out, pct, rps } from './report.js';
import { cpuShares, errs, measured, median, n0, section } from './redis-measure.js';
import { recordRow } from './summary.js';

export interface RedisReadOptions {
  url?: string;
  durationMs?: number;
  rounds?: number;
  objects?: number;
}

export interface ReadPair {
  memory: LoopResult;
  redis: LoopResult;
  ratio: number;
  /** The memory store behind a shared revision check (the floor), and its ratio to the memory store. */
  fenced: LoopResult;
  floorRatio: number;
}

export interface RedisReadFigures {
  url: string;
  objects: number;
  /** Per round, in round order. */
  get: ReadPair[];
  list: ReadPair[];
}

export async function runRedisReadBench(opts: RedisReadOptions = {}): Promise<RedisReadFigures | { skipped: string }> {
  const url = opts.url ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const skipped = await redisUnreachable(url);
  if (skipped) return { skipped };
  const duration = opts.durationMs ?? Number(process.env['BENCH_REDIS_DURATION_MS'] ?? 2000);
  const rounds = opts.rounds ?? Number(process.env['BENCH_REDIS_READ_ROUNDS'] ?? 3);
  const objects = opts.objects ?? 1000;
  const prefix = `gh-bench-read-${randomBytes(4).toString('hex')}`;
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-redis-read-'));
  // The store's own options: ioredis reads unix:// URLs as a host name.
  const raw = new Redis({ ...redisOptions(url, 5000), lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: 1 });
  const children: Child[] = [];
  const admins: Admin[] = [];
  const authz = ['--authorization-mode', 'AlwaysAllow'];
  try {
    // The memory-store process generates the dev PKI the other uses.
    const memPort = await freePort();
    const memDir = join(root, 'mem');
    const mem = await startChild(
      'gatehouse-memory',
      './server.ts',
      ['--secure-port', String(memPort), '--data-dir', memDir, '--storage-backend', 'memory', ...authz],
      0,
      ['--expose-gc'],
    );
    children.push(mem);
    const { tls, tlsFlags } = await devPki(memDir);
    const redisPort = await freePort();
    const red = await startChild(
      'gatehouse-redis',
      './server.ts',
      [
        '--secure-port',
        String(redisPort),
        '--data-dir',
        join(root, 'redis'),
        '--storage-backend',
        'redis',
        '--redis-url',
        url,
        '--storage-prefix',
        prefix,
        ...tlsFlags,
        ...authz,
      ],
      0,
      ['--expose-gc'],
    );
    children.push(red);
    const fencedPort = await freePort();
    const fenced = await startChild(
      'gatehouse-fenced-memory',
      './server.ts',
      ['--secure-port', String(fencedPort), '--data-dir', join(root, 'fenced'), '--storage-backend', 'memory', ...tlsFlags, ...authz],
      0,
      ['--expose-gc'],
      { BENCH_FENCED_MEMORY: url },
    );
    children.push(fenced);
    const load = await startChild('loadgen', './loadgen.ts', [], 1);
    children.push(load);
    for (const port of [memPort, redisPort, fencedPort]) {
      const adm = new Admin(port, tls);
      admins.push(adm);
      await adm.ready();
      await adm.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      const names = Array.from({ length: objects }, (_, i) => `cm-${String(i).padStart(4, '0')}`);
      for (let i = 0; i < names.length; i += 25) {
        await Promise.all(names.slice(i, i + 25).map((n) => adm.must('POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', n))));
      }
    }
    const redisPid = Number(/process_id:(\d+)/.exec(await raw.info('server'))?.[1] ?? 0);
    const server = new Map<number, Child>([
      [memPort, mem],
      [redisPort, red],
      [fencedPort, fenced],
    ]);
    const loop = { connections: 50, warmupMs: 500, durationMs: duration, maxRequests: 5_000_000 };
    const fixed = (port: number, path: string): Promise<LoopResult> =>
      measured(load, server.get(port)!, redisPid, {
        ...loop,
        target: { port, ...tls } satisfies Target,
        req: { method: 'GET', path },
        uniqueNames: false,
        changingData: false,
        objects,
      });
    const profiled = async (who: Child, what: string, run: () => Promise<LoopResult>): Promise<LoopResult> => {
      const dir = process.env['BENCH_CPU_PROF'];
      if (!dir) return run();
      await who.call('profStart');
      try {
        return await run();
      } finally {
        await who.call('profStop', { file: join(dir, `redis-read-${what}.cpuprofile`) });
      }
    };
    const pairOf = async (path: string, what: string, round: number): Promise<ReadPair> => {
      const memory = round === 0 ? await profiled(mem, `${what}-memory`, () => fixed(memPort, path)) : await fixed(memPort, path);
      const redis = round === 0 ? await profiled(red, what, () => fixed(redisPort, path)) : await fixed(redisPort, path);
      const floor = await fixed(fencedPort, path);
      return { memory, redis, ratio: rps(redis) / rps(memory), fenced: floor, floorRatio: rps(floor) / rps(memory) };
    };
    const get: ReadPair[] = [];
    const list: ReadPair[] = [];
    for (let round = 0; round < rounds; round++) {
      get.push(await pairOf('/api/v1/namespaces/bench/configmaps/cm-0000', 'get', round));
      list.push(await pairOf('/api/v1/namespaces/bench/configmaps?limit=50', 'list', round));
    }
    return { url, objects, get, list };
  } finally {
    for (const x of admins) x.close();
    await Promise.all(children.map((c) => c.stop()));
    await drop(raw, prefix).catch(() => undefined);
    raw.disconnect();
    await rm(root, { recursive: true, force: true });
  }
}

function row(what: string, pairs: ReadPair[]): void {
  const m = median(pairs.map((p) => p.ratio));
  const mid = pairs.find((p) => p.ratio === m)!;
  recordRow({ name: `Redis ${what} vs the memory store (median of rounds)`, value: m, unit: 'ratio', target: '≥ 85% of the memory store', atLeast: 0.85 });
  out(
    `  ${what.padEnd(22)} redis ${n0(rps(mid.redis))}/s${errs(mid.redis)} (${n0(cpuUs(mid.redis))} µs CPU)${cpuShares(mid.redis)}   memory ${n0(rps(mid.memory))}/s${errs(mid.memory)} (${n0(cpuUs(mid.memory))} µs CPU)`,
  );
  out(
    `  ${''.padEnd(22)} → ${pct(m, 1)} of the memory store (target ≥ 85%; median of ${pairs.length} back-to-back rounds: ${pairs.map((p) => pct(p.ratio, 1)).join(', ')}) ${m >= 0.85 ? 'met' : 'NOT met'}`,
  );
  const f = median(pairs.map((p) => p.floorRatio));
  const fmid = pairs.find((p) => p.floorRatio === f)!;
  recordRow({
    name: `Redis ${what} floor: the memory store behind a shared revision check, vs the memory store (median of rounds)`,
    value: f,
    unit: 'ratio',
    target: 'floor (no target)',
  });
  out(
    `  ${''.padEnd(22)} floor: the memory store behind the same shared revision check ${n0(rps(fmid.fenced))}/s${errs(fmid.fenced)} (${n0(cpuUs(fmid.fenced))} µs CPU) → ${pct(f, 1)} of the memory store (rounds: ${pairs.map((p) => pct(p.floorRatio, 1)).join(', ')}); the Redis store at ${pct(m / f, 1)} of its floor`,
  );
}

export function printRedisRead(f: RedisReadFigures): void {
  out(`Redis consistent reads against the memory store (${f.url}; ${f.objects} ConfigMaps, 50 connections, resourceVersion="")`);
  row('GET', f.get);
  row('LIST limit=50', f.list);
  out();
}

/** The `redis-read` section: skipped, with the reason, when Redis is unreachable. */
export function runRedisReadSection(): Promise<RedisReadFigures | undefined> {
  return section('Redis consistent reads (bench/redis-read.ts)', () => runRedisReadBench(), printRedisRead);
}

if (import.meta.url === `file://${process.argv[1]}`) await runRedisReadSection();
