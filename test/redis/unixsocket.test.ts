// --redis-url unix://…: a private redis-server listening on a Unix socket
// (and on loopback TCP, which only the test uses to look inside it), with an
// ACL user and a database other than 0 named in the URL.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisStore } from '../../backends/core/store/redis.js';
import { Collector, pod, rv } from '../store/helpers.js';
import { uniquePrefix } from '../store/fixtures/redis-env.js';
import { startGatehouse, stopAll } from '../e2e/helpers.js';
import { RedisServer, redisServerSkipReason } from './redis-server.js';

const skip = await redisServerSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';

describe('redis store on a Unix socket (unix://)', { skip }, () => {
  let server: RedisServer | undefined;
  let socket = '';
  let dir = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gh-redis-unix-'));
    socket = join(dir, 'redis.sock');
    server = await RedisServer.start(['--unixsocket', socket, '--unixsocketperm', '700', '--user', 'gh', 'on', '>s3cret', '~*', '&*', '+@all']);
  });

  after(async () => {
    await stopAll();
    await server?.destroy();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Keys under a prefix in one database, read over TCP. */
  async function keysIn(db: number, prefix: string): Promise<string[]> {
    const c = new Redis(server!.url, { db, maxRetriesPerRequest: 0 });
    try {
      return await c.keys(`*${prefix}*`);
    } finally {
      c.disconnect();
    }
  }

  it("writes, reads and watches through the socket, as the URL's user, in the URL's database", async () => {
    const prefix = uniquePrefix('unix');
    const store = await RedisStore.open({ url: `unix://gh:s3cret@${socket}?db=3`, prefix, historyWindowMs: 60_000 });
    try {
      const w = new Collector();
      const watcher = store.watch('core/pods/', await store.currentRev(), w);
      const x = await store.create('core/pods/a/x', pod('a', 'x'));
      assert.equal(rv(await store.get('core/pods/a/x')), rv(x));
      assert.deepEqual(
        (await store.list('core/pods/')).items.map((o) => o.metadata.name),
        ['x'],
      );
      assert.equal((await w.waitFor(1))[0]!.key, 'core/pods/a/x');
      watcher.stop();
      assert.ok((await keysIn(3, prefix)).length > 0, 'the keys are in database 3');
      assert.deepEqual(await keysIn(0, prefix), [], 'and not in database 0');
    } finally {
      await store.close();
    }
  });

  it('refuses a wrong password on the socket as unreachable, naming the URL without it', async () => {
    await assert.rejects(RedisStore.open({ url: `unix://gh:wrong@${socket}`, prefix: uniquePrefix('unix'), historyWindowMs: 60_000 }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, /unix:\/\/\*\*\*@/);
      assert.doesNotMatch(err.message, /wrong/);
      return true;
    });
  });

  it('serves kubectl-style requests through `gatehouse serve --redis-url unix://…`', async () => {
    const prefix = uniquePrefix('unixgh');
    const gh = await startGatehouse({ flags: ['--storage-backend=redis', `--redis-url=unix://gh:s3cret@${socket}?db=5`, `--storage-prefix=${prefix}`] });
    const created = await gh.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'over-unix' }, data: { a: '1' } });
    assert.equal(created.status, 201, created.text);
    const got = await gh.admin.request('GET', `${CM}/over-unix`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.data.a, '1');
    assert.ok((await keysIn(5, prefix)).length > 0, 'the server stored into database 5');
  });
});
