// Full-stack figures of the Redis store: `gatehouse
// serve --storage-backend=redis` processes (two, on one Redis and one prefix)
// measured through HTTPS by the load generator, each figure beside its
// baseline in the same run: the file store (creates, updates, GET, LIST), a
// bare Node HTTPS server (GET), the raw Lua write script called directly with
// ioredis and the design's floor (bench/floor.ts) (creates: three rounds of
// raw rate, floor and creates back to back, the median round reported), and
// one file-store process (watch delivery). Watch
// delivery: 1000 watchers, half on each Redis process, writes through the
// first; latency from the write's acknowledgement to the event on the socket;
// its floor: the same run against two bare fan-out processes (bench/bare.ts)
// that share the lines through a Redis stream, on the same CPU.
// Memory: keys and bytes under the prefix after N updates of the same
// objects, right after and once the history window has passed.
//
// Entry: runRedisStackBench(opts) → figures (or {skipped}); printRedisSection()
// runs it and bench/redis.ts and prints both (bench/run.ts calls it).
// `node --import tsx bench/redis-stack.ts` runs it alone.
// Knobs: REDIS_URL, BENCH_REDIS_DURATION_MS (measured window, default 2000),
// BENCH_REDIS_WATCHERS (default 1000), BENCH_REDIS_CREATES_ONLY=<n> (n create
// rounds, each printed with the server's CPU per create, then the file store's
// creates, and nothing else).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { redisOptions } from '../backends/core/store/redis-connect.js';
import { cpuSecondsOf, freePort, startChild, type Child, devPki, serverTlsArgs } from './procs.js';
import type { LoopResult, Target } from './rawclient.js';
import type { WatchRunResult } from './loadgen.js';
import { drop, footprint, rawScriptRate, runRedisBench, type RedisBenchFigures } from './redis.js';
import { Admin } from './admin.js';
import { cpuUs, rps } from './report.js';
import { recordRow } from './summary.js';

export interface RedisStackOptions {
  url?: string;
  durationMs?: number;
  warmupMs?: number;
  watchers?: number;
  /** Objects in the LIST fixture (default 1000). */
  listSize?: number;
  /** Updates of the same objects for the memory figure (default 5000). */
  updates?: number;
}

export interface RedisStackFigures {
  url: string;
  persistence: string;
  /** Raw script rate of the round whose ratio is the median. */
  rawScriptPerSec: number;
  /** creates/s ÷ raw script rate, per round (raw, floor and creates measured back to back), in round order. */
  createRatios: number[];
  /** redis and floor (bench/floor.ts): the median round's creates. */
  create: { redis: LoopResult; floor: LoopResult; file: LoopResult };
  update: { redis: LoopResult; file: LoopResult };
  get: { redis: LoopResult; file: LoopResult; bare: LoopResult };
  list: { objects: number; redis: LoopResult; file: LoopResult };
  /** floor: two bare fan-out processes sharing lines through a Redis stream (bench/bare.ts). */
  watch: { redis: WatchRunResult; file: WatchRunResult; floor: WatchRunResult };
  memory: { objects: number; updates: number; windowMs: number; after: Footprint; afterWindow: Footprint };
}

interface Footprint {
  keys: number;
  bytes: number;
}

/** Pairs of (raw script rate, creates through the stack) measured back to back. */
const CREATE_ROUNDS = 3;

/** The ConfigMap the write measurements send (bench/ab.ts sends it too). */
export function configMap(namespace: string, name?: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: name ?? 'c', namespace, labels: { app: 'bench', tier: 'backend' } },
    data: { 'app.properties': 'greeting=hello\nlog.level=info\nfeature.flags=a,b,c\n', mode: 'fast' },
  };
}

/** Undefined when Redis answers PING, else why the Redis figures are skipped. */
export async function redisUnreachable(url: string): Promise<string | undefined> {
  const c = new Redis({ ...redisOptions(url, 5000), connectTimeout: 1500, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.ping();
    return undefined;
  } catch (err) {
    return `redis at ${url} is unreachable (${err instanceof Error ? err.message : String(err)}); set REDIS_URL`;
  } finally {
    c.disconnect();
  }
}

export async function runRedisStackBench(opts: RedisStackOptions = {}): Promise<RedisStackFigures | { skipped: string }> {
  const url = opts.url ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const skipped = await redisUnreachable(url);
  if (skipped) return { skipped };
  const duration = opts.durationMs ?? Number(process.env['BENCH_REDIS_DURATION_MS'] ?? 2000);
  const warmup = opts.warmupMs ?? 500;
  const watchers = opts.watchers ?? Number(process.env['BENCH_REDIS_WATCHERS'] ?? 1000);
  const listSize = opts.listSize ?? 1000;
  const updates = opts.updates ?? 5000;
  const windowMs = 5000;
  const prefix = `gh-bench-stack-${randomBytes(4).toString('hex')}`;
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-redis-bench-'));
  const raw = new Redis(url, { maxRetriesPerRequest: 1 });
  const children: Child[] = [];
  const admins: Admin[] = [];
  // Every watcher comes from the load generator's one address: above the default cap of
  // --max-connections-per-client-address (1000), which refused the 1,000 watchers of one process.
  const authz = ['--authorization-mode', 'AlwaysAllow', '--max-connections-per-client-address=0'];
  try {
    const appendonly = ((await raw.config('GET', 'appendonly')) as string[])[1] ?? '?';
    const appendfsync = ((await raw.config('GET', 'appendfsync')) as string[])[1] ?? '?';
    const persistence = appendonly === 'yes' ? `appendonly yes, appendfsync ${appendfsync}` : 'appendonly no';

    // The file-store process generates the dev PKI every other process uses.
    const filePort = await freePort();
    const fileDir = join(root, 'file');
    const file = await startChild(
      'gatehouse-file',
      './server.ts',
      ['--secure-port', String(filePort), '--data-dir', fileDir, '--storage-backend', 'file', ...authz],
      0,
      ['--expose-gc'],
    );
    children.push(file);
    const { pki, tls, tlsFlags } = await devPki(fileDir);
    const redisFlags = [
      '--storage-backend',
      'redis',
      '--redis-url',
      url,
      '--storage-prefix',
      prefix,
      '--watch-history',
      `${windowMs / 1000}s`,
      ...tlsFlags,
      ...authz,
    ];
    const portA = await freePort();
    const portB = await freePort();
    const a = await startChild('gatehouse-redis-a', './server.ts', ['--secure-port', String(portA), '--data-dir', join(root, 'a'), ...redisFlags], 0, [
      '--expose-gc',
    ]);
    children.push(a);
    const barePort = await freePort();
    const bare = await startChild('bare-https', './bare.ts', [String(barePort), ...serverTlsArgs(pki)], 0, ['--expose-gc']);
    children.push(bare);
    const load = await startChild('loadgen', './loadgen.ts', [], 1);
    children.push(load);
    const fileAdmin = new Admin(filePort, tls);
    const aAdmin = new Admin(portA, tls);
    admins.push(fileAdmin, aAdmin);
    await Promise.all(admins.map((x) => x.ready()));

    for (const adm of [fileAdmin, aAdmin]) {
      for (const ns of ['bench', 'bench-create', 'bench-watch'])
        await adm.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const names = Array.from({ length: listSize }, (_, i) => `cm-${String(i).padStart(4, '0')}`);
      for (let i = 0; i < names.length; i += 25) {
        await Promise.all(names.slice(i, i + 25).map((n) => adm.must('POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', n))));
      }
    }

    const target = (port: number): Target => ({ port, ...tls });
    const loop = { connections: 50, warmupMs: warmup, durationMs: duration, maxRequests: 5_000_000 };
    // CPU shares over each measurement: is the figure Gatehouse's capacity, or did the load generator or Redis hold it?
    const redisPid = Number(/process_id:(\d+)/.exec(await raw.info('server'))?.[1] ?? 0);
    const processes = new Map<number, Child>([
      [portA, a],
      [filePort, file],
    ]);
    const fixed = async (port: number, method: string, path: string, body?: Record<string, unknown>): Promise<LoopResult> => {
      const server = processes.get(port);
      const t0 = performance.now();
      const c0 = [server?.cpuSeconds() ?? NaN, load.cpuSeconds(), cpuSecondsOf(redisPid)];
      const r = await load.call<LoopResult>('fixed', {
        ...loop,
        target: target(port),
        req: { method, path, ...(body ? { body: JSON.stringify(body) } : {}) },
        uniqueNames: method === 'POST',
        changingData: method === 'PUT',
        objects: listSize,
      });
      const wall = (performance.now() - t0) / 1000;
      r.cpu = {
        server: ((server?.cpuSeconds() ?? NaN) - c0[0]!) / wall,
        load: (load.cpuSeconds() - c0[1]!) / wall,
        redis: (cpuSecondsOf(redisPid) - c0[2]!) / wall,
      };
      return r;
    };
    const paged = (port: number): Promise<LoopResult> =>
      load.call<LoopResult>('paged', { ...loop, connections: 8, target: target(port), path: '/api/v1/namespaces/bench/configmaps', limit: 0, total: listSize });

    // BENCH_CPU_PROF=<dir>: a CPU profile of the Redis process measured, per measurement.
    const profiled = async <T>(child: Child, what: string, run: () => Promise<T>): Promise<T> => {
      const dir = process.env['BENCH_CPU_PROF'];
      if (!dir) return run();
      await child.call('profStart');
      try {
        return await run();
      } finally {
        await child.call('profStop', { file: join(dir, `redis-${what}.cpuprofile`) });
      }
    };
    // Creates against the raw script in back-to-back pairs: this machine's speed drifts by
    // ±25% within minutes, so one round's ratio is a figure and the median of three is reported.
    const createPath = '/api/v1/namespaces/bench-create/configmaps';
    const pairs: { raw: number; floor: LoopResult; redis: LoopResult }[] = [];
    const floorPort = await freePort();
    const floor = await startChild('floor', './floor.ts', [String(floorPort), ...serverTlsArgs(pki), url, `${prefix}-floor`], 0);
    children.push(floor);
    processes.set(floorPort, floor);
    const createsOnly = Number(process.env['BENCH_REDIS_CREATES_ONLY'] ?? 0);
    for (let round = 0; round < (createsOnly || CREATE_ROUNDS); round++) {
      const rawRate = await rawScriptRate(url, 20_000, 64);
      const f = await fixed(floorPort, 'POST', createPath, configMap('bench-create'));
      const r =
        round === 0
          ? await profiled(a, 'create', () => fixed(portA, 'POST', createPath, configMap('bench-create')))
          : await fixed(portA, 'POST', createPath, configMap('bench-create'));
      pairs.push({ raw: rawRate, floor: f, redis: r });
      if (createsOnly) {
        out(
          `  round ${round + 1}: raw ${n0(rawRate)}/s; floor ${n0(rps(f))}/s${errs(f)} → ${pct(rps(f), rawRate)}, ${n0(cpuUs(f))} µs${cpu(f)}; creates ${n0(rps(r))}/s${errs(r)} → ${pct(rps(r), rawRate)}, ${n0(cpuUs(r))} µs server CPU per create${cpu(r)}`,
        );
      }
    }
    await floor.stop();
    await drop(raw, `${prefix}-floor`).catch(() => undefined);
    if (createsOnly) {
      const f = await fixed(filePort, 'POST', createPath, configMap('bench-create'));
      out(`  file store: creates ${n0(rps(f))}/s${errs(f)}; ${n0(cpuUs(f))} µs server CPU per create${cpu(f)}`);
      return { skipped: `BENCH_REDIS_CREATES_ONLY=${createsOnly}: the create rounds only` };
    }
    const createRatios = pairs.map((x) => rps(x.redis) / x.raw);
    const median = pairs.map((x, i) => ({ x, ratio: createRatios[i]! })).sort((p, q) => p.ratio - q.ratio)[Math.floor(pairs.length / 2)]!.x;
    const rawScriptPerSec = median.raw;
    const create = { redis: median.redis, floor: median.floor, file: await fixed(filePort, 'POST', createPath, configMap('bench-create')) };
    const put = configMap('bench');
    const update = {
      redis: await profiled(a, 'update', () => fixed(portA, 'PUT', '/api/v1/namespaces/bench/configmaps/cm-{n}', put)),
      file: await fixed(filePort, 'PUT', '/api/v1/namespaces/bench/configmaps/cm-{n}', put),
    };
    // The second process starts after the write measurements: on this machine it would share the
    // first one's core, and applying every write to its own cache is work another machine does.
    const b = await startChild('gatehouse-redis-b', './server.ts', ['--secure-port', String(portB), '--data-dir', join(root, 'b'), ...redisFlags], 0, [
      '--expose-gc',
    ]);
    children.push(b);
    processes.set(portB, b);
    const bAdmin = new Admin(portB, tls);
    admins.push(bAdmin);
    await bAdmin.ready();
    const getPath = '/api/v1/namespaces/bench/configmaps/cm-0000';
    const get = {
      redis: await profiled(b, 'get', () => fixed(portB, 'GET', getPath)),
      file: await fixed(filePort, 'GET', getPath),
      bare: await fixed(barePort, 'GET', getPath),
    };
    const list = { objects: listSize, redis: await paged(portB), file: await paged(filePort) };

    const watchPath = '/api/v1/namespaces/bench-watch/configmaps?watch=1';
    const writePath = '/api/v1/namespaces/bench-watch/configmaps';
    const run = { ...loop, connections: 4, drainMs: 3000 };
    await load.call('watchOpen', { target: target(portA), n: Math.ceil(watchers / 2), path: watchPath });
    await load.call('watchOpen', { target: target(portB), n: Math.floor(watchers / 2), path: watchPath });
    await sleep(1000);
    const watchRedis = await load.call<WatchRunResult>('watchRun', { ...run, target: target(portA), path: writePath, body: configMap('bench-watch', 'x') });
    await load.call('watchClose');
    await load.call('watchOpen', { target: target(filePort), n: watchers, path: watchPath });
    await sleep(1000);
    const watchFile = await load.call<WatchRunResult>('watchRun', { ...run, target: target(filePort), path: writePath, body: configMap('bench-watch', 'x') });
    await load.call('watchClose');
    // The floor: the same watchers and writers against two processes that only fan out, through Redis.
    const floorPorts = [await freePort(), await freePort()];
    const floorProcs = await Promise.all(
      floorPorts.map((p, i) => startChild(`bare-feed-${i}`, './bare.ts', [String(p), ...serverTlsArgs(pki), url, `${prefix}/bare-feed`], 0, ['--expose-gc'])),
    );
    children.push(...floorProcs);
    await Promise.all(floorProcs.map((c) => c.call('watchers')));
    await load.call('watchOpen', { target: target(floorPorts[0]!), n: Math.ceil(watchers / 2), path: '/watch' });
    await load.call('watchOpen', { target: target(floorPorts[1]!), n: Math.floor(watchers / 2), path: '/watch' });
    await sleep(1000);
    const watchFloor = await load.call<WatchRunResult>('watchRun', {
      ...run,
      target: target(floorPorts[0]!),
      path: '/fire',
      body: configMap('bench-watch', 'x'),
    });
    await load.call('watchClose');
    await Promise.all(floorProcs.map((c) => c.stop()));

    // Memory: N updates of the same 100 objects, then the history window passes.
    const objects = 100;
    for (let i = 0; i < updates; i += 100) {
      await Promise.all(
        Array.from({ length: 100 }, (_, j) =>
          aAdmin.must('PUT', `/api/v1/namespaces/bench/configmaps/cm-${String((i + j) % objects).padStart(4, '0')}`, {
            ...configMap('bench', `cm-${String((i + j) % objects).padStart(4, '0')}`),
            data: { n: String(i + j) },
          }),
        ),
      );
    }
    const after = await footprint(raw, prefix);
    // Compaction runs every window/4 in each process; wait for the window and a pass or two.
    await sleep(windowMs + windowMs / 2 + 1000);
    await aAdmin.must('PUT', '/api/v1/namespaces/bench/configmaps/cm-0000', configMap('bench', 'cm-0000'));
    await sleep(windowMs / 4 + 500);
    const afterWindow = await footprint(raw, prefix);
    return {
      url,
      persistence,
      rawScriptPerSec,
      createRatios,
      create,
      update,
      get,
      list,
      watch: { redis: watchRedis, file: watchFile, floor: watchFloor },
      memory: { objects, updates, windowMs, after, afterWindow },
    };
  } finally {
    for (const x of admins) x.close();
    await Promise.all(children.map((c) => c.stop()));
    await drop(raw, prefix).catch(() => undefined);
    raw.disconnect();
    await rm(root, { recursive: true, force: true });
  }
}

const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};
const n0 = (x: number): string => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : '-');
const pct = (a: number, b: number): string => (b > 0 ? `${((100 * a) / b).toFixed(0)}%` : '-');
const ms = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(x < 10 ? 2 : 1)} ms` : '-');
const kib = (b: number): string => `${(b / 1024).toFixed(0)} KiB`;
const cpu = (r: LoopResult): string =>
  r.cpu ? ` [cpu gatehouse ${pct(r.cpu.server, 1)}, load ${pct(r.cpu.load, 1)}, redis ${pct(r.cpu.redis ?? NaN, 1)}]` : '';
const errs = (r: LoopResult): string =>
  r.errors === 0 && Object.keys(r.statuses).every((c) => Number(c) < 400) ? '' : ` (errors ${r.errors}, statuses ${JSON.stringify(r.statuses)})`;

export function printRedisStack(f: RedisStackFigures): void {
  out(`Redis, full stack (two gatehouse processes on ${f.url}, ${f.persistence})`);
  out(
    `  creates/s      redis ${n0(rps(f.create.redis))}${errs(f.create.redis)}${cpu(f.create.redis)}   file ${n0(rps(f.create.file))}   raw Lua script ${n0(f.rawScriptPerSec)}   → ${pct(rps(f.create.redis), f.rawScriptPerSec)} of raw (target ≥ 20%; median of ${f.createRatios.length} back-to-back rounds: ${f.createRatios.map((r) => pct(r, 1)).join(', ')})`,
  );
  const fl = f.create.floor;
  out(
    `  create floor   ${n0(rps(fl))}/s${errs(fl)}${cpu(fl)} = ${pct(rps(fl), f.rawScriptPerSec)} of raw; Gatehouse reaches ${pct(rps(f.create.redis), rps(fl))} of it (${n0(cpuUs(f.create.redis))} vs ${n0(cpuUs(fl))} µs server CPU per create; bench/floor.ts: HTTPS + JSON + the script + the feed read, nothing else)`,
  );
  out(`  updates/s      redis ${n0(rps(f.update.redis))}${errs(f.update.redis)}${cpu(f.update.redis)}   file ${n0(rps(f.update.file))}`);
  out(
    `  GET/s          redis ${n0(rps(f.get.redis))}${errs(f.get.redis)}${cpu(f.get.redis)}   file ${n0(rps(f.get.file))}   bare HTTPS ${n0(rps(f.get.bare))}   → ${pct(rps(f.get.redis), rps(f.get.bare))} of bare (target ≥ 35%)`,
  );
  out(
    `  LIST ${f.list.objects}/s   redis ${n0(rps(f.list.redis))} (p50 ${ms(f.list.redis.latency.p50)})${errs(f.list.redis)}   file ${n0(rps(f.list.file))} (p50 ${ms(f.list.file.latency.p50)})`,
  );
  const w = f.watch.redis;
  recordRow({
    name: `Redis watch, ${w.watchers} watchers over 2 processes, ack→socket p99`,
    value: w.fromAck.p99,
    unit: 'ms',
    target: 'p99 ≤ 50 ms',
    atMost: 50,
  });
  out(
    `  watch ×${w.watchers} over 2 processes: ${n0(w.writesPerSec)} writes/s, ack→socket p50 ${ms(w.fromAck.p50)} p99 ${ms(w.fromAck.p99)} (target p99 ≤ 50 ms; 0 = the event came first), send→socket p50 ${ms(w.fromSend.p50)} p99 ${ms(w.fromSend.p99)}, missing ${w.missing}`,
  );
  const fw = f.watch.floor;
  recordRow({
    name: `Redis watch floor: ${fw.watchers} watchers over 2 bare fan-out processes through a Redis stream, ack→socket p99`,
    value: fw.fromAck.p99,
    unit: 'ms',
    target: 'floor (no target)',
  });
  out(
    `  watch floor ×${fw.watchers}, 2 bare fan-out processes through a Redis stream: ${n0(fw.writesPerSec)} writes/s, ack→socket p50 ${ms(fw.fromAck.p50)} p99 ${ms(fw.fromAck.p99)}, send→socket p50 ${ms(fw.fromSend.p50)} p99 ${ms(fw.fromSend.p99)}, missing ${fw.missing}`,
  );
  const wf = f.watch.file;
  out(
    `  watch ×${wf.watchers} file store, 1 process: ${n0(wf.writesPerSec)} writes/s, ack→socket p50 ${ms(wf.fromAck.p50)} p99 ${ms(wf.fromAck.p99)}, send→socket p50 ${ms(wf.fromSend.p50)} p99 ${ms(wf.fromSend.p99)}, missing ${wf.missing}`,
  );
  out(
    `  memory after ${n0(f.memory.updates)} updates of ${f.memory.objects} objects: ${f.memory.after.keys} keys, ${kib(f.memory.after.bytes)}; after the ${f.memory.windowMs / 1000} s window: ${f.memory.afterWindow.keys} keys, ${kib(f.memory.afterWindow.bytes)}`,
  );
  out();
}

export function printRedisStore(f: RedisBenchFigures): void {
  out(`Redis, store level (bench/redis.ts, ${f.appendfsync})`);
  out(
    `  raw Lua write ${n0(f.rawScriptPerSec)}/s; RedisStore creates ${n0(f.createsPerSec)}/s (${pct(f.createsPerSec, f.rawScriptPerSec)}), updates ${n0(f.updatesPerSec)}/s, consistent GETs ${n0(f.consistentGetsPerSec)}/s`,
  );
  out(`  watch delivery to another store: p50 ${ms(f.watchDelivery.p50Ms)} p99 ${ms(f.watchDelivery.p99Ms)} (${f.watchDelivery.events} events)`);
  out(
    `  memory after ${n0(f.memory.updates)} updates of ${f.memory.objects} objects: ${kib(f.memory.bytesBeforeCompaction)} before compaction, ${f.memory.keys} keys / ${kib(f.memory.bytes)} after`,
  );
  out();
}

/** The Redis section of `npm run bench`: skipped, with the reason, when Redis is unreachable. */
export async function printRedisSection(): Promise<void> {
  const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  out();
  out('=== Redis store (bench/redis.ts, bench/redis-stack.ts) ===');
  const why = await redisUnreachable(url);
  if (why) {
    out(`skipped: ${why}`);
    return;
  }
  printRedisStore(await runRedisBench({ url, ops: 10_000 }));
  const f = await runRedisStackBench({ url });
  if ('skipped' in f) out(`skipped: ${f.skipped}`);
  else printRedisStack(f);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const f = await runRedisStackBench();
  if ('skipped' in f) console.log(`skipped: ${f.skipped}`);
  else printRedisStack(f);
}
