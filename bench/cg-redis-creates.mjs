// Instructions per create in the Redis store itself: the store's
// work around the Lua call — the namespace check a create makes first
// (get(ns, 0), from the watch cache), copying and serializing the object, the
// script call through ioredis, the answer, and applying the write's own feed
// entry to the watch cache — without HTTP, authentication or handlers, so a
// figure does not drown in them, and start-up is small enough for a busy
// machine. RedisStore from the compiled build, N creates with 4 in flight,
// waiting at the end until the feed applied them all. Run under callgrind at
// two N and subtract (Redis's own work is another process, not counted):
//   for n in 500 1500; do N=$n valgrind --tool=callgrind --smc-check=all-non-file \
//     --callgrind-out-file=/dev/null node bench/cg-redis-creates.mjs; done
// DIST: the build (default ../dist; an earlier copy for before/after);
// REDIS_URL (default 127.0.0.1:6379); a fresh prefix, dropped at exit.
const dist = process.env.DIST ?? '../dist';
const { RedisStore } = await import(`${dist}/backends/core/store/redis.js`);
const { prefixPattern } = await import(`${dist}/backends/core/store/redis-keys.js`);
const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `gh-cg-store-${process.pid}`;
const store = await RedisStore.open({ url, prefix, historyWindowMs: 60_000 });
const ns = await store.create('core/namespaces/default', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
await store.waitForRev(Number(ns.metadata.resourceVersion), 60_000); // in a server the namespace is long in the cache
const cm = (i) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: `c${i}`, namespace: 'default', uid: `u-${i}`, creationTimestamp: '2026-11-27T00:00:00Z', labels: { app: 'x', tier: 'y' } },
  data: { a: 'x'.repeat(100), b: 'y', c: 'z' },
});
const N = Number(process.env.N ?? 1000);
let last = 0;
for (let i = 0; i < N; i += 4) {
  const made = await Promise.all(
    [0, 1, 2, 3].map(async (j) => {
      if (!(await store.get('core/namespaces/default', 0))) throw new Error('namespace missing');
      return store.create(`core/configmaps/default/c${i + j}`, cm(i + j));
    }),
  );
  last = Math.max(last, ...made.map((o) => Number(o.metadata.resourceVersion)));
}
await store.waitForRev(last, 60_000);
console.log('created', N, 'cache at', store.state.rev);
await store.close();
await (await import('./cg-redis-drop.mjs')).dropRedisPrefix(url, prefixPattern(prefix));
process.exit(0);
