// flowcontrol.apiserver.k8s.io/v1 served by the core backend: discovery,
// defaults, validation naming the field, status subresource, watch, kubectl.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../helpers/server.js';

const run = promisify(execFile);
const FC = '/apis/flowcontrol.apiserver.k8s.io/v1';

describe('flowcontrol.apiserver.k8s.io/v1 types', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('is discovered with both resources and their status subresources', async () => {
    const r = await s.admin.request('GET', FC);
    assert.equal(r.status, 200);
    const names = (r.json as { resources: Array<{ name: string }> }).resources.map((x) => x.name).sort();
    assert.deepEqual(names, ['flowschemas', 'flowschemas/status', 'prioritylevelconfigurations', 'prioritylevelconfigurations/status']);
  });

  it('defaults a Limited level as kube does and refuses a bad one naming the field', async () => {
    const r = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 't-defaults' },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue' } } },
    });
    assert.equal(r.status, 201, r.text);
    const l = (r.json as { spec: { limited: Record<string, unknown> } }).spec.limited;
    assert.equal(l['nominalConcurrencyShares'], 30);
    assert.deepEqual(l['limitResponse'], { type: 'Queue', queuing: { queues: 64, handSize: 8, queueLengthLimit: 50 } });
    const bad = await s.admin.request('POST', `${FC}/prioritylevelconfigurations`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: 't-bad' },
      spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 9 } } } },
    });
    assert.equal(bad.status, 422, bad.text);
    assert.match(bad.text, /spec\.limited\.limitResponse\.queuing\.handSize/);
    const fs = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-bad' },
      spec: { priorityLevelConfiguration: { name: 'x' }, matchingPrecedence: 20000 },
    });
    assert.equal(fs.status, 422, fs.text);
    assert.match(fs.text, /spec\.matchingPrecedence/);
  });

  it('creates, watches, updates status and deletes a FlowSchema', async () => {
    const w = await s.admin.watch(`${FC}/flowschemas?watch=1&fieldSelector=metadata.name%3Dt-crud`);
    const body = {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-crud' },
      spec: {
        priorityLevelConfiguration: { name: 't-defaults' },
        distinguisherMethod: { type: 'ByUser' },
        rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
      },
    };
    const c = await s.admin.request('POST', `${FC}/flowschemas`, body);
    assert.equal(c.status, 201, c.text);
    assert.equal((c.json as { spec: { matchingPrecedence: number } }).spec.matchingPrecedence, 1000);
    const ev = await w.next();
    assert.equal(ev?.type, 'ADDED');
    const st = await s.admin.request(
      'PATCH',
      `${FC}/flowschemas/t-crud/status`,
      { status: { conditions: [{ type: 'Dangling', status: 'False', reason: 'Found', message: 'ok', lastTransitionTime: '2026-01-01T00:00:00Z' }] } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(st.status, 200, st.text);
    const d = await s.admin.request('DELETE', `${FC}/flowschemas/t-crud`);
    assert.equal(d.status, 200, d.text);
    w.stop();
  });

  it('kubectl get flowschemas and prioritylevelconfigurations print kube columns', async () => {
    const env = { ...process.env, KUBECONFIG: s.kubeconfig };
    const pl = await run('kubectl', ['get', 'prioritylevelconfigurations', 't-defaults'], { env });
    assert.match(pl.stdout, /NAME\s+TYPE\s+NOMINALCONCURRENCYSHARES\s+QUEUES\s+HANDSIZE\s+QUEUELENGTHLIMIT\s+AGE/);
    assert.match(pl.stdout, /t-defaults\s+Limited\s+30\s+64\s+8\s+50\s/);
    const made = await s.admin.request('POST', `${FC}/flowschemas`, {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'FlowSchema',
      metadata: { name: 't-kubectl' },
      spec: { priorityLevelConfiguration: { name: 't-defaults' }, matchingPrecedence: 77, distinguisherMethod: { type: 'ByNamespace' } },
    });
    assert.equal(made.status, 201, made.text);
    const fs = await run('kubectl', ['get', 'flowschemas', 't-kubectl'], { env });
    assert.match(fs.stdout, /NAME\s+PRIORITYLEVEL\s+MATCHINGPRECEDENCE\s+DISTINGUISHERMETHOD\s+AGE\s+MISSINGPL/);
    // '?' until the flowschema-status controller judged it (test/flowcontrol/status.test.ts), then False.
    assert.match(fs.stdout, /t-kubectl\s+t-defaults\s+77\s+ByNamespace\s+\S+\s+(\?|False)\s/);
  });
});
