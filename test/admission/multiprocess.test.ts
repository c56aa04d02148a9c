// Webhook configurations are read through a watch by every process sharing
// a store: two `gatehouse serve` processes on one Redis prefix; a
// configuration created through one process applies to writes through the
// other, and its deletion too.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { eventually } from '../helpers/eventually.js';
import { REDIS_URL, dropPrefix, redisSkipReason, uniquePrefix } from '../store/fixtures/redis-env.js';
import { startWebhookServer, type WebhookServer } from './webhookserver.js';

const skip = await redisSkipReason();
const CM = '/api/v1/namespaces/default/configmaps';
const VWC = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';

describe('webhook configurations across processes', { skip }, () => {
  const prefix = uniquePrefix('admission');
  let a: Gatehouse;
  let b: Gatehouse;
  let hooks: WebhookServer;
  before(async () => {
    hooks = await startWebhookServer();
    const flags = ['--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`];
    [a, b] = await Promise.all([startGatehouse({ flags }), startGatehouse({ flags })]);
  });
  after(async () => {
    await stopAll();
    await hooks.close();
    await dropPrefix(prefix);
  });

  it('a configuration made through one process applies to writes through the other, and its deletion too', async () => {
    hooks.answers.set('/shared', { kind: 'deny', message: 'refused everywhere' });
    const r = await a.admin.request('POST', VWC, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'shared' },
      webhooks: [
        {
          name: 'shared.example.com',
          clientConfig: { url: hooks.url('/shared'), caBundle: hooks.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    const create = (g: Gatehouse) => g.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'mp-' } });
    const denied = await eventually('denied through the other process', async () => {
      const c = await create(b);
      return c.status === 400 && c;
    });
    assert.equal(denied.json.message, 'admission webhook "shared.example.com" denied the request: refused everywhere');
    assert.equal((await a.admin.request('DELETE', `${VWC}/shared`)).status, 200);
    await eventually('allowed again through the other process', async () => (await create(b)).status === 201);
  });
});
