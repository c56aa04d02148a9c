// The two size bounds of a write, as kube-apiserver answers them, on the
// memory, file and (when reachable) Redis stores: a request body over 3 MiB
// is 413 before anything is read into an object; an object whose stored form
// is over etcd's 1.5 MiB request limit is kube's 500 "etcdserver: request is
// too large" — for create, update, merge patch and server-side apply — and
// nothing of it is stored.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { dropPrefix, REDIS_URL, redisSkipReason, uniquePrefix } from './fixtures/redis-env.js';

const ROLES = '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles';
const MERGE = { 'content-type': 'application/merge-patch+json' };
const APPLY = { 'content-type': 'application/apply-patch+yaml' };
const ETCD_TOO_LARGE = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'etcdserver: request is too large', code: 500 };

/** A Role whose one resource name is `n` characters: its stored JSON is n plus some 400 bytes. */
function role(name: string, n: number): object {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['x'.repeat(n)] }],
  };
}

const OVER_STORED = 1_600_000; // over 1 572 864 stored, under 3 145 728 sent
const UNDER_STORED = 1_500_000;
const OVER_BODY = 3_200_000;

function suite(backend: 'memory' | 'file' | 'redis'): void {
  describe(`object size bounds on the ${backend} store`, () => {
    let s: TestServer;
    let prefix = '';
    let skip: string | undefined;
    before(async () => {
      if (backend === 'redis') skip = await redisSkipReason();
      if (skip) return;
      const flags =
        backend === 'redis'
          ? ['--storage-backend=redis', '--redis-url', REDIS_URL, '--storage-prefix', (prefix = uniquePrefix('size'))]
          : [`--storage-backend=${backend}`];
      s = await startTestServer({ flags });
    });
    after(async () => {
      await s?.close();
      if (prefix) await dropPrefix(prefix);
    });

    it('stores an object under the bound and refuses every write over it with etcd’s 500, storing nothing', async (t) => {
      if (skip) return t.skip(skip);
      const made = await s.admin.request('POST', ROLES, role('kept', UNDER_STORED));
      assert.equal(made.status, 201, made.text.slice(0, 300));
      const rv = made.json.metadata.resourceVersion;

      const create = await s.admin.request('POST', ROLES, role('big', OVER_STORED));
      assert.equal(create.status, 500);
      assert.deepEqual(create.json, ETCD_TOO_LARGE);
      assert.equal((await s.admin.request('GET', `${ROLES}/big`)).status, 404);

      const put = await s.admin.request('PUT', `${ROLES}/kept`, role('kept', OVER_STORED));
      assert.deepEqual([put.status, put.json], [500, ETCD_TOO_LARGE]);
      const patch = await s.admin.request(
        'PATCH',
        `${ROLES}/kept`,
        { rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'], resourceNames: ['y'.repeat(OVER_STORED)] }] },
        MERGE,
      );
      assert.deepEqual([patch.status, patch.json], [500, ETCD_TOO_LARGE]);
      const apply = await s.admin.request('PATCH', `${ROLES}/applied?fieldManager=t`, role('applied', OVER_STORED), APPLY);
      assert.deepEqual([apply.status, apply.json], [500, ETCD_TOO_LARGE]);
      const applyOver = await s.admin.request('PATCH', `${ROLES}/kept?fieldManager=t&force=true`, role('kept', OVER_STORED), APPLY);
      assert.deepEqual([applyOver.status, applyOver.json], [500, ETCD_TOO_LARGE]);

      const live = await s.admin.request('GET', `${ROLES}/kept`);
      assert.equal(live.json.metadata.resourceVersion, rv, 'the stored object is the one created');
      assert.equal(live.json.rules[0].resourceNames[0].length, UNDER_STORED);
      assert.equal((await s.admin.request('GET', `${ROLES}/applied`)).status, 404);
      const list = await s.admin.request('GET', ROLES);
      assert.deepEqual(
        list.json.items.map((r: { metadata: { name: string } }) => r.metadata.name),
        ['kept'],
      );
    });

    it('refuses a body over 3 MiB with 413 on every verb', async (t) => {
      if (skip) return t.skip(skip);
      const tooLarge = {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'Request entity too large: limit is 3145728',
        reason: 'RequestEntityTooLarge',
        details: {},
        code: 413,
      };
      const answers = [
        await s.admin.request('POST', ROLES, role('huge', OVER_BODY)),
        await s.admin.request('PUT', `${ROLES}/kept`, role('kept', OVER_BODY)),
        await s.admin.request('PATCH', `${ROLES}/kept`, { rules: [{ resourceNames: ['z'.repeat(OVER_BODY)] }] }, MERGE),
        await s.admin.request('PATCH', `${ROLES}/huge?fieldManager=t`, role('huge', OVER_BODY), APPLY),
      ];
      for (const r of answers) assert.deepEqual([r.status, r.json], [413, tooLarge]);
      assert.equal((await s.admin.request('GET', `${ROLES}/huge`)).status, 404);
    });
  });
}

suite('memory');
suite('file');
suite('redis');
