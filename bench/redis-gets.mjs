// CPU per consistent GET on the Redis store, in one process, without HTTP:
// the store's own cost of a `resourceVersion=""` read (the watch cache plus
// its share of a revision check, redis-readindex.ts), for A/B figures below
// the end-to-end rows' noise. 32 GETs in flight on one object, each followed
// by a turn of the event loop, as reads from many connections arrive. Prints
// the process CPU per GET of 5 rounds (user and system split for the last)
// and how many GETs shared a revision check.
// Knobs: DIST (a build, default ../dist; an earlier copy of dist for an A/B),
// N (GETs per round, 100000), MEM=1 (the memory store instead: the floor),
// REDIS_URL.
const dist = process.env.DIST ?? '../dist';
const { RedisStore } = await import(`${dist}/backends/core/store/redis.js`);
const { MemoryStore } = await import(`${dist}/backends/core/store/memory.js`);
const { Redis } = await import('ioredis');
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `gh-bench-gets-${process.pid}`;
const store = process.env.MEM ? new MemoryStore({ historyWindowMs: 60_000 }) : await RedisStore.open({ url, prefix, historyWindowMs: 60_000 });
const key = 'core/configmaps/bench/c1';
await store.create(key, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', namespace: 'bench' }, data: { a: 'b' } });
const N = Number(process.env.N ?? 100_000);
const checks = () => (process.env.MEM ? 0 : store.readStats().checks);

async function run(n) {
  let left = n;
  const worker = async () => {
    while (left-- > 0) {
      await store.get(key);
      await new Promise(setImmediate);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

try {
  await run(20_000);
  const perGet = [];
  let last;
  for (let r = 0; r < 5; r++) {
    const c0 = process.cpuUsage();
    const k0 = checks();
    await run(N);
    last = { cpu: process.cpuUsage(c0), checks: checks() - k0 };
    perGet.push((last.cpu.user + last.cpu.system) / N);
  }
  const median = [...perGet].sort((a, b) => a - b)[2];
  console.log(`${process.env.MEM ? 'memory' : 'redis'} store: µs CPU per GET ${perGet.map((x) => x.toFixed(2)).join(' ')}, median ${median.toFixed(2)}`);
  console.log(
    `  last round: user ${(last.cpu.user / N).toFixed(2)} system ${(last.cpu.system / N).toFixed(2)} µs per GET${last.checks ? `, ${(N / last.checks).toFixed(1)} GETs per revision check` : ''}`,
  );
} finally {
  await store.close?.();
  if (!process.env.MEM) {
    const raw = new Redis(url);
    const keys = await raw.keys(`${prefix}*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
  }
}
