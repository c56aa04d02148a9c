// Corrupt objects over HTTPS: a Redis value the store cannot decode answers
// 500 naming the key; with AllowUnsafeMalformedObjectDeletion a DELETE with
// ignoreStoreReadErrorWithClusterBreakingPotential=true removes it, and only
// with no other option set. (The file store cannot hold such a value; Redis is
// where one really occurs, so these tests run the server on Redis.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';
import { redisKeys } from '../../backends/core/store/redis-keys.js';

const skip = await redisSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';
const UNSAFE = 'ignoreStoreReadErrorWithClusterBreakingPotential=true';

/** A server on Redis holding a corrupt ConfigMap `broken` (with a finalizer) and a sound one `fine`. */
async function serverWithCorruptObject(gate: boolean): Promise<{ s: TestServer; cleanup(): Promise<void> }> {
  const prefix = uniquePrefix('corrupt');
  const dataDir = await mkdtemp(join(tmpdir(), 'gatehouse-corrupt-'));
  const flags = [
    '--storage-backend',
    'redis',
    '--redis-url',
    REDIS_URL,
    '--storage-prefix',
    prefix,
    ...(gate ? ['--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true'] : []),
  ];
  const first = await startTestServer({ flags, dataDir });
  await first.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'broken', finalizers: ['example.com/keep'] } });
  await first.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fine' } });
  await first.close();
  const redis = new Redis(REDIS_URL);
  try {
    const hash = `${redisKeys(prefix).objectsStem}core/configmaps/`;
    const [rev] = (await redis.hget(hash, 'core/configmaps/default/broken'))!.split(' ');
    await redis.hset(hash, 'core/configmaps/default/broken', `${rev} {"metadata":{"name":"broken"`); // truncated JSON
  } finally {
    redis.disconnect();
  }
  const s = await startTestServer({ flags, dataDir });
  return {
    s,
    cleanup: async () => {
      await s.close();
      await dropPrefix(prefix);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

describe('corrupt objects', { skip: skip ?? false }, () => {
  describe('with the gate off', () => {
    let env: Awaited<ReturnType<typeof serverWithCorruptObject>>;
    before(async () => {
      env = await serverWithCorruptObject(false);
    });
    after(async () => {
      await env.cleanup();
    });

    it('answers a read of the corrupt object with 500 naming its key', async () => {
      const r = await env.s.admin.request('GET', `${CM}/broken`);
      assert.equal(r.status, 500);
      assert.equal(r.json.reason, 'InternalError');
      assert.match(r.json.message, /StorageError: corrupt object, Code: 7, Key: core\/configmaps\/default\/broken/);
    });

    it('names the corrupt object when its collection is listed and serves the sound one', async () => {
      const l = await env.s.admin.request('GET', CM);
      assert.equal(l.status, 500);
      assert.match(l.json.message, /Key: core\/configmaps\/default\/broken/);
      assert.equal((await env.s.admin.request('GET', `${CM}/fine`)).status, 200);
    });

    it('ignores ignoreStoreReadErrorWithClusterBreakingPotential: the normal delete fails with 500', async () => {
      const r = await env.s.admin.request('DELETE', `${CM}/broken?${UNSAFE}`);
      assert.equal(r.status, 500);
      assert.match(r.json.message, /corrupt object/);
    });
  });

  describe('with AllowUnsafeMalformedObjectDeletion on', () => {
    let env: Awaited<ReturnType<typeof serverWithCorruptObject>>;
    before(async () => {
      env = await serverWithCorruptObject(true);
    });
    after(async () => {
      await env.cleanup();
    });

    it('still fails a normal delete with 500', async () => {
      assert.equal((await env.s.admin.request('DELETE', `${CM}/broken`)).status, 500);
    });

    for (const [what, body] of [
      ['dryRun', { dryRun: ['All'] }],
      ['gracePeriodSeconds', { gracePeriodSeconds: 0 }],
      ['orphanDependents', { orphanDependents: false }],
      ['preconditions', { preconditions: { uid: 'x' } }],
      ['propagationPolicy', { propagationPolicy: 'Background' }],
    ] as const) {
      it(`refuses the unsafe delete together with ${what} with 422`, async () => {
        const r = await env.s.admin.request('DELETE', `${CM}/broken`, { ignoreStoreReadErrorWithClusterBreakingPotential: true, ...body });
        assert.equal(r.status, 422, r.text);
        assert.match(r.json.message, new RegExp(`${what}: Invalid value: .*can not be set together with ignoreStoreReadErrorWithClusterBreakingPotential`));
      });
    }

    it('refuses the unsafe delete of a readable object with 422', async () => {
      const r = await env.s.admin.request('DELETE', `${CM}/fine?${UNSAFE}`);
      assert.equal(r.status, 422);
      assert.match(r.json.message, /is exclusively used to delete corrupt object\(s\), try again by removing this option/);
      assert.equal((await env.s.admin.request('GET', `${CM}/fine`)).status, 200);
    });

    it('removes the corrupt object, ignoring its finalizer, and watchers see DELETED', async () => {
      // From now: an older revision may predate this process's watch cache (every process writes leases meanwhile).
      const rv = (await env.s.admin.request('GET', `/apis/coordination.k8s.io/v1/leases`)).json.metadata.resourceVersion;
      const w = await env.s.admin.watch(`${CM}?watch=1&resourceVersion=${rv}`);
      try {
        const r = await env.s.admin.request('DELETE', `${CM}/broken?${UNSAFE}`);
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.status, 'Success');
        const ev = await w.next();
        assert.equal(ev?.type, 'DELETED');
        assert.equal(ev?.object.metadata.name, 'broken');
      } finally {
        w.stop();
      }
      assert.equal((await env.s.admin.request('GET', `${CM}/broken`)).status, 404);
      assert.equal((await env.s.admin.request('GET', CM)).status, 200, 'the collection lists again');
      assert.ok(env.s.logs.some((l) => l.includes('unsafe deletion of the corrupt object core/configmaps/default/broken')));
    });
  });
});
