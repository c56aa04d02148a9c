// Two `gatehouse serve` processes on one private Redis Cluster (3 masters, no
// replicas): the CRD store is one type and custom resources are others, each
// in its own hash slot, so what test/crd/redis.test.ts checks on one Redis is
// checked again where types live on different shards — a CRD written through
// one process is Established and served by the other, its objects are read and
// watched across processes, its CEL rules hold in both, and its deletion takes
// the objects and the type away from both. The Redis servers are stopped by pid.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { Redis } from 'ioredis';
import { isPrefixKey, prefixPattern } from '../../backends/core/store/redis-keys.js';
import { uniquePrefix } from '../store/fixtures/redis-env.js';
import { RedisCluster, redisCliSkipReason, redisServerSkipReason } from '../redis/redis-server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';
import { until } from '../gc/helpers.js';

const skip = (await redisServerSkipReason()) ?? redisCliSkipReason();
const NAME = 'crontabs.stable.example.com';
const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs';
// Generous: a CI run may share this machine.
const WAIT = 20_000;

/** The CronTab CRD with a CEL rule on spec, so both processes must compile and enforce it. */
function ruledCrd(): Record<string, unknown> {
  const crd = crontabCrd() as Record<string, any>;
  crd.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
    { rule: '!has(self.replicas) || self.replicas >= 0', message: 'replicas must not be negative' },
  ];
  return crd;
}

/** How many of the cluster's masters hold keys of the prefix. */
async function shardsUsed(cluster: RedisCluster, prefix: string): Promise<number> {
  let used = 0;
  for (const n of cluster.nodes) {
    const c = new Redis(n.url, { maxRetriesPerRequest: 1 });
    try {
      let cursor = '0';
      let found = false;
      do {
        const [next, keys] = await c.scan(cursor, 'MATCH', prefixPattern(prefix), 'COUNT', 1000);
        cursor = next;
        found ||= keys.some((k) => isPrefixKey(prefix, k));
      } while (cursor !== '0' && !found);
      if (found) used++;
    } finally {
      c.disconnect();
    }
  }
  return used;
}

describe('custom resources across two processes on one redis cluster', { skip }, () => {
  let cluster: RedisCluster | undefined;
  const prefix = uniquePrefix('crdcluster');
  let a: Gatehouse;
  let b: Gatehouse;

  before(async () => {
    cluster = await RedisCluster.start(3);
    // Several seeds in --redis-url make it a cluster URL (backends/core/store/redis-connect.ts).
    const flags = ['--storage-backend=redis', `--redis-url=${cluster.url}`, `--storage-prefix=${prefix}`];
    [a, b] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    // Gatehouse first, so that no process sees its Redis vanish while serving.
    await stopAll();
    await cluster?.destroy();
  });

  it('serves through process b a CRD created through process a: Established, in discovery, every verb', async (t) => {
    assert.equal((await b.admin.request('GET', CT)).status, 404);
    const created = await a.admin.request('POST', CRD_PATH, ruledCrd());
    assert.equal(created.status, 201, created.text);
    const t0 = Date.now();
    const crd = await until(
      'b reads the CRD Established and serves crontabs',
      async () => {
        try {
          return await waitEstablished(b, NAME, CT);
        } catch {
          return undefined; // waitEstablished's own bound is shorter than WAIT
        }
      },
      WAIT,
    );
    t.diagnostic(`b served crontabs ${Date.now() - t0} ms after a created the CRD (reported, not asserted)`);
    assert.equal(crd.status.acceptedNames.kind, 'CronTab');

    const group = await b.admin.request('GET', '/apis/stable.example.com/v1');
    assert.equal(group.status, 200, group.text);
    const res = group.json.resources.find((r: { name: string }) => r.name === 'crontabs');
    assert.ok(res, group.text);
    assert.equal(res.kind, 'CronTab');
    assert.deepEqual(res.shortNames, ['ct']);
    assert.ok(group.json.resources.some((r: { name: string }) => r.name === 'crontabs/scale'));
    const apis = await b.admin.request('GET', '/apis');
    assert.ok(
      apis.json.groups.some((g: { name: string }) => g.name === 'stable.example.com'),
      apis.text,
    );

    const c = await b.admin.request('POST', CT, crontab('from-b', { image: 'i', replicas: 1 }));
    assert.equal(c.status, 201, c.text);
    const got = await b.admin.request('GET', `${CT}/from-b`);
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.spec.image, 'i');
    assert.equal(got.json.metadata.uid, c.json.metadata.uid);
    const list = await b.admin.request('GET', CT);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.items.map((o: { metadata: { name: string } }) => o.metadata.name),
      ['from-b'],
    );
    // …and process a reads what b wrote.
    await until('a serving crontabs', async () => ((await a.admin.request('GET', CT)).status === 200 ? true : undefined), WAIT);
    assert.equal((await a.admin.request('GET', `${CT}/from-b`)).json.metadata.uid, c.json.metadata.uid);
    // The premise: the processes' types really are spread over the cluster's shards.
    assert.ok((await shardsUsed(cluster!, prefix)) >= 2, 'keys of the prefix on at least two masters');
  });

  it('shows on a watch through b a custom resource created and changed through a', async () => {
    const from = (await b.admin.request('GET', CT)).json.metadata.resourceVersion as string;
    const w = await b.admin.watch(`${CT}?watch=1&resourceVersion=${from}`);
    try {
      assert.equal(w.status, 200);
      const c = await a.admin.request('POST', CT, crontab('from-a', { image: 'j', replicas: 1 }));
      assert.equal(c.status, 201, c.text);
      const s = await a.admin.request('PATCH', `${CT}/from-a/scale`, { spec: { replicas: 4 } }, { 'content-type': 'application/merge-patch+json' });
      assert.equal(s.status, 200, s.text);
      const evs = await w.take(2, WAIT);
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.spec.replicas}`),
        ['ADDED from-a 1', 'MODIFIED from-a 4'],
      );
      assert.equal(evs[1]!.object.metadata.resourceVersion, s.json.metadata.resourceVersion);
    } finally {
      w.stop();
    }
  });

  it("refuses through b a custom resource breaking the CRD's CEL rule (422 naming the field), storing nothing", async () => {
    const bad = await b.admin.request('POST', CT, crontab('neg', { image: 'n', replicas: -1 }));
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.reason, 'Invalid');
    assert.deepEqual(
      bad.json.details.causes.map((c: { field: string; message: string }) => [c.field, c.message]),
      [['spec', 'Invalid value: "object": replicas must not be negative']],
    );
    assert.equal((await b.admin.request('GET', `${CT}/neg`)).status, 404);
    assert.equal((await a.admin.request('GET', `${CT}/neg`)).status, 404);
    // An update through b that breaks it is refused too, and the object is left as it was.
    const upd = await b.admin.request('PATCH', `${CT}/from-a`, { spec: { replicas: -2 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(upd.status, 422, upd.text);
    assert.equal((await a.admin.request('GET', `${CT}/from-a`)).json.spec.replicas, 4);
  });

  it('deletes through a the CRD with its objects: b sees them go and stops serving the type (404)', async () => {
    const from = (await b.admin.request('GET', CT)).json.metadata.resourceVersion as string;
    const w = await b.admin.watch(`${CT}?watch=1&resourceVersion=${from}`);
    try {
      const d = await a.admin.request('DELETE', `${CRD_PATH}/${NAME}`);
      assert.equal(d.status, 200, d.text);
      assert.deepEqual(d.json.metadata.finalizers, ['customresourcecleanup.apiextensions.k8s.io']);
      // The cleanup deletes each object: b's watch sees both go, whichever process ran it.
      const gone = new Set<string>();
      while (gone.size < 2) {
        const ev = await w.next(WAIT);
        assert.ok(ev, `watch ended or stalled after DELETED ${[...gone].join(', ')}`);
        assert.equal(ev.type, 'DELETED', JSON.stringify(ev));
        gone.add(ev.object.metadata.name);
      }
      assert.deepEqual([...gone].sort(), ['from-a', 'from-b']);
    } finally {
      w.stop();
    }
    await until('the CRD gone', async () => ((await b.admin.request('GET', `${CRD_PATH}/${NAME}`)).status === 404 ? true : undefined), WAIT);
    for (const p of [b, a]) await until('crontabs unserved', async () => ((await p.admin.request('GET', CT)).status === 404 ? true : undefined), WAIT);
    const apis = await b.admin.request('GET', '/apis');
    assert.ok(!apis.json.groups.some((g: { name: string }) => g.name === 'stable.example.com'), apis.text);
    assert.equal((await b.admin.request('GET', '/apis/stable.example.com/v1')).status, 404);

    // The objects left the store, not only the served API: the same CRD made again through b lists none.
    assert.equal((await b.admin.request('POST', CRD_PATH, ruledCrd())).status, 201);
    await until('a serving crontabs again', async () => ((await a.admin.request('GET', CT)).status === 200 ? true : undefined), WAIT);
    assert.deepEqual((await a.admin.request('GET', CT)).json.items, []);
  });
});
