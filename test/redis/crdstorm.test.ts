// A CRD update storm on two `gatehouse serve` processes sharing one Redis:
// 100 schema changes of one CRD (merge patches without a resourceVersion)
// within about a second, half through each process. Both registries converge on the last generation (the schema they
// publish and enforce is the stored one), and a GET loop on another resource
// in each process is answered throughout: each process checks every change
// off its event loop and compiles only the changed CRD.
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
/** Far above any answer's time on a loaded machine, far below a process that compiles on its event loop. */
const STALL_MS = 2000;

/** The CRD with cronSpec at most `max` characters long: each update changes its schema (and generation). */
function stormCrd(max: number): Json {
  const crd = crontabCrd({ group: 'storm.example.com', shortNames: [] }) as Json;
  const schema = crd.spec.versions[0].schema.openAPIV3Schema;
  schema.properties.spec.properties.cronSpec.maxLength = max;
  schema.properties.spec['x-kubernetes-validations'] = [{ rule: `!has(self.image) || size(self.image) <= ${max}`, message: `image longer than ${max}` }];
  return crd;
}

function getLoop(g: Gatehouse): { stop(): Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      const r = await g.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      assert.equal(r.status, 200);
      worst = Math.max(worst, performance.now() - t);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
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

  it('converges both registries on the last of 100 updates in a second, no other request stalled', async () => {
    const created = await a.admin.request('POST', CRD_PATH, stormCrd(1));
    assert.equal(created.status, 201, created.text);
    const crs = '/apis/storm.example.com/v1/namespaces/default/crontabs';
    for (const g of [a, b]) await eventually('the CRD served', async () => (await g.admin.request('GET', crs)).status === 200, { timeoutMs: 30_000 });
    const loops = [getLoop(a), getLoop(b)];
    const started = performance.now();
    const answers: Promise<{ status: number; text: string }>[] = [];
    for (let i = 2; i < UPDATES + 2; i++) {
      const g = i % 2 ? a : b;
      const patch = { spec: { versions: stormCrd(i).spec.versions } };
      answers.push(g.admin.request('PATCH', `${CRD_PATH}/${NAME}`, patch, { 'content-type': 'application/merge-patch+json' }));
      await new Promise((r) => setTimeout(r, 8));
    }
    const sent = performance.now() - started;
    // A patch that lost every one of its tries to the others is refused as kube refuses it (409); most land.
    const statuses = (await Promise.all(answers)).map((r) => (r.status === 409 && r.text.includes('the object has been modified') ? 409 : r.status));
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
    const worst = await Promise.all(loops.map((l) => l.stop()));
    assert.ok(sent < 5000, `the updates took ${sent.toFixed(0)} ms to send`);
    for (const w of worst) assert.ok(w < STALL_MS, `a GET waited ${w.toFixed(0)} ms`);
  });
});
