// Admission webhook calls in a recorded request's trace: one `Call
// validating webhook` span per webhook (its name and configuration as
// attributes) under the request's span, with the HTTPS POST to
// the webhook a client span under it, exported to a real OTLP receiver.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { findSpan, startOtlpReceiver, traceSpans, type OtlpReceiver } from '../tracing/receiver.js';
import { startWebhookServer, type WebhookServer } from './webhookserver.js';

describe('admission webhook spans', () => {
  let dir: string;
  let rx: OtlpReceiver;
  let s: TestServer;
  let hooks: WebhookServer;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-admission-tracing-'));
    rx = await startOtlpReceiver();
    await writeFile(
      join(dir, 'tracing.yaml'),
      `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: http://${rx.hostPort}/v1/traces\nsamplingRatePerMillion: 1000000\n`,
    );
    hooks = await startWebhookServer();
    s = await startTestServer({ flags: [`--tracing-config-file=${join(dir, 'tracing.yaml')}`], hooks: { tracingBatchDelayMs: 20 } });
  });
  after(async () => {
    await s.close();
    await hooks.close();
    await rx.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records each call with its client span', async () => {
    const r = await s.admin.request('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'traced' },
      webhooks: [
        {
          name: 'traced.example.com',
          clientConfig: { url: hooks.url('/traced'), caBundle: hooks.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    await eventually('called', async () => {
      await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 't-' } });
      return hooks.received('/traced').length > 0;
    });
    const call = await findSpan(rx, '/v1/traces', (x) => x.name === 'Call validating webhook');
    assert.equal(call.attributes['webhook.name'], 'traced.example.com');
    assert.equal(call.attributes['webhook.configuration'], 'traced');
    const spans = await traceSpans(rx, '/v1/traces', call.traceId, (all) => all.some((x) => x.parentSpanId === call.spanId));
    const parent = spans.find((x) => x.spanId === call.parentSpanId);
    assert.equal(parent?.name, 'POST /api/v1/namespaces/{:namespace}/configmaps', "under the request's span, as its store calls");
    const post = spans.find((x) => x.parentSpanId === call.spanId)!;
    assert.equal(post.kind, 3, 'a client span');
    assert.equal(post.attributes['gatehouse.client'], 'admission webhook');
  });
});
