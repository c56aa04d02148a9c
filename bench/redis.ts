// Redis store figures, beside the physical limit of the design: the raw rate
// of the same Lua write script called directly with ioredis, creates/updates
// through RedisStore, consistent GETs, watch delivery across two stores
// (commit → sink of the other process's cache), and Redis memory (keys and
// bytes) after N updates of the same objects once history is compacted.
//
// Entry: runRedisBench(opts) → RedisBenchFigures; `node --import tsx bench/redis.ts` prints them.
// Uses REDIS_URL (default redis://127.0.0.1:6379) under a fresh prefix it deletes afterwards.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { RedisStore } from '../backends/core/store/redis.js';
import { runWrite } from '../backends/core/store/redis-scripts.js';
import { isPrefixKey, prefixPattern, redisKeys } from '../backends/core/store/redis-keys.js';
import type { KObject } from '../lib/api/meta.js';

export interface RedisBenchOptions {
  url?: string;
  /** Operations per measurement (default 20000). */
  ops?: number;
  /** Concurrent callers (default 64). */
  concurrency?: number;
}

export interface RedisBenchFigures {
  rawScriptPerSec: number;
  createsPerSec: number;
  updatesPerSec: number;
  consistentGetsPerSec: number;
  watchDelivery: { p50Ms: number; p99Ms: number; events: number };
  memory: { objects: number; updates: number; keys: number; bytes: number; bytesBeforeCompaction: number };
  appendfsync: string;
}

const cm = (i: number, n = 0): KObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `c${i}`, namespace: 'bench', labels: { app: 'bench' } },
  data: { 'app.properties': 'greeting=hello\nlog.level=info\n', n: String(n) },
});

async function rate(ops: number, concurrency: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < ops) await fn(next++);
    }),
  );
  return Math.round((ops / (performance.now() - t0)) * 1000);
}

/** Keys and bytes (MEMORY USAGE) under a store prefix. */
export async function footprint(client: Redis, prefix: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', prefixPattern(prefix), 'COUNT', 1000);
    cursor = next;
    for (const k of batch.filter((x) => isPrefixKey(prefix, x))) {
      keys++;
      const n = Number((await client.memory('USAGE', k, 'SAMPLES', 0)) ?? 0);
      if (process.env['BENCH_DEBUG']) console.log(k, n);
      bytes += n;
    }
  } while (cursor !== '0');
  return { keys, bytes };
}

/** Deletes every key under a store prefix. */
export async function drop(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = await client.scan(cursor, 'MATCH', prefixPattern(prefix), 'COUNT', 1000);
    cursor = next;
    const mine = batch.filter((k) => isPrefixKey(prefix, k));
    if (mine.length > 0) await client.del(...mine);
  } while (cursor !== '0');
}

/** The physical limit: the write script called directly with ioredis (creates of distinct keys), under a scratch prefix it deletes. */
export async function rawScriptRate(url: string, ops: number, concurrency: number): Promise<number> {
  const raw = new Redis(url);
  const prefix = `gh-bench-raw-${randomBytes(4).toString('hex')}`;
  try {
    const keys = redisKeys(prefix);
    const json = JSON.stringify(cm(0));
    return await rate(ops, concurrency, (i) => runWrite(raw, keys, 'core/configmaps/', 'c', `core/configmaps/bench/r${i}`, json, undefined, Date.now()));
  } finally {
    await drop(raw, prefix);
    raw.disconnect();
  }
}

export async function runRedisBench(opts: RedisBenchOptions = {}): Promise<RedisBenchFigures> {
  const url = opts.url ?? process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const ops = opts.ops ?? 20_000;
  const conc = opts.concurrency ?? 64;
  const prefix = `gh-bench-${randomBytes(4).toString('hex')}`;
  const raw = new Redis(url);
  const now = { t: Date.now() };
  const clock = (): number => now.t;
  try {
    const appendfsync = ((await raw.config('GET', 'appendfsync')) as string[])[1] ?? '?';
    const appendonly = ((await raw.config('GET', 'appendonly')) as string[])[1] ?? '?';

    // 1. The physical limit: the write script, called directly (creates of distinct keys).
    const rawScriptPerSec = await rawScriptRate(url, ops, conc);

    // 2. Through the store: creates, updates, consistent gets; a second store watches.
    const a = await RedisStore.open({ url, prefix, historyWindowMs: 60_000, clock, compactIntervalMs: 3_600_000 });
    const b = await RedisStore.open({ url, prefix, historyWindowMs: 60_000, clock, compactIntervalMs: 3_600_000 });
    const sent = new Map<string, number>();
    const delays: number[] = [];
    const watcher = b.watch('core/configmaps/', await b.currentRev(), {
      event: (ev) => {
        const t = ev.type === 'ADDED' ? sent.get(ev.key) : undefined;
        if (t !== undefined) delays.push(performance.now() - t);
      },
      error: () => undefined,
    });
    const objects = 100;
    const createsPerSec = await rate(ops, conc, async (i) => {
      const key = `core/configmaps/bench/c${i}`;
      sent.set(key, performance.now());
      await a.create(key, cm(i));
    });
    const updatesPerSec = await rate(ops, conc, (i) => a.update(`core/configmaps/bench/c${i % objects}`, cm(i % objects, i)));
    const consistentGetsPerSec = await rate(ops, conc, (i) => b.get(`core/configmaps/bench/c${i % objects}`));
    watcher.stop();
    delays.sort((x, y) => x - y);
    const pct = (p: number): number => Math.round((delays[Math.min(delays.length - 1, Math.floor(delays.length * p))] ?? NaN) * 100) / 100;

    // 3. Memory after N updates of the same objects, before and after history compaction.
    for (let i = objects; i < ops; i++) await a.delete(`core/configmaps/bench/c${i}`);
    const before = await footprint(raw, prefix);
    now.t += 120_000; // the window has passed
    await a.update('core/configmaps/bench/c0', cm(0));
    while ((await a.compact()) > 0); // one pass trims at most 32k entries
    const after = await footprint(raw, prefix);
    await a.close();
    await b.close();
    return {
      rawScriptPerSec,
      createsPerSec,
      updatesPerSec,
      consistentGetsPerSec,
      watchDelivery: { p50Ms: pct(0.5), p99Ms: pct(0.99), events: delays.length },
      memory: { objects, updates: ops, keys: after.keys, bytes: after.bytes, bytesBeforeCompaction: before.bytes },
      appendfsync: appendonly === 'yes' ? `appendonly yes, appendfsync ${appendfsync}` : 'appendonly no',
    };
  } finally {
    await drop(raw, prefix);
    raw.disconnect();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const f = await runRedisBench();
  console.log(JSON.stringify(f, null, 2));
  console.log(`creates / raw script: ${((f.createsPerSec / f.rawScriptPerSec) * 100).toFixed(0)}%`);
}
