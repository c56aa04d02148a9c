// Tracing figures: first, in this process, the tracing work an
// unrecorded request adds at 0.1% sampling (server span context, sampler, the
// helpers' checks; ns per request, median of 5 rounds) — steady on a busy
// machine, where throughput is not. Then GET and create throughput of Gatehouse with
// tracing off (no --tracing-config-file), on at 0.1% (samplingRatePerMillion
// 1000), on with nothing sampled (0) and on at 100% (1000000), in the order
// off, 0.1%, 0, 100%, 100%, 0, 0.1%, off so the machine's drift lands on all
// (target: 0.1% ≥ 95% of off; rate 0 shows what is left before any request
// is recorded; before the trace was passed by hand, on Node 20/22 the first
// recorded request switched AsyncLocalStorage's promise hooks on for good). Spans
// go to an OTLP/HTTP sink in this process that counts what it receives and
// answers 200. Four servers with the same PKI on CPU 0, the raw load
// generator (bench/loadgen.ts) on CPU 1. Last, what tracing adds to each Redis
// command (backends/core/store/redis-traced.ts) of a request that is not
// recorded, against the local Redis when one answers. BENCH_TRACING=0 skips
// the section in run.ts.
import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { placement, startChild, withCpu, type Child } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants } from './variants.js';
import { buildTracing } from '../gateway/tracing/index.js';
import { parseRequestInfo } from '../lib/api/requestinfo.js';
import { inSpan, spanAttribute, type PendingTrace, type Trace } from '../lib/tracing/span.js';
import { recordRow } from './summary.js';
import { Redis } from 'ioredis';
import { traceCommands } from '../backends/core/store/redis-traced.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);

/** An OTLP/HTTP endpoint that takes every export (bytes counted, not decoded: the bench measures the server). */
async function startSink(): Promise<{ hostPort: string; posts: () => number; bytes: () => number; close(): Promise<void> }> {
  let posts = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => {
      bytes += c.length;
    });
    req.on('end', () => {
      posts++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    hostPort: `127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts: () => posts,
    bytes: () => bytes,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * The chain's tracing calls for one GET (server span, name, authentication,
 * authorization with its attributes, one store read) around no work, against
 * the same awaits without them; ns per request of process CPU.
 */
async function perRequestWork(sinkHostPort: string, root: string): Promise<{ offNs: number; onNs: number }> {
  const file = join(root, 'micro.yaml');
  await writeFile(file, `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${sinkHostPort}\nsamplingRatePerMillion: 1000\n`);
  const tracing = (await buildTracing({ tracingConfigFile: file }, { log: () => undefined, clock: Date.now }))!;
  const info = parseRequestInfo('GET', '/api/v1/namespaces/bench/configmaps/c1', false);
  const nothing = () => Promise.resolve();
  const N = 50_000;
  const cpuNs = async (fn: () => Promise<void>) => {
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) await fn();
    const u = process.cpuUsage(t);
    return ((u.user + u.system) * 1000) / N;
  };
  // Both build the same request, response and promises; only the tracing calls differ.
  const request = (traced: boolean) =>
    new Promise<void>((resolve) => {
      const req = {
        headers: { 'user-agent': 'bench' },
        method: 'GET',
        url: '/api/v1/namespaces/bench/configmaps/c1',
        httpVersion: '1.1',
        socket: {},
      } as unknown as IncomingMessage;
      const res = Object.assign(new EventEmitter(), { statusCode: 200 }) as unknown as ServerResponse;
      // What the request's context keeps of its tracing.
      const r = { req, res, trace: undefined as Trace | undefined, pendingTrace: undefined as PendingTrace | undefined };
      const chain = () => {
        void (async () => {
          if (traced) {
            tracing.requests.named(r, info);
            await inSpan(r.trace, 'authentication', {}, async (_span, t) => {
              await nothing();
              spanAttribute(t, 'authentication.authenticator', 'x509');
            });
            await inSpan(r.trace, 'authorization', { verb: 'get' }, async (span) => {
              await nothing();
              span?.setAttribute('authorization.decision', 'allow');
            });
            // The core backend's check for a recorded request's store view (backend.ts).
            if (r.trace) await inSpan(r.trace, 'Get memory', { key: 'k' }, nothing);
            else await nothing();
          } else {
            await nothing();
            await (async () => {
              await nothing();
            })();
            await nothing();
          }
          res.emit('prefinish');
          resolve();
        })();
      };
      if (traced) {
        const begun = tracing.requests.begin(req, res);
        if (begun !== undefined && 'pending' in begun) r.pendingTrace = begun;
        else r.trace = begun;
      }
      chain();
    });
  const off = () => request(false);
  const on = () => request(true);
  const offs: number[] = [];
  const ons: number[] = [];
  for (let r = 0; r < 5; r++) {
    offs.push(await cpuNs(off));
    ons.push(await cpuNs(on));
  }
  await tracing.shutdown();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[2]!;
  return { offNs: median(offs), onNs: median(ons) };
}

/**
 * Redis commands with tracing on and the request not recorded (the usual case
 * at low sampling): the wrapper around a no-op command, and whole GET round
 * trips to the local Redis through a wrapped and a plain client in paired
 * rounds (process CPU µs per command). Undefined when no Redis answers.
 */
export async function redisCommandWork(
  url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379',
): Promise<{ wrapperNs: number; plainUs: number; wrappedUs: number } | undefined> {
  const fake = { getBuiltinCommands: () => ['get'], get: () => Promise.resolve(null) } as unknown as Redis;
  const bare = fake.get.bind(fake);
  traceCommands(fake, {});
  const M = 1_000_000;
  const loop = (fn: () => unknown) => {
    const t = process.hrtime.bigint();
    for (let i = 0; i < M; i++) fn();
    return Number(process.hrtime.bigint() - t) / M;
  };
  const bareNs: number[] = [];
  const wrappedNs: number[] = [];
  for (let r = 0; r < 5; r++) {
    bareNs.push(loop(() => bare('k')));
    wrappedNs.push(loop(() => fake.get('k')));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
  const clients = [new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 }), new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0 })] as const;
  try {
    await Promise.all(clients.map((c) => c.connect()));
  } catch {
    clients.forEach((c) => c.disconnect());
    return undefined;
  }
  const [plain, wrapped] = clients;
  traceCommands(wrapped, {});
  const N = 5000;
  const cpuUs = async (c: Redis) => {
    const t = process.cpuUsage();
    for (let i = 0; i < N; i++) await c.get('gatehouse-bench-none');
    const u = process.cpuUsage(t);
    return (u.user + u.system) / N;
  };
  const p: number[] = [];
  const w: number[] = [];
  for (let r = 0; r < 6; r++) {
    p.push(await cpuUs(plain));
    w.push(await cpuUs(wrapped));
  }
  clients.forEach((c) => c.disconnect());
  return { wrapperNs: median(wrappedNs) - median(bareNs), plainUs: median(p), wrappedUs: median(w) };
}

export async function runTracingBench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-tracing-'));
  const children: Child[] = [];
  const sink = await startSink();
  try {
    const base = ['--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'];
    const v = await startVariants(root, 'tracing', base, children);
    const traced = async (perMillion: number): Promise<{ port: number; child: Child }> => {
      const file = join(root, `tracing-${perMillion}.yaml`);
      await writeFile(
        file,
        `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${sink.hostPort}\nsamplingRatePerMillion: ${perMillion}\n`,
      );
      return v.start(String(perMillion), [`--tracing-config-file=${file}`]);
    };
    const micro = await perRequestWork(sink.hostPort, root);
    const tenth = await traced(1000);
    // Tracing on, nothing sampled: what the tracing code costs before any request is recorded.
    const none = await traced(0);
    const all = await traced(1_000_000);
    const load = await startChild('tracing-load', './loadgen.ts', [], 1);
    children.push(load);
    await seedConfigmaps([v.baseline.port, tenth.port, none.port, all.port], v.tls);
    /** Requests/s, and the server's CPU µs per request (its CPU share over the run / the rate): on a shared machine the steadier figure. */
    const run = async (s: { port: number; child: Child }, method: 'GET' | 'POST'): Promise<{ rate: number; cpuUs: number }> => {
      const r = await withCpu(s.child, load, () => configmapRun(load, v.tls, s.port, method, { warmupMs: WARMUP, durationMs: DURATION }));
      const rate = r.requests / r.seconds;
      return { rate, cpuUs: (r.cpu.server / rate) * 1e6 };
    };
    const offServer = v.baseline;
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const row = (
      name: string,
      a: { rate: number; cpuUs: number },
      b: { rate: number; cpuUs: number },
      o: { rate: number; cpuUs: number } | undefined,
      target: string,
    ) => {
      const rate = (a.rate + b.rate) / 2;
      const cpu = (a.cpuUs + b.cpuUs) / 2;
      const share = o ? `   ${((100 * rate) / o.rate).toFixed(1)}% of off by req/s, ${((100 * o.cpuUs) / cpu).toFixed(1)}% by CPU/request${target}` : '';
      return `  ${name.padEnd(20)} ${f(a.rate)} / ${f(b.rate)} req/s, ${cpu.toFixed(0)} µs CPU/request${share}`;
    };
    const lines = [
      '',
      `=== Tracing (bench/tracing.ts; ${placement()}) ===`,
      "two runs each (off, 0.1%, rate 0, 100%, 100%, rate 0, 0.1%, off): requests/s, and the server's CPU per request pooled over both; spans by OTLP/HTTP JSON to a sink in the bench process",
    ];
    for (const method of ['GET', 'POST'] as const) {
      const o1 = await run(offServer, method);
      const t1 = await run(tenth, method);
      const z1 = await run(none, method);
      const a1 = await run(all, method);
      const a2 = await run(all, method);
      const z2 = await run(none, method);
      const t2 = await run(tenth, method);
      const o2 = await run(offServer, method);
      const o = { rate: (o1.rate + o2.rate) / 2, cpuUs: (o1.cpuUs + o2.cpuUs) / 2 };
      recordRow({
        name: `${method === 'GET' ? 'GET one configmap' : 'CREATE configmap'}, tracing at 0.1% vs off (CPU per request)`,
        value: (t1.cpuUs + t2.cpuUs) / 2,
        unit: 'µs/request',
        baseline: o.cpuUs,
        target: '≥ 95% of off (off CPU / on CPU)',
        atMost: 1 / 0.95,
      });
      lines.push(
        method === 'GET' ? 'GET one configmap' : 'CREATE configmap',
        row('tracing off', o1, o2, undefined, ''),
        row('sampling 0.1%', t1, t2, o, ' (target ≥ 95%)'),
        row('on, rate 0', z1, z2, o, ` (nothing recorded; ${process.version})`),
        row('sampling 100%', a1, a2, o, ''),
      );
      if (method === 'GET') {
        const extra = micro.onNs - micro.offNs;
        lines.push(
          `  tracing work of an unrecorded request, measured in this process: ${f(extra)} ns (${f(micro.onNs)} with, ${f(micro.offNs)} ns the same request and awaits without)` +
            ` = ${((100 * extra) / (o.cpuUs * 1000)).toFixed(1)}% of the off server's CPU per GET`,
        );
      }
    }
    lines.push(
      `  exports received: ${f(sink.posts())} requests, ${f(sink.bytes() / 1e6)} MB (the SDK's queue of 2,048 spans drops what it cannot send in time)`,
    );
    const redis = await redisCommandWork();
    lines.push(
      redis
        ? `  Redis commands of unrecorded requests: the span wrapper costs ${redis.wrapperNs.toFixed(1)} ns per command; a GET round trip costs the process ${redis.wrappedUs.toFixed(2)} µs CPU wrapped, ${redis.plainUs.toFixed(2)} µs plain (${((100 * redis.wrappedUs) / redis.plainUs).toFixed(1)}%; tracing off: no wrapper)`
        : '  Redis commands: no Redis at REDIS_URL, not measured',
      '',
    );
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await sink.close();
    await rm(root, { recursive: true, force: true });
  }
}

// Run directly: this section alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runTracingBench();
