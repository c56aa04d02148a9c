// How Gatehouse's costs grow with the stored data: 1,000, 10,000 and 100,000
// ConfigMaps in one namespace, on the memory store and the file store (and
// the largest size on Redis). Each store is one `gatehouse serve` process
// (the built dist/, via bin/gatehouse.js) filled by the bench's own creates;
// at each size: GET of a random stored object and LIST limit=500 pages
// (following continue tokens) with 50 connections, rates and p99; the
// process's resident memory against the objects' JSON bytes, as read and
// after two full GCs (bench/scale-gc.mjs, preloaded, on SIGUSR2: RSS and V8's
// heap used; `BENCH_SCALE_GC=0` spawns the servers without it); on the file
// store (and Redis) the time from a restart's spawn to a 200 on /readyz (the
// log's replay; Redis's informer fill). At the largest size, a watch from
// resourceVersion=0 with sendInitialEvents (client-go's WatchList): the time
// to its last initial ADDED event and to the bookmark that closes them.
// Figures go to the summary (BENCH_JSON); `node bench/scale-chart.mjs <json>`
// draws the curve into bench/README.md.
// `BENCH_ONLY=scale npm run bench`; alone: `node --import tsx bench/scale.ts`.
// Knobs: BENCH_SCALE_MAX (largest size, default 100000), BENCH_SCALE_WINDOW_MS
// (measured window per figure, default 3000), BENCH_SCALE_STORES (default memory,file,redis),
// BENCH_SCALE_GC (default 1), REDIS_URL.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { closedLoop, openTls, type Request, type Target } from './rawclient.js';
import { drop } from './redis.js';
import { freePort } from '../test/helpers/ports.js';
import { recordRow } from './summary.js';
import { scaleConfigMapJson, scaleName } from './scale-store.js';

const BIN = fileURLToPath(new URL('../bin/gatehouse.js', import.meta.url));
const BARE = fileURLToPath(new URL('./bare.ts', import.meta.url));
const GC_PRELOAD = new URL('./scale-gc.mjs', import.meta.url).href;
/** Whether the servers run with the full-GC probe (bench/scale-gc.mjs). */
const GC_PROBE = process.env['BENCH_SCALE_GC'] !== '0';
const MAX = Number(process.env['BENCH_SCALE_MAX'] ?? 100_000);
const SIZES = [1_000, 10_000, 100_000].filter((n) => n <= MAX);
if (SIZES.length === 0 || SIZES.at(-1)! < MAX) SIZES.push(MAX);
const WINDOW_MS = Number(process.env['BENCH_SCALE_WINDOW_MS'] ?? 3000);
const WARMUP_MS = 500;
const CONNECTIONS = 50;
const NS = 'scale';
const BASE = `/api/v1/namespaces/${NS}/configmaps`;
const STORES = new Set((process.env['BENCH_SCALE_STORES'] ?? 'memory,file,redis').split(',').map((x) => x.trim()));
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const READY_TIMEOUT_MS = 120_000;

type Backend = 'memory' | 'file' | 'redis';

/** Resident memory of a process, bytes, from /proc (NaN where there is none). */
function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The server's memory after two full GCs (bench/scale-gc.mjs's report), bytes; gcMs the two collections' time. */
interface AfterGc {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** V8's spaces (new_space, old_space, …): size and bytes used. */
  spaces: Record<string, { size: number; used: number }>;
  gcMs: number;
}

class Server {
  proc!: ChildProcess;
  output = '';
  port = 0;
  constructor(
    readonly backend: Backend,
    readonly dataDir: string,
    readonly extra: string[],
  ) {}

  /** Spawns `gatehouse serve` and waits for /readyz; the time from spawn to the first 200, ms. */
  async start(tls: Target | undefined): Promise<number> {
    if (this.port === 0) this.port = await freePort();
    const t0 = performance.now();
    this.output = '';
    this.proc = spawn(
      process.execPath,
      [
        ...(GC_PROBE ? ['--expose-gc', '--import', GC_PRELOAD] : []),
        BIN,
        'serve',
        `--secure-port=${this.port}`,
        `--data-dir=${this.dataDir}`,
        `--storage-backend=${this.backend}`,
        // No kube-root-ca.crt or ServiceAccount written into the bench namespace (as bench/run.ts and store-paths.ts):
        // with a 1,001st ConfigMap the walk at 1,000 was pages of 500, 500 and 1, and flattered that point's rate and p99.
        '--controllers=*,-serviceaccount,-root-ca-cert-publisher',
        ...this.extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(GC_PROBE ? { env: { ...process.env, SCALE_GC_OUT: this.gcFile } } : {}) },
    );
    const keep = (d: Buffer): void => {
      this.output = (this.output + d.toString('utf8')).slice(-4000);
    };
    this.proc.stdout!.on('data', keep);
    this.proc.stderr!.on('data', keep);
    const target = tls ?? (await this.pkiWhenWritten());
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`gatehouse (${this.backend}) exited ${this.proc.exitCode}:\n${this.output}`);
      if (performance.now() - t0 > READY_TIMEOUT_MS) throw new Error(`gatehouse (${this.backend}) not ready in ${READY_TIMEOUT_MS} ms:\n${this.output}`);
      if ((await getStatus({ ...target, port: this.port }, '/readyz').catch(() => 0)) === 200) return performance.now() - t0;
      await sleep(10);
    }
  }

  /** The admin's TLS material, once the first start has written the dev PKI. */
  private async pkiWhenWritten(): Promise<Target> {
    const pki = join(this.dataDir, 'pki');
    for (;;) {
      if (this.proc.exitCode !== null) throw new Error(`gatehouse exited ${this.proc.exitCode}:\n${this.output}`);
      try {
        const [ca, cert, key] = ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFileSync(join(pki, f), 'utf8'));
        return { port: this.port, ca: ca!, cert: cert!, key: key! };
      } catch {
        await sleep(20);
      }
    }
  }

  rss(): number {
    return rssOf(this.proc.pid ?? 0);
  }

  private get gcFile(): string {
    return join(this.dataDir, 'scale-gc.json');
  }

  /** Signals the preloaded probe (SIGUSR2) and waits for its report: the memory after two full GCs. */
  async afterGc(): Promise<AfterGc | undefined> {
    if (!GC_PROBE) return undefined;
    rmSync(this.gcFile, { force: true });
    this.proc.kill('SIGUSR2');
    const t0 = performance.now();
    for (;;) {
      if (this.proc.exitCode !== null || this.proc.signalCode !== null) throw new Error(`gatehouse (${this.backend}) exited on SIGUSR2:\n${this.output}`);
      try {
        const r = JSON.parse(readFileSync(this.gcFile, 'utf8')) as AfterGc;
        unlinkSync(this.gcFile);
        return r;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      if (performance.now() - t0 > 60_000) throw new Error(`gatehouse (${this.backend}): no full-GC report in 60 s:\n${this.output}`);
      await sleep(20);
    }
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request on its own connection: the status (and the body when asked). */
async function exchange(t: Target, method: string, path: string, body?: string): Promise<{ status: number; body: string }> {
  let got: { status: number; body: string } | undefined;
  await closedLoop(
    { target: t, connections: 1, warmupMs: 0, durationMs: 60_000, maxRequests: 1 },
    {
      wantBody: true,
      next: () => ({ method, path, ...(body !== undefined ? { body } : {}) }),
      done: (_c, status, b) => {
        got = { status, body: b?.toString('utf8') ?? '' };
      },
    },
  );
  if (!got) throw new Error(`${method} ${path}: no answer`);
  return got;
}

async function getStatus(t: Target, path: string): Promise<number> {
  return (await exchange(t, 'GET', path)).status;
}

/** Creates objects [from, to) with 50 connections; throws on any answer but 201. */
async function fill(t: Target, from: number, to: number): Promise<number> {
  let next = from;
  const bad: string[] = [];
  const t0 = performance.now();
  await closedLoop(
    { target: t, connections: CONNECTIONS, warmupMs: 0, durationMs: 3_600_000, maxRequests: to - from },
    {
      wantBody: true,
      next: () => ({ method: 'POST', path: BASE, body: scaleConfigMapJson(next++) }),
      done: (_c, status, b) => {
        if (status !== 201 && bad.length < 3) bad.push(`${status} ${b?.toString('utf8').slice(0, 200)}`);
      },
    },
  );
  if (bad.length > 0) throw new Error(`fill: ${bad.join('; ')}`);
  return ((to - from) / (performance.now() - t0)) * 1000;
}

interface Figure {
  rate: number;
  p99: number;
  errors: number;
}

/** GET of a random one of the n stored objects. */
async function gets(t: Target, n: number): Promise<Figure> {
  // A fixed pool of requests, encoded once each (rawclient caches per Request object); random keys across the range.
  const pool: Request[] = Array.from({ length: 4096 }, () => ({ method: 'GET', path: `${BASE}/${scaleName(Math.floor(Math.random() * n))}` }));
  let k = 0;
  const r = await closedLoop(
    { target: t, connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: WINDOW_MS, maxRequests: 10_000_000 },
    { next: () => pool[k++ & 4095]! },
  );
  return { rate: r.requests / r.seconds, p99: r.latency.p99, errors: r.errors };
}

const CONTINUE = /"continue":"([^"]+)"/;

/** LIST limit=500 pages, each connection walking the collection by its continue tokens (the last page starts over). */
async function listPages(t: Target): Promise<Figure & { objects: number }> {
  const cont: (string | undefined)[] = Array.from({ length: CONNECTIONS }, () => undefined);
  const r = await closedLoop(
    { target: t, connections: CONNECTIONS, warmupMs: WARMUP_MS, durationMs: WINDOW_MS, maxRequests: 10_000_000 },
    {
      wantBody: true,
      next: (c) => ({ method: 'GET', path: `${BASE}?limit=500${cont[c] ? `&continue=${encodeURIComponent(cont[c])}` : ''}` }),
      done: (c, status, body) => {
        if (status !== 200 || !body) return 0;
        // The list's metadata comes first; the token sits in its first bytes.
        cont[c] = CONTINUE.exec(body.toString('latin1', 0, 600))?.[1];
        let items = 0;
        for (let i = body.indexOf('"kind":"ConfigMap"'); i >= 0; i = body.indexOf('"kind":"ConfigMap"', i + 1)) items++;
        return items;
      },
    },
  );
  return { rate: r.requests / r.seconds, p99: r.latency.p99, errors: r.errors, objects: r.units / r.seconds };
}

/** LIST limit=500 on one connection, walking the pages: each page's latency without queueing. */
async function pageLatency(t: Target): Promise<{ p50: number; p99: number }> {
  let cont: string | undefined;
  const r = await closedLoop(
    { target: t, connections: 1, warmupMs: WARMUP_MS, durationMs: Math.min(WINDOW_MS, 2000), maxRequests: 10_000_000 },
    {
      wantBody: true,
      next: () => ({ method: 'GET', path: `${BASE}?limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}` }),
      done: (_c, _status, body) => {
        cont = body ? CONTINUE.exec(body.toString('latin1', 0, 600))?.[1] : undefined;
      },
    },
  );
  return { p50: r.latency.p50, p99: r.latency.p99 };
}

/**
 * The page p99's floor: a bare node:https process (bench/bare.ts with BARE_BODY, the server's own certificate, client
 * certificates asked) answering every GET with one page of this store (limit=500, the bytes it sent), to the same 50
 * connections through the same client loop, unpinned as the server is. Nothing scales in it: it is what a 500-item
 * page's p99 can be on this machine at this concurrency, whatever a store does.
 */
async function pageFloor(t: Target, dataDir: string): Promise<Figure> {
  const page = await exchange(t, 'GET', `${BASE}?limit=500`);
  if (page.status !== 200) throw new Error(`floor page: ${page.status} ${page.body.slice(0, 200)}`);
  const file = join(dataDir, 'floor-page.json');
  writeFileSync(file, page.body);
  const port = await freePort();
  const pki = join(dataDir, 'pki');
  const proc = spawn(process.execPath, ['--import', 'tsx', BARE, String(port), join(pki, 'apiserver.crt'), join(pki, 'apiserver.key'), join(pki, 'ca.crt')], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, BARE_BODY: file },
  });
  const exited = new Promise((r) => proc.once('exit', r));
  try {
    await new Promise<void>((resolve, reject) => {
      proc.once('exit', (code) => reject(new Error(`bench/bare.ts exited during start (code ${code})`)));
      proc.once('message', () => resolve());
    });
    return await listPages({ ...t, port });
  } finally {
    proc.kill('SIGKILL');
    await exited;
  }
}

/** One stored object's JSON as GET answers it (the floor's sample), from the last measured point. */
let sampleJson: string | undefined;

/** The JSON bytes of the n stored objects as GET answers them (one page's bytes per item, times n). */
async function jsonBytesPerObject(t: Target): Promise<number> {
  const page = await exchange(t, 'GET', `${BASE}?limit=500`);
  const items = (JSON.parse(page.body) as { items: unknown[] }).items;
  sampleJson = JSON.stringify(items.at(-1));
  return items.reduce<number>((s, o) => s + Buffer.byteLength(JSON.stringify(o)), 0) / items.length;
}

/**
 * The memory target's floor: a bare Node process (bench/scale-floor.mjs) holding n objects of the sample's
 * size and nothing else, as their bytes, as strings, as parsed objects, parsed and as bytes: RSS per object above its base.
 */
async function memoryFloor(n: number, sample: string): Promise<void> {
  const script = fileURLToPath(new URL('./scale-floor.mjs', import.meta.url));
  const json = Buffer.byteLength(sample);
  const what = {
    bytes: 'as bytes in a Map',
    string: 'as JSON strings in a Map (the memory store keeps these)',
    parsed: 'parsed (JSON.parse)',
    both: 'parsed and as bytes (what a store keeps of a listed object)',
  };
  for (const form of ['bytes', 'string', 'parsed', 'both'] as const) {
    const out = await new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, ['--expose-gc', script, form, String(n), sample], { stdio: ['ignore', 'pipe', 'inherit'] });
      let text = '';
      p.stdout!.on('data', (d: Buffer) => (text += d.toString('utf8')));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve(text) : reject(new Error(`scale-floor.mjs ${form} exited ${code}`))));
    });
    const r = JSON.parse(out) as { base: { rss: number; heapUsed: number }; full: { rss: number; heapUsed: number }; gcMs: number };
    const perObject = (r.full.rss - r.base.rss) / n;
    // Its V8 heap used per object too (after its full GCs), beside the servers' heap used after full GCs.
    const heapPerObject = (r.full.heapUsed - r.base.heapUsed) / n;
    process.stdout.write(
      `  floor: a bare process holding ${n} objects of ${json} B JSON, ${what[form]}: ${perObject.toFixed(0)} B/obj above its base (${(perObject / json).toFixed(2)}× the JSON; heap used ${heapPerObject.toFixed(0)} B/obj, ${(heapPerObject / json).toFixed(2)}×), a full GC ${fmtMs(r.gcMs)}\n`,
    );
    recordRow({ name: `scale: floor at ${n}, RSS per object, ${what[form]}`, value: perObject, unit: 'bytes', baseline: json, target: 'reference' });
    recordRow({ name: `scale: floor at ${n}, heap used per object, ${what[form]}`, value: heapPerObject, unit: 'bytes', baseline: json, target: 'reference' });
  }
}

/**
 * A watch from resourceVersion=0 with its initial events (every object in the namespace): ms to the last ADDED
 * before the bookmark that closes them, and to that bookmark.
 */
async function watchFromZero(t: Target): Promise<{ added: number; addedMs: number; bookmarkMs: number }> {
  const s = await openTls(t);
  const path = `${BASE}?watch=1&resourceVersion=0&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=120`;
  const t0 = performance.now();
  s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nAccept: application/json\r\nUser-Agent: gatehouse-bench\r\n\r\n`);
  const ADDED = Buffer.from('{"type":"ADDED"');
  const BOOKMARK = Buffer.from('{"type":"BOOKMARK"');
  let added = 0;
  let addedMs = NaN;
  let carry = Buffer.alloc(0);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`watch from 0: ${added} initial events, no bookmark in 120 s`)), 120_000);
      s.on('error', reject);
      s.on('end', () => reject(new Error(`watch from 0 ended after ${added} events`)));
      s.on('data', (c: Buffer) => {
        // The markers may straddle TLS records: the last bytes of each chunk are searched again with the next.
        const old = carry.length;
        const buf = old > 0 ? Buffer.concat([carry, c]) : c;
        const end = buf.indexOf(BOOKMARK);
        const stop = end < 0 ? buf.length : end;
        let seen = 0;
        for (let i = buf.indexOf(ADDED); i >= 0 && i < stop; i = buf.indexOf(ADDED, i + ADDED.length)) if (i + ADDED.length > old) seen++;
        if (seen > 0) {
          added += seen;
          addedMs = performance.now() - t0;
        }
        if (end >= 0) {
          clearTimeout(timer);
          resolve({ added, addedMs, bookmarkMs: performance.now() - t0 });
          return;
        }
        // A marker wholly inside the carried bytes was counted already (the test above).
        carry = Buffer.from(buf.subarray(Math.max(0, buf.length - BOOKMARK.length + 1)));
      });
    });
  } finally {
    s.destroy();
  }
}

interface Point {
  backend: Backend;
  n: number;
  get: Figure;
  list: Figure & { objects: number };
  /** LIST limit=500 on one connection: a page's own latency, no queueing. */
  page: { p50: number; p99: number };
  /** The same page's bytes from a bare server, same connections and loop (pageFloor). */
  floor: Figure;
  rssBytes: number;
  rssPerObject: number;
  /** After two full GCs (bench/scale-gc.mjs), read after rssBytes; absent with BENCH_SCALE_GC=0. */
  gc: (AfterGc & { rssPerObject: number; heapPerObject: number }) | undefined;
  jsonPerObject: number;
  readyMs: number;
  fillRate: number;
}

const fmtMs = (ms: number): string => (Number.isFinite(ms) ? `${ms.toFixed(ms < 10 ? 2 : 0)} ms` : '—');
const perObj = (b: number, json: number): string => (Number.isFinite(b) ? `${b.toFixed(0)} B/obj above base, ${(b / json).toFixed(2)}×` : 'base');

function printPoint(p: Point): void {
  process.stdout.write(
    `  ${p.backend.padEnd(6)} ${String(p.n).padStart(7)}  GET ${p.get.rate.toFixed(0).padStart(6)}/s p99 ${fmtMs(p.get.p99).padStart(8)}` +
      `  LIST500 ${p.list.rate.toFixed(0).padStart(4)}/s p99 ${fmtMs(p.list.p99).padStart(7)} (1 conn p99 ${fmtMs(p.page.p99)}; bare page ${p.floor.rate.toFixed(0)}/s p99 ${fmtMs(p.floor.p99)})` +
      `  RSS ${(p.rssBytes / 2 ** 20).toFixed(0).padStart(5)} MiB (${Number.isFinite(p.rssPerObject) ? p.rssPerObject.toFixed(0) : '— '} B/obj above base, JSON ${p.jsonPerObject.toFixed(0)} B)` +
      (p.gc
        ? `  after full GCs: RSS ${(p.gc.rss / 2 ** 20).toFixed(0)} MiB (${perObj(p.gc.rssPerObject, p.jsonPerObject)}), heap used ${(p.gc.heapUsed / 2 ** 20).toFixed(0)} MiB (${perObj(p.gc.heapPerObject, p.jsonPerObject)}) of ${(p.gc.heapTotal / 2 ** 20).toFixed(0)} (new space ${((p.gc.spaces['new_space']?.size ?? NaN) / 2 ** 20).toFixed(0)}), external ${(p.gc.external / 2 ** 20).toFixed(0)} MiB, GCs ${fmtMs(p.gc.gcMs)}`
        : '') +
      `  ready ${fmtMs(p.readyMs)}  filled at ${p.fillRate.toFixed(0)}/s` +
      (p.get.errors + p.list.errors > 0 ? `  errors ${p.get.errors + p.list.errors}` : '') +
      '\n',
  );
}

/** One store's curve: fill to each size, measure; restart where the store persists. */
async function curve(backend: Backend, sizes: readonly number[], extra: string[], dataDir: string, watchAt: number): Promise<Point[]> {
  const server = new Server(backend, dataDir, extra);
  await server.start(undefined);
  const pki = join(dataDir, 'pki');
  const [ca, cert, key] = ['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFileSync(join(pki, f), 'utf8'));
  const t: Target = { port: server.port, ca: ca!, cert: cert!, key: key! };
  const points: Point[] = [];
  try {
    const ns = await exchange(t, 'POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: NS } }));
    if (ns.status !== 201) throw new Error(`namespace: ${ns.status} ${ns.body.slice(0, 200)}`);
    let have = 0;
    let base = NaN;
    let gcBase: AfterGc | undefined;
    for (const n of sizes) {
      const fillRate = await fill(t, have, n);
      have = n;
      let readyMs = NaN;
      if (backend !== 'memory') {
        await server.stop();
        readyMs = await server.start(t);
      }
      const get = await gets(t, n);
      const list = await listPages(t);
      const page = await pageLatency(t);
      const floor = await pageFloor(t, dataDir);
      await sleep(500);
      const rssBytes = server.rss();
      // Then the same after two full GCs: the garbage V8 has not collected yet is out of this one.
      const afterGc = await server.afterGc();
      // The fixed base: the same process, warmed by the same load, at the smallest size (its objects are
      // a rounding error beside the process); what each further object adds is measured above it.
      const first = points[0];
      if (!first) {
        base = rssBytes;
        gcBase = afterGc;
      }
      const jsonPerObject = await jsonBytesPerObject(t);
      const added = first ? n - first.n : 0;
      const p: Point = {
        backend,
        n,
        get,
        list,
        page,
        floor,
        rssBytes,
        rssPerObject: added > 0 ? (rssBytes - base) / added : NaN,
        gc:
          afterGc && gcBase
            ? {
                ...afterGc,
                rssPerObject: added > 0 ? (afterGc.rss - gcBase.rss) / added : NaN,
                heapPerObject: added > 0 ? (afterGc.heapUsed - gcBase.heapUsed) / added : NaN,
              }
            : undefined,
        jsonPerObject,
        readyMs,
        fillRate,
      };
      printPoint(p);
      points.push(p);
      record(p, points[0]!);
    }
    if (sizes.includes(watchAt)) {
      const w = await watchFromZero(t);
      process.stdout.write(
        `  ${backend}: watch from resourceVersion=0 on ${watchAt} objects: ${w.added} initial events in ${fmtMs(w.addedMs)}, bookmark at ${fmtMs(w.bookmarkMs)}\n`,
      );
      recordRow({ name: `scale ${backend} ${watchAt}: watch from 0, last initial event`, value: w.addedMs, unit: 'ms', target: 'reference' });
      recordRow({ name: `scale ${backend} ${watchAt}: watch from 0, bookmark`, value: w.bookmarkMs, unit: 'ms', target: 'reference' });
    }
  } finally {
    await server.stop();
    if (server.proc.exitCode !== 0 && server.proc.signalCode === null) process.stdout.write(`  (${backend} server exit ${server.proc.exitCode})\n`);
  }
  return points;
}

function record(p: Point, first: Point): void {
  const at = `scale ${p.backend} ${p.n}`;
  recordRow(
    p.n === first.n
      ? { name: `${at}: GET`, value: p.get.rate, unit: 'req/s', target: 'reference' }
      : { name: `${at}: GET`, value: p.get.rate, unit: 'req/s', baseline: first.get.rate, target: `≥ 90% of at ${first.n}`, atLeast: 0.9 },
  );
  recordRow({ name: `${at}: GET p99`, value: p.get.p99, unit: 'ms', target: 'reference' });
  recordRow({ name: `${at}: LIST limit=500`, value: p.list.rate, unit: 'req/s', target: 'reference' });
  recordRow({ name: `${at}: LIST limit=500 page p99`, value: p.list.p99, unit: 'ms', target: 'p99 ≤ 60 ms', atMost: 60 });
  recordRow({ name: `${at}: LIST limit=500 page p99, 1 connection`, value: p.page.p99, unit: 'ms', target: 'reference' });
  recordRow({
    name: `${at}: LIST limit=500 page p99, bare floor`,
    value: p.floor.p99,
    unit: 'ms',
    target: 'floor (no target)',
  });
  recordRow({ name: `${at}: RSS`, value: p.rssBytes, unit: 'bytes', target: 'reference' });
  // RSS ≤ 3× the objects' JSON bytes plus a fixed base (the process at the smallest size).
  if (p.n > first.n)
    recordRow({
      name: `${at}: RSS per object above base`,
      value: p.rssPerObject,
      unit: 'bytes',
      baseline: p.jsonPerObject,
      target: '≤ 3× the object’s JSON',
      atMost: 3,
    });
  // The same after two full GCs (reference rows beside the target's): what the store keeps, not V8's schedule.
  if (p.gc) {
    recordRow({ name: `${at}: RSS after full GC`, value: p.gc.rss, unit: 'bytes', target: 'reference' });
    recordRow({ name: `${at}: heap used after full GC`, value: p.gc.heapUsed, unit: 'bytes', target: 'reference' });
    if (p.n > first.n) {
      recordRow({
        name: `${at}: RSS after full GC per object above base`,
        value: p.gc.rssPerObject,
        unit: 'bytes',
        baseline: p.jsonPerObject,
        target: 'reference',
      });
      recordRow({
        name: `${at}: heap used after full GC per object above base`,
        value: p.gc.heapPerObject,
        unit: 'bytes',
        baseline: p.jsonPerObject,
        target: 'reference',
      });
    }
  }
  if (Number.isFinite(p.readyMs)) {
    recordRow(
      p.backend === 'file'
        ? { name: `${at}: restart to ready`, value: p.readyMs, unit: 'ms', target: '≤ 3 s', atMost: 3000 }
        : { name: `${at}: restart to ready`, value: p.readyMs, unit: 'ms', target: 'reference' },
    );
  }
}

async function redisReachable(): Promise<string | undefined> {
  const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true, connectTimeout: 2000, retryStrategy: () => null });
  try {
    await c.connect();
    await c.ping();
    return undefined;
  } catch (err) {
    return `Redis at ${REDIS_URL} is unreachable (${err instanceof Error ? err.message : String(err)})`;
  } finally {
    c.disconnect();
  }
}

export async function runScaleBench(): Promise<void> {
  process.stdout.write(`\n=== Scale: ConfigMaps at ${SIZES.join(', ')} (bench/scale.ts; ${CONNECTIONS} connections, ${WINDOW_MS} ms windows) ===\n`);
  const largest = SIZES.at(-1)!;
  for (const backend of (['memory', 'file'] as const).filter((b) => STORES.has(b))) {
    const dir = mkdtempSync(join(tmpdir(), `gh-scale-${backend}-`));
    try {
      await curve(backend, SIZES, [], dir, largest);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (sampleJson !== undefined) await memoryFloor(largest, sampleJson);
  if (!STORES.has('redis')) return;
  const why = await redisReachable();
  if (why) {
    process.stdout.write(`  redis: skipped: ${why}\n`);
    if (process.env['CI'] === 'true') throw new Error(why);
    return;
  }
  const prefix = `gh-scale-${process.pid}`;
  const dir = mkdtempSync(join(tmpdir(), 'gh-scale-redis-'));
  try {
    await curve('redis', [largest], [`--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`], dir, largest);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    const c = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await drop(c, prefix).catch(() => undefined);
    c.disconnect();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runScaleBench();
}
