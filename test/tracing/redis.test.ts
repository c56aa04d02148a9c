// Redis commands as spans (--tracing-config-file with --storage-backend=redis,
// against the Redis on 127.0.0.1:6379): each command a recorded request's
// store call sends is a CLIENT span named for the command, a child of the
// store span, with db.system=redis and db.operation; spans read back from a
// real OTLP/HTTP receiver. Without tracing the client is not wrapped at all.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { RedisStore } from '../../backends/core/store/redis.js';
import { dropPrefix, REDIS_URL, uniquePrefix } from '../store/fixtures/redis-env.js';
import { startOtlpReceiver, traceSpans, type OtlpReceiver } from './receiver.js';

const SERVER = 2;
const CLIENT = 3;

describe('Redis commands as spans', { timeout: 120_000 }, () => {
  let dir: string;
  let rx: OtlpReceiver;
  let s: TestServer;
  const storage = process.env['GATEHOUSE_TEST_STORAGE'];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-redis-'));
    rx = await startOtlpReceiver();
    await writeFile(
      join(dir, 'tracing.yaml'),
      `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${rx.hostPort}\nsamplingRatePerMillion: 1000000\n`,
    );
    // The test server's Redis store (a prefix of its own, dropped at close).
    process.env['GATEHOUSE_TEST_STORAGE'] = 'redis';
    s = await startTestServer({ flags: [`--tracing-config-file=${join(dir, 'tracing.yaml')}`], hooks: { tracingBatchDelayMs: 20 } });
  });

  after(async () => {
    await s?.close();
    if (storage === undefined) delete process.env['GATEHOUSE_TEST_STORAGE'];
    else process.env['GATEHOUSE_TEST_STORAGE'] = storage;
    await rx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("a write's script is a span under the store span, with db.system, db.operation and the server", async () => {
    const traceId = randomBytes(16).toString('hex');
    const r = await s.admin.request(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'traced-redis' } },
      { traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
    );
    assert.equal(r.status, 201, r.text);
    const spans = await traceSpans(rx, '/v1/traces', traceId, (x) => x.some((y) => y.kind === SERVER) && x.some((y) => y.attributes['db.system'] === 'redis'));
    const srv = spans.find((x) => x.kind === SERVER)!;
    const create = spans.find((x) => x.name === 'Create redis');
    assert.ok(create, JSON.stringify(spans.map((x) => x.name)));
    assert.equal(create.parentSpanId, srv.spanId);
    const commands = spans.filter((x) => x.attributes['db.system'] === 'redis');
    const script = commands.find((x) => x.parentSpanId === create.spanId);
    assert.ok(script, `a command under Create redis: ${JSON.stringify(commands.map((x) => [x.name, x.parentSpanId]))}`);
    assert.match(script.name, /^EVAL(SHA)?$/);
    assert.equal(script.attributes['db.operation'], script.name);
    assert.equal(script.kind, CLIENT);
    assert.equal(script.attributes['server.address'], '127.0.0.1');
    assert.equal(script.attributes['server.port'], 6379);
    assert.equal(typeof script.attributes['db.redis.database_index'], 'number');
    // Every command span hangs under a store span, never straight under the request.
    const storeSpans = new Set(spans.filter((x) => / redis$/.test(x.name)).map((x) => x.spanId));
    for (const c of commands) assert.ok(storeSpans.has(c.parentSpanId), `${c.name} under ${c.parentSpanId}`);
    // No arguments (object contents) are recorded.
    for (const c of commands)
      assert.deepEqual(
        Object.keys(c.attributes).filter((k) => /statement|args/.test(k)),
        [],
      );
  });

  it('without tracing the client is the plain ioredis client (no wrapper); with it, its command methods are its own', async () => {
    const prefix = uniquePrefix('traced');
    const plain = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000 });
    const traced = await RedisStore.open({ url: REDIS_URL, prefix, historyWindowMs: 60_000, traceCommands: true });
    try {
      const clientOf = (st: RedisStore) => (st as unknown as { client: object }).client;
      assert.equal(Object.hasOwn(clientOf(plain), 'evalsha'), false);
      assert.equal(Object.hasOwn(clientOf(traced), 'evalsha'), true);
      assert.equal(Object.hasOwn(clientOf(traced), 'get'), true);
    } finally {
      await plain.close();
      await traced.close();
      await dropPrefix(prefix);
    }
  });
});
