// A new object of a kind with /status starts from Go's zero status, read from
// the schema tables (TypeDef.z): what the client sent is dropped, and the
// members Go never omits are written with their zeros, as kube's strategies
// and encoder do.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

const template = { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'x' }] } };
const selector = { matchLabels: { a: 'b' } };
const jobTemplate = { metadata: template.metadata, spec: { ...template.spec, restartPolicy: 'Never' } };

const CASES: ReadonlyArray<readonly [string, Record<string, unknown>, unknown]> = [
  ['/apis/apps/v1/namespaces/default/deployments', { apiVersion: 'apps/v1', kind: 'Deployment', spec: { selector, template } }, {}],
  ['/apis/apps/v1/namespaces/default/replicasets', { apiVersion: 'apps/v1', kind: 'ReplicaSet', spec: { selector, template } }, { replicas: 0 }],
  [
    '/apis/apps/v1/namespaces/default/statefulsets',
    { apiVersion: 'apps/v1', kind: 'StatefulSet', spec: { selector, template } },
    { replicas: 0, availableReplicas: 0 },
  ],
  [
    '/apis/apps/v1/namespaces/default/daemonsets',
    { apiVersion: 'apps/v1', kind: 'DaemonSet', spec: { selector, template } },
    { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 },
  ],
  ['/api/v1/namespaces/default/replicationcontrollers', { apiVersion: 'v1', kind: 'ReplicationController', spec: { template } }, { replicas: 0 }],
  ['/apis/batch/v1/namespaces/default/jobs', { apiVersion: 'batch/v1', kind: 'Job', spec: { template: jobTemplate } }, {}],
  [
    '/apis/batch/v1/namespaces/default/cronjobs',
    { apiVersion: 'batch/v1', kind: 'CronJob', spec: { schedule: '@hourly', jobTemplate: { spec: { template: jobTemplate } } } },
    {},
  ],
  [
    '/apis/networking.k8s.io/v1/namespaces/default/ingresses',
    { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', spec: { defaultBackend: { service: { name: 's', port: { number: 80 } } } } },
    { loadBalancer: {} },
  ],
  [
    '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
    { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', spec: { minAvailable: 1 } },
    { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 },
  ],
];

describe("a new object's zero status", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  it('a partial status copied from elsewhere creates (the status is reset, so nothing in it is required)', async () => {
    const [path, obj] = CASES[3]!; // a DaemonSet: four status members Go never omits
    const r = await s.admin.request('POST', path, { ...obj, metadata: { name: 'partial' }, status: { observedGeneration: 7 } });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.observedGeneration, undefined);
    const bad = await s.admin.request('PUT', `${path}/partial/status`, { ...r.json, status: { observedGeneration: 7 } });
    assert.equal(bad.status, 422, 'through /status the required members are required');
    assert.match(bad.json.message, /status\.currentNumberScheduled: Required value/);
  });

  for (const [path, obj, zero] of CASES) {
    it(`${obj['kind']}: ${JSON.stringify(zero)}, whatever status the client sent`, async () => {
      // A status a client could have copied from another object: every zero member set, and more.
      const status = Object.fromEntries(Object.entries(zero as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'number' ? 5 : v]));
      const sent = {
        ...obj,
        metadata: { name: `zero-${String(obj['kind']).toLowerCase()}` },
        status: {
          ...status,
          conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z', reason: 'Copied', message: 'from elsewhere' }],
        },
      };
      const r = await s.admin.request('POST', path, sent);
      assert.equal(r.status, 201, r.text);
      assert.deepEqual(r.json.status, zero);
      assert.ok(r.text.includes(`"status":${JSON.stringify(zero)}`), 'in Go field order');
    });
  }
});
