// What admission webhooks write into the audit event, as kube writes it:
// `mutation.webhook.admission.k8s.io/round_<r>_index_<i>` for each mutating
// call, `patch.webhook.admission.k8s.io/round_<r>_index_<i>` (the patch
// applied) at level Request and above only, a webhook's own auditAnnotations as `<webhook name>/<key>`, and
// `failed-open.validating.webhook.admission.k8s.io/round_0_index_<i>` when a
// webhook with failurePolicy Ignore could not be called.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, freePort, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { completeLines } from '../helpers/auditlog.js';
import { startWebhookServer, type WebhookServer } from './webhookserver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  namespaces: [request-level]
  resources: [{group: '', resources: [configmaps]}]
- level: Metadata
  resources: [{group: '', resources: [configmaps]}]
`;
const CM = '/api/v1/namespaces/default/configmaps';

describe('audit annotations of admission webhooks', () => {
  let s: TestServer;
  let hooks: WebhookServer;
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-admission-audit-'));
    await writeFile(join(dir, 'policy.yaml'), POLICY);
    hooks = await startWebhookServer();
    s = await startTestServer({ flags: [`--audit-policy-file=${join(dir, 'policy.yaml')}`, `--audit-log-path=${join(dir, 'audit.log')}`] });
  });
  after(async () => {
    await s.close();
    await hooks.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records mutations, the webhook’s annotations and failing open', async () => {
    const dead = `https://127.0.0.1:${await freePort()}/gone`;
    const hook = (name: string, extra: Json = {}) => ({
      name,
      clientConfig: { url: hooks.url(`/${name}`), caBundle: hooks.caBundle },
      rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    });
    hooks.answers.set('/patcher.example.com', { kind: 'patch', ops: [{ op: 'add', path: '/metadata/labels', value: { audited: 'yes' } }] });
    hooks.answers.set('/noter.example.com', { kind: 'allow', auditAnnotations: { reason: 'looked fine' } });
    for (const [kind, plural, webhooks] of [
      ['MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', [hook('patcher.example.com')]],
      [
        'ValidatingWebhookConfiguration',
        'validatingwebhookconfigurations',
        [hook('noter.example.com'), hook('gone.example.com', { failurePolicy: 'Ignore', clientConfig: { url: dead, caBundle: hooks.caBundle } })],
      ],
    ] as const) {
      const r = await s.admin.request('POST', `/apis/admissionregistration.k8s.io/v1/${plural}`, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind,
        metadata: { name: 'audited' },
        webhooks,
      });
      assert.equal(r.status, 201, r.text);
    }
    await eventually('mutated', async () => {
      const c = await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'a-' } });
      return c.json?.metadata?.labels?.audited === 'yes' && hooks.received('/noter.example.com').length > 0;
    });
    const ev = await eventually('the audit event', async () =>
      (await completeLines(join(dir, 'audit.log')))
        .map((l) => JSON.parse(l) as Json)
        .find(
          (e) =>
            e.verb === 'create' &&
            e.stage === 'ResponseComplete' &&
            e.annotations?.['noter.example.com/reason'] !== undefined &&
            e.annotations?.['mutation.webhook.admission.k8s.io/round_0_index_0'] !== undefined,
        ),
    );
    const a = ev.annotations ?? {};
    assert.deepEqual(JSON.parse(a['mutation.webhook.admission.k8s.io/round_0_index_0']), {
      configuration: 'audited',
      webhook: 'patcher.example.com',
      mutated: true,
    });
    assert.equal(a['noter.example.com/reason'], 'looked fine');
    assert.equal(a['failed-open.validating.webhook.admission.k8s.io/round_0_index_1'], 'gone.example.com');
    // The patch is data: kube keeps it out of a Metadata-level event.
    assert.equal(a['patch.webhook.admission.k8s.io/round_0_index_0'], undefined);
  });

  it('records the patch a mutating webhook applied at level Request', async () => {
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { metadata: { name: 'request-level' } })).status, 201);
    const c = await s.admin.request('POST', '/api/v1/namespaces/request-level/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'patched' },
    });
    assert.equal(c.status, 201, c.text);
    assert.equal(c.json.metadata.labels?.audited, 'yes');
    const ev = await eventually('the audit event', async () =>
      (await completeLines(join(dir, 'audit.log')))
        .map((l) => JSON.parse(l) as Json)
        .find(
          (e) => e.verb === 'create' && e.stage === 'ResponseComplete' && e.objectRef?.namespace === 'request-level' && e.objectRef?.resource === 'configmaps',
        ),
    );
    assert.equal(ev.level, 'Request');
    const a = ev.annotations ?? {};
    assert.deepEqual(JSON.parse(a['patch.webhook.admission.k8s.io/round_0_index_0']), {
      configuration: 'audited',
      webhook: 'patcher.example.com',
      patch: [{ op: 'add', path: '/metadata/labels', value: { audited: 'yes' } }],
      patchType: 'JSONPatch',
    });
    assert.deepEqual(JSON.parse(a['mutation.webhook.admission.k8s.io/round_0_index_0']), {
      configuration: 'audited',
      webhook: 'patcher.example.com',
      mutated: true,
    });
  });
});
