// kube-apiserver's request metrics on /metrics, read back with a Prometheus
// text parser: names, labels (reported verb, scope, code), histograms,
// stability levels in HELP, long-running and in-flight gauges, authentication
// attempts; and who may read /metrics (system:monitoring, not a plain user).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { HttpsClient } from '../helpers/client.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';
import { eventually } from '../helpers/eventually.js';

describe('request metrics', () => {
  let s: TestServer;
  let dir: string;
  let tokens: HttpsClient;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-metrics-'));
    await writeFile(join(dir, 'tokens.csv'), 'mon-token,prom,uid-prom,"system:monitoring"\nplain-token,plain,uid-plain,""\n');
    s = await startTestServer({ flags: [`--token-auth-file=${join(dir, 'tokens.csv')}`] });
    tokens = new HttpsClient(s.url, { ca: await readFile(join(s.dataDir, 'pki', 'ca.crt'), 'utf8') });
  });
  after(async () => {
    tokens?.close();
    await s?.close();
    await rm(dir, { recursive: true, force: true });
  });

  const scrape = async () => {
    const r = await s.admin.request('GET', '/metrics');
    assert.equal(r.status, 200);
    return parseMetrics(r.text);
  };

  it("counts requests by kube's reported verb, scope and code, with latency and response-size histograms", async () => {
    const ns = '/api/v1/namespaces/default/configmaps';
    assert.equal((await s.admin.request('POST', ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm1' } })).status, 201);
    assert.equal((await s.admin.request('GET', `${ns}/m1`)).status, 200);
    assert.equal((await s.admin.request('GET', `${ns}/missing`)).status, 404);
    assert.equal((await s.admin.request('GET', ns)).status, 200);
    assert.equal((await s.admin.request('GET', '/api/v1/namespaces')).status, 200);
    const apply = await s.admin.request('PATCH', `${ns}/m2?fieldManager=t`, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm2' } }), {
      'content-type': 'application/apply-patch+yaml',
    });
    assert.equal(apply.status, 201);
    assert.equal((await s.admin.request('POST', `${ns}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'dry' } })).status, 201);
    const m = await scrape();
    const total = (labels: Record<string, string>) =>
      samples(m, 'apiserver_request_total', { resource: 'configmaps', ...labels }).reduce((n, x) => n + Number(x.value), 0);
    assert.equal(total({ verb: 'POST', scope: 'namespace', code: '201', dry_run: '' }), 1);
    assert.equal(total({ verb: 'POST', dry_run: 'All' }), 1);
    assert.equal(total({ verb: 'GET', scope: 'resource', code: '200' }), 1);
    assert.equal(total({ verb: 'GET', scope: 'resource', code: '404' }), 1);
    assert.equal(total({ verb: 'LIST', scope: 'namespace', code: '200' }), 1);
    assert.equal(total({ verb: 'APPLY', scope: 'resource', code: '201' }), 1);
    assert.equal(
      samples(m, 'apiserver_request_total', { resource: 'namespaces', verb: 'LIST', scope: 'cluster', group: '', version: 'v1', component: 'apiserver' })
        .length,
      1,
    );
    const fam = m.get('apiserver_request_total')!;
    assert.equal(fam.type, 'COUNTER');
    assert.match(fam.help, /^\[STABLE\] /);
    const dur = samples(m, 'apiserver_request_duration_seconds', { verb: 'GET', resource: 'configmaps', scope: 'resource' })[0]!;
    assert.equal(m.get('apiserver_request_duration_seconds')!.type, 'HISTOGRAM');
    assert.equal(Number(dur.count), 2);
    assert.equal(Number(dur.buckets!['60']), 2);
    assert.ok(Number(dur.sum) > 0);
    const sizes = samples(m, 'apiserver_response_sizes', { verb: 'GET', resource: 'configmaps' })[0]!;
    assert.ok(Number(sizes.count) >= 1 && Number(sizes.sum) > 100, 'GET answers are sized');
    assert.equal(samples(m, 'apiserver_response_sizes', { verb: 'POST' }).length, 0, 'only reads are sized');
  });

  it('long-running requests are a gauge while they run; seats in use by kind', async () => {
    const w = await s.admin.watch('/api/v1/namespaces/default/configmaps?watch=1');
    try {
      const during = await scrape();
      assert.equal(Number(samples(during, 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'configmaps' })[0]?.value), 1);
      // The scrape itself is a read in flight.
      assert.equal(Number(samples(during, 'apiserver_current_inflight_requests', { request_kind: 'readOnly' })[0]?.value), 1);
      assert.equal(Number(samples(during, 'apiserver_current_inflight_requests', { request_kind: 'mutating' })[0]?.value), 0);
    } finally {
      w.stop();
    }
    await eventually(
      'the watch counted as ended',
      async () => Number(samples(await scrape(), 'apiserver_longrunning_requests', { verb: 'WATCH', resource: 'configmaps' })[0]?.value ?? 0) === 0,
      { intervalMs: 20 },
    );
  });

  it('authentication attempts by result; random paths do not make new series', async () => {
    const before = await scrape();
    const failures = (m: typeof before) => Number(samples(m, 'authentication_attempts', { result: 'failure' })[0]?.value ?? 0);
    assert.equal((await tokens.request('GET', '/api', undefined, { authorization: 'Bearer nope' })).status, 401);
    for (let i = 0; i < 20; i++) await s.admin.request('GET', `/random-${i}`);
    const m = await scrape();
    assert.equal(failures(m), failures(before) + 1);
    assert.ok(Number(samples(m, 'authentication_attempts', { result: 'success' })[0]?.value) > 0);
    assert.equal(m.get('authentication_duration_seconds')?.type, 'HISTOGRAM');
    assert.equal(
      samples(m, 'apiserver_request_total').some((x) => x.labels['subresource']?.startsWith('/random-')),
      false,
    );
  });

  it('the core backend: store latency per operation and type, stored objects per resource, registered watchers', async () => {
    const w = await s.admin.watch('/api/v1/namespaces/default/configmaps?watch=1');
    try {
      const m = await scrape();
      assert.ok(Number(samples(m, 'etcd_request_duration_seconds', { operation: 'create', type: 'configmaps' })[0]?.count) >= 1);
      assert.ok(Number(samples(m, 'etcd_request_duration_seconds', { operation: 'get', type: 'configmaps' })[0]?.count) >= 1);
      assert.ok(
        Number(samples(m, 'apiserver_storage_objects', { resource: 'namespaces' })[0]?.value) >= 4,
        'default, kube-system, kube-public, kube-node-lease',
      );
      assert.ok(Number(samples(m, 'apiserver_storage_objects', { resource: 'clusterroles.rbac.authorization.k8s.io' })[0]?.value) > 10);
      assert.equal(samples(m, 'apiserver_registered_watchers', { group: '', version: 'v1', kind: 'ConfigMap' })[0]?.value, '1');
    } finally {
      w.stop();
    }
  });

  it('/metrics: system:monitoring may read it, a plain user may not', async () => {
    assert.equal((await tokens.request('GET', '/metrics', undefined, { authorization: 'Bearer mon-token' })).status, 200);
    assert.equal((await tokens.request('GET', '/metrics', undefined, { authorization: 'Bearer plain-token' })).status, 403);
    assert.equal((await s.anonymous.request('GET', '/metrics')).status, 403);
  });
});
