// Three `gatehouse serve` processes on one Redis (one prefix): what one
// process acknowledges, the others serve — creates, conflicts, deletes,
// watches, paged lists and a finalizer flow.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';

const skip = await redisSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';

const cm = (name: string, data: Record<string, string> = {}, extra: Record<string, unknown> = {}): unknown => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...extra },
  data,
});

describe('several processes on one redis', { skip }, () => {
  const prefix = uniquePrefix('multi');
  let a: Gatehouse;
  let b: Gatehouse;
  let c: Gatehouse;

  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`, '--authorization-mode=AlwaysAllow'];
    [a, b, c] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('serves from every process what one process created, and refuses a second create', async () => {
    const created = await a.admin.request('POST', CM, cm('one', { k: 'v' }));
    assert.equal(created.status, 201, created.text);
    const read = await b.admin.request('GET', `${CM}/one`);
    assert.equal(read.status, 200);
    assert.equal(read.json.metadata.resourceVersion, created.json.metadata.resourceVersion);
    assert.deepEqual(read.json.data, { k: 'v' });
    const again = await c.admin.request('POST', CM, cm('one'));
    assert.equal(again.status, 409);
    assert.equal(again.json.reason, 'AlreadyExists');
  });

  it('lets exactly one of two processes win an update from the same resourceVersion', async () => {
    const created = await a.admin.request('POST', CM, cm('race', { n: '0' }));
    const rv = created.json.metadata.resourceVersion as string;
    const [rb, rc] = await Promise.all([
      b.admin.request('PUT', `${CM}/race`, cm('race', { n: 'b' }, { resourceVersion: rv })),
      c.admin.request('PUT', `${CM}/race`, cm('race', { n: 'c' }, { resourceVersion: rv })),
    ]);
    const statuses = [rb.status, rc.status].sort();
    assert.deepEqual(statuses, [200, 409]);
    const loser = rb.status === 409 ? rb : rc;
    const winner = rb.status === 200 ? rb : rc;
    assert.equal(loser.json.reason, 'Conflict');
    const now = await a.admin.request('GET', `${CM}/race`);
    assert.deepEqual(now.json.data, winner.json.data, 'the winner is what every process serves; nothing is lost');
  });

  it('delivers writes made through two processes to a watch on a third, in order', async () => {
    const list = await c.admin.request('GET', CM);
    const from = list.json.metadata.resourceVersion as string;
    const w = await c.admin.watch(`${CM}?watch=1&resourceVersion=${from}`);
    try {
      await a.admin.request('POST', CM, cm('w1'));
      await b.admin.request('POST', CM, cm('w2'));
      await a.admin.request('DELETE', `${CM}/w1`);
      const evs = await w.take(3, 10_000);
      assert.deepEqual(
        evs.map((e) => `${e.type} ${e.object.metadata.name}`),
        ['ADDED w1', 'ADDED w2', 'DELETED w1'],
      );
      const revs = evs.map((e) => Number(e.object.metadata.resourceVersion));
      assert.ok(revs[0]! < revs[1]! && revs[1]! < revs[2]!);
    } finally {
      w.stop();
    }
  });

  it('pages one consistent list across processes while writes happen between pages', async () => {
    for (let i = 0; i < 9; i++) await [a, b, c][i % 3]!.admin.request('POST', CM, cm(`page-${i}`));
    const sel = 'fieldSelector=' + encodeURIComponent('metadata.name!=none');
    const p1 = await a.admin.request('GET', `${CM}?limit=4&${sel}`);
    assert.equal(p1.status, 200, p1.text);
    await b.admin.request('DELETE', `${CM}/page-5`);
    await c.admin.request('POST', CM, cm('page-55'));
    const p2 = await b.admin.request('GET', `${CM}?limit=4&${sel}&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    assert.equal(p2.status, 200, p2.text);
    const p3 = await c.admin.request('GET', `${CM}?limit=100&${sel}&continue=${encodeURIComponent(p2.json.metadata.continue)}`);
    assert.equal(p3.status, 200, p3.text);
    assert.equal(p3.json.metadata.continue ?? '', '');
    const names = [...p1.json.items, ...p2.json.items, ...p3.json.items].map((o: { metadata: { name: string } }) => o.metadata.name);
    const pages = names.filter((n) => n.startsWith('page-'));
    assert.deepEqual(
      pages,
      Array.from({ length: 9 }, (_, i) => `page-${i}`),
      'the snapshot of the first page: page-5 still there, page-55 not yet',
    );
    assert.equal(new Set(names).size, names.length);
  });

  it('runs a finalizer flow across processes: delete marks, removing the finalizer deletes', async () => {
    const created = await a.admin.request('POST', CM, cm('fin', {}, { finalizers: ['example.com/hold'] }));
    assert.equal(created.status, 201, created.text);
    const w = await a.admin.watch(`${CM}?watch=1&resourceVersion=${created.json.metadata.resourceVersion}&fieldSelector=metadata.name%3Dfin`);
    try {
      const del = await b.admin.request('DELETE', `${CM}/fin`);
      assert.ok(del.status === 200 || del.status === 202, del.text);
      const marked = await c.admin.request('GET', `${CM}/fin`);
      assert.equal(marked.status, 200);
      assert.ok(marked.json.metadata.deletionTimestamp, 'marked for deletion');
      const released = await c.admin.request('PUT', `${CM}/fin`, { ...marked.json, metadata: { ...marked.json.metadata, finalizers: [] } });
      assert.equal(released.status, 200, released.text);
      assert.equal((await a.admin.request('GET', `${CM}/fin`)).status, 404);
      assert.equal((await b.admin.request('GET', `${CM}/fin`)).status, 404);
      const evs = await w.take(2, 10_000);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['MODIFIED', 'DELETED'],
      );
    } finally {
      w.stop();
    }
  });
});
