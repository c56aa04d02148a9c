// A CRD update storm on two `gatehouse serve` processes sharing one Redis:
// 100 schema changes of one CRD (merge patches without a resourceVersion)
// within about a second, half through each process, racing each other. Both
// registries converge on the last generation (the schema they publish and
// enforce is the stored one), and a GET loop on another resource in each
// process is answered while that process's updates are: its reads do not wait
// for the storm's writes. Counted in the order the test saw each request sent
// and answered, never by a clock (docs/decisions/2026-11-30-storm-and-503-tests-without-time.md):
// how long a GET waits is a latency, for a bench, not asserted.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';
import { eventually } from '../helpers/eventually.js';
import { CRD_PATH, crontabCrd } from '../crd/fixtures.js';

const skip = await redisSkipReason();
type Json = Record<string, any>;
const NAME = 'crontabs.storm.example.com';
const UPDATES = 100;

/** The CRD with cronSpec at most `max` characters long: each update changes its schema (and generation). */
function stormCrd(max: number): Json {
  const crd = crontabCrd({ group: 'storm.example.com', shortNames: [] }) as Json;
  const schema = crd.spec.versions[0].schema.openAPIV3Schema;
  schema.properties.spec.properties.cronSpec.maxLength = max;
  schema.properties.spec['x-kubernetes-validations'] = [{ rule: `!has(self.image) || size(self.image) <= ${max}`, message: `image longer than ${max}` }];
  return crd;
}

/** One edge of a request, in the order the test saw them; `by` is the process (0 = a, 1 = b). */
interface Seen {
  readonly what: 'get' | 'patch';
  readonly by: number;
  readonly edge: 'sent' | 'answered';
}

function getLoop(g: Gatehouse, by: number, seen: Seen[]): { stop(): Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      seen.push({ what: 'get', by, edge: 'sent' });
      const r = await g.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      seen.push({ what: 'get', by, edge: 'answered' });
      assert.equal(r.status, 200);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
    },
  };
}

/**
 * What the storm was, from `seen`: `raced`, the updates sent while an update to the other process was unanswered
 * (`peak`, the most unanswered at once); `served[p]`, process p's GET round trips sent after its first update was
 * sent and answered before its last update was.
 */
function stormCounts(seen: readonly Seen[]): { raced: number; peak: number; served: [number, number] } {
  const open = [0, 0];
  const first = [-1, -1];
  const last = [-1, -1];
  let raced = 0;
  let peak = 0;
  seen.forEach((e, i) => {
    if (e.what !== 'patch') return;
    if (e.edge === 'answered') {
      open[e.by]!--;
      last[e.by] = i;
      return;
    }
    if (first[e.by] === -1) first[e.by] = i;
    if (open[1 - e.by]! > 0) raced++;
    open[e.by]!++;
    peak = Math.max(peak, open[0]! + open[1]!);
  });
  const served: [number, number] = [0, 0];
  const getSent = [-1, -1];
  seen.forEach((e, i) => {
    if (e.what !== 'get') return;
    if (e.edge === 'sent') getSent[e.by] = i;
    else if (getSent[e.by]! > first[e.by]! && first[e.by] !== -1 && i < last[e.by]!) served[e.by]++;
  });
  return { raced, peak, served };
}

describe('a CRD update storm on two processes sharing a store', { skip, timeout: 300_000 }, () => {
  const prefix = uniquePrefix('crdstorm');
  let a: Gatehouse;
  let b: Gatehouse;

  before(async () => {
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`, '--authorization-mode=AlwaysAllow'];
    [a, b] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    await stopAll();
    await dropPrefix(prefix);
  });

  it('converges both registries on the last of 100 racing updates in a second, other requests answered meanwhile', async (t) => {
    const created = await a.admin.request('POST', CRD_PATH, stormCrd(1));
    assert.equal(created.status, 201, created.text);
    const crs = '/apis/storm.example.com/v1/namespaces/default/crontabs';
    for (const g of [a, b]) await eventually('the CRD served', async () => (await g.admin.request('GET', crs)).status === 200, { timeoutMs: 30_000 });
    const seen: Seen[] = [];
    const loops = [getLoop(a, 0, seen), getLoop(b, 1, seen)];
    const answers: Promise<{ status: number; text: string }>[] = [];
    for (let i = 2; i < UPDATES + 2; i++) {
      const by = i % 2 ? 0 : 1;
      const patch = { spec: { versions: stormCrd(i).spec.versions } };
      seen.push({ what: 'patch', by, edge: 'sent' });
      const answer = [a, b][by]!.admin.request('PATCH', `${CRD_PATH}/${NAME}`, patch, { 'content-type': 'application/merge-patch+json' });
      answers.push(answer.finally(() => seen.push({ what: 'patch', by, edge: 'answered' })));
      await new Promise((r) => setTimeout(r, 8));
    }
    // The loops run until the end (their GETs answered 200 throughout); stopped first when an assertion fails.
    try {
      const replies = await Promise.all(answers);
      const { raced, peak, served } = stormCounts(seen);
      t.diagnostic(
        `${raced} updates sent while one to the other process was unanswered, ${peak} unanswered at most (reported; raced >= ${UPDATES / 4} asserted)`,
      );
      t.diagnostic(`GETs sent and answered within each process's updates: a ${served[0]}, b ${served[1]} (reported; each > 0 asserted)`);
      // A storm: the two processes' read-modify-writes of the CRD overlapped, a quarter of them at least.
      assert.ok(raced >= UPDATES / 4, `only ${raced} of ${UPDATES} updates were sent while one to the other process was unanswered`);
      // Each process answered reads while its own updates were in progress: none waited for the storm's writes.
      for (const [p, n] of served.entries()) assert.ok(n > 0, `process ${'ab'[p]} answered no GET sent and answered while its updates were in progress`);
      // A patch that lost every one of its tries to the others is refused as kube refuses it (409); most land.
      const statuses = replies.map((r) => (r.status === 409 && r.text.includes('the object has been modified') ? 409 : r.status));
      assert.ok(
        statuses.every((x) => x === 200 || x === 409),
        statuses.join(' '),
      );
      assert.ok(statuses.filter((x) => x === 200).length >= UPDATES / 2, statuses.join(' '));
      const stored = (await a.admin.request('GET', `${CRD_PATH}/${NAME}`)).json as Json;
      const max = stored.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.cronSpec.maxLength as number;
      assert.ok(stored.metadata.generation >= 2, `generation ${stored.metadata.generation}`);
      // Both processes publish and enforce the stored generation's schema.
      for (const g of [a, b]) {
        await eventually(
          'the last schema published',
          async () => {
            const doc = (await g.admin.request('GET', '/openapi/v3/apis/storm.example.com/v1')).json as Json;
            return doc?.components?.schemas?.['com.example.storm.v1.CronTab']?.properties?.spec?.properties?.cronSpec?.maxLength === max;
          },
          { timeoutMs: 30_000 },
        );
        const long = await g.admin.request('POST', crs, {
          apiVersion: 'storm.example.com/v1',
          kind: 'CronTab',
          metadata: { name: 'x' },
          spec: { image: 'i'.repeat(max + 1) },
        });
        assert.equal(long.status, 422, long.text.slice(0, 300));
        assert.match((long.json as Json).message, new RegExp(`image longer than ${max}`));
      }
    } finally {
      await Promise.all(loops.map((l) => l.stop()));
    }
  });
});
