// The series kube's own alerts and dashboards read, each read back from
// /metrics after the event it counts: SLI latency (without webhook and
// long-running time), terminations, client certificate lifetimes, TLS
// handshake errors, watch events and their sizes, the store's size, the
// process and Node.js runtime series, and gatehouse_build_info.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { parseMetrics, samples, type Family } from '../helpers/prometheus.js';
import { eventually } from '../helpers/eventually.js';
import { startWebhookServer, type WebhookServer } from '../admission/webhookserver.js';
import { installGadgets, startConversionWebhook, type ConversionWebhook } from '../crd/convertwebhook.js';
import { HttpsClient } from '../helpers/client.js';

const ADM = '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations';
const CM = '/api/v1/namespaces/default/configmaps';
let seq = 0;
const configMap = (name = `cm-${++seq}`) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

type Metrics = Map<string, Family>;
const sumOf = (m: Metrics, name: string, labels: Record<string, string>, field: 'sum' | 'count' | 'value') =>
  samples(m, name, labels).reduce((n, x) => n + Number(x[field] ?? 0), 0);

describe('the series kube-apiserver alerts read', () => {
  let s: TestServer;
  let hooks: WebhookServer;
  let conversion: ConversionWebhook;
  let startedAt: number;
  before(async () => {
    startedAt = Date.now();
    hooks = await startWebhookServer();
    conversion = await startConversionWebhook();
    s = await startTestServer({ flags: ['--storage-backend', 'file'] });
  });
  after(async () => {
    await s?.close();
    await hooks?.close();
    await conversion?.close();
  });

  const scrape = async (): Promise<Metrics> => {
    const r = await s.admin.request('GET', '/metrics');
    assert.equal(r.status, 200);
    return parseMetrics(r.text);
  };

  /** A validating webhook on creates of `resource`, answering as `hooks.answers` says for `path`; resolves once it is called. */
  async function hookOn(resource: string, path: string, timeoutSeconds: number): Promise<void> {
    const r = await s.admin.request('POST', ADM, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: `hook-${resource}` },
      webhooks: [
        {
          name: `${resource}.hooks.example.com`,
          clientConfig: { url: hooks.url(path), caBundle: hooks.caBundle },
          rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: [resource] }],
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          timeoutSeconds,
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
  }

  it('SLI latency: a request without waits observes its whole latency; a watch is not observed; no dry_run label', async () => {
    const path = '/api/v1/namespaces/default/secrets';
    assert.equal((await s.admin.request('POST', path, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sli' } })).status, 201);
    for (let i = 0; i < 3; i++) assert.equal((await s.admin.request('GET', `${path}/sli`)).status, 200);
    const w = await s.admin.watch(`${path}?watch=1&timeoutSeconds=1`);
    while ((await w.next(3000)) !== undefined);
    const m = await scrape();
    const fam = m.get('apiserver_request_sli_duration_seconds')!;
    assert.equal(fam.type, 'HISTOGRAM');
    assert.match(fam.help, /^\[BETA\] /);
    const sli = samples(m, 'apiserver_request_sli_duration_seconds', { verb: 'GET', resource: 'secrets', scope: 'resource' });
    assert.equal(sli.length, 1);
    assert.equal(sli[0]!.labels['dry_run'], undefined);
    assert.ok('0.05' in sli[0]!.buckets! && !('0.025' in sli[0]!.buckets!), "kube's buckets start at 50 ms");
    const labels = { verb: 'GET', resource: 'secrets', scope: 'resource' };
    assert.equal(Number(sli[0]!.count), 3);
    // Nothing waited on: the same figures as the request latency, to the bit.
    assert.equal(sumOf(m, 'apiserver_request_sli_duration_seconds', labels, 'sum'), sumOf(m, 'apiserver_request_duration_seconds', labels, 'sum'));
    assert.equal(samples(m, 'apiserver_request_duration_seconds', { verb: 'WATCH', resource: 'secrets' }).length, 1);
    assert.equal(samples(m, 'apiserver_request_sli_duration_seconds', { verb: 'WATCH' }).length, 0, 'long-running requests are not SLI-observed');
  });

  it('SLI latency leaves out the time waited on an admission webhook', async () => {
    hooks.answers.set('/slow', { kind: 'slow', ms: 150 });
    await hookOn('configmaps', '/slow', 10);
    await eventually('the webhook in force', async () => {
      assert.equal((await s.admin.request('POST', CM, configMap())).status, 201);
      return hooks.received('/slow').length > 0;
    });
    const m = await scrape();
    const labels = { verb: 'POST', resource: 'configmaps' };
    const sli = sumOf(m, 'apiserver_request_sli_duration_seconds', labels, 'sum');
    const whole = sumOf(m, 'apiserver_request_duration_seconds', labels, 'sum');
    assert.equal(sumOf(m, 'apiserver_request_sli_duration_seconds', labels, 'count'), sumOf(m, 'apiserver_request_duration_seconds', labels, 'count'));
    assert.ok(sli < whole, `SLI ${sli} s is the latency ${whole} s less the webhook's round trips`);
  });

  it('a request the server ends at its deadline counts as terminated, with its code', async () => {
    hooks.answers.set('/hang', { kind: 'slow', ms: 5000 });
    await hookOn('services', '/hang', 10);
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'late' }, spec: { ports: [{ port: 80 }] } };
    const r = await eventually('the webhook holds the create past its deadline', async () => {
      const c = await s.admin.request('POST', '/api/v1/namespaces/default/services?timeout=300ms', { ...svc, metadata: { name: `late-${++seq}` } });
      return c.status === 504 && c;
    });
    assert.equal(r.json.reason, 'Timeout');
    const m = await scrape();
    const t = samples(m, 'apiserver_request_terminations_total', { verb: 'POST', resource: 'services', code: '504' });
    assert.equal(t.length, 1);
    assert.ok(Number(t[0]!.value) >= 1);
    assert.equal(t[0]!.labels['component'], 'apiserver');
    assert.equal(samples(m, 'apiserver_request_terminations_total', { code: '200' }).length, 0, 'only what the server ended');
  });

  it("client certificates: each authenticated request observes its certificate's remaining lifetime", async () => {
    const cert = new X509Certificate(await readFile(devPkiPaths(s.dataDir).adminCert));
    assert.equal((await s.admin.request('GET', '/api')).status, 200);
    const m = await scrape();
    const h = samples(m, 'apiserver_client_certificate_expiration_seconds')[0]!;
    assert.ok(Number(h.count) >= 2, 'the GET and the scrape');
    // Every request of this file came after the server started (validTo is to the second: one more allowed).
    const left = (Date.parse(cert.validTo) - startedAt) / 1000 + 1;
    const mean = Number(h.sum) / Number(h.count);
    assert.ok(mean > 0 && mean <= left, `mean remaining ${mean} s within the admin certificate's ${left} s`);
    assert.equal(h.buckets!['0'], '0', 'none expired');
  });

  it('a TLS handshake that fails is counted', async () => {
    const count = async () => Number(samples(await scrape(), 'apiserver_tls_handshake_errors_total')[0]?.value);
    const before = await count();
    await new Promise<void>((resolve, reject) => {
      const sock = connect(s.port, '127.0.0.1', () => sock.end('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      sock.on('error', reject);
      sock.on('close', () => resolve());
      sock.resume();
    });
    await eventually('the failed handshake counted', async () => (await count()) === before + 1);
  });

  it('watch events and their sizes per group, version and resource', async () => {
    const w = await s.admin.watch(`${CM}?watch=1`);
    try {
      const name = `watched-${++seq}`;
      assert.equal((await s.admin.request('POST', CM, { ...configMap(name), data: { big: 'x'.repeat(3000) } })).status, 201);
      const ev = await eventually('the ADDED event', async () => {
        const e = await w.next(1000);
        return e?.object?.metadata?.name === name && e;
      });
      assert.equal(ev.type, 'ADDED');
      const m = await scrape();
      const labels = { group: '', version: 'v1', resource: 'configmaps' };
      assert.ok(Number(samples(m, 'apiserver_watch_events_total', labels)[0]?.value) >= 1);
      const sizes = samples(m, 'apiserver_watch_events_sizes', labels)[0]!;
      assert.ok(Number(sizes.count) >= 1);
      assert.ok(Number(sizes.sum) > 3000, 'the event as encoded');
      assert.ok(Number(sizes.buckets!['4096']) - Number(sizes.buckets!['2048']) >= 1, 'the 3 kB event in the (2 KiB, 4 KiB] bucket');
    } finally {
      w.stop();
    }
  });

  it('conversion webhook calls by result and failure type', async () => {
    await installGadgets(s, conversion);
    const gadgets = (v: string) => `/apis/conv.example.com/${v}/namespaces/default/gadgets`;
    const gadget = { apiVersion: 'conv.example.com/v1', kind: 'Gadget', metadata: { name: 'g' }, spec: { hostPort: 'example.org:80' } };
    assert.equal((await s.admin.request('POST', gadgets('v1'), gadget)).status, 201);
    // Each state is converted once per version and then served from the conversion cache: a new revision, written
    // through the storage version v2 (no conversion), makes the next read through v1 call the webhook.
    const touch = async (n: number) => {
      const r = await s.admin.request(
        'PATCH',
        `${gadgets('v2')}/g`,
        { metadata: { labels: { touched: String(n) } } },
        { 'content-type': 'application/merge-patch+json' },
      );
      assert.equal(r.status, 200, r.text);
    };
    await touch(1);
    conversion.mode = 'http-500';
    assert.equal((await s.admin.request('GET', `${gadgets('v1')}/g`)).status, 500);
    conversion.mode = 'ok';
    await touch(2);
    conversion.mode = 'wrong-uid';
    assert.equal((await s.admin.request('GET', `${gadgets('v1')}/g`)).status, 500);
    conversion.mode = 'ok';
    const m = await scrape();
    const calls = (labels: Record<string, string>) => sumOf(m, 'apiserver_conversion_webhook_request_total', labels, 'value');
    assert.ok(calls({ result: 'success', failure_type: '' }) >= 1);
    assert.equal(calls({ result: 'failure', failure_type: 'conversion_webhook_call_failure' }), 1);
    assert.equal(calls({ result: 'failure', failure_type: 'conversion_webhook_malformed_response_failure' }), 1);
    assert.equal(sumOf(m, 'apiserver_conversion_webhook_duration_seconds', { result: 'failure' }, 'count'), 2);
  });

  it("the token cache's hits and misses (service account tokens)", async () => {
    const sa = '/api/v1/namespaces/default/serviceaccounts';
    assert.equal((await s.admin.request('POST', sa, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'cached' } })).status, 201);
    const tr = await s.admin.request('POST', `${sa}/cached/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} });
    assert.equal(tr.status, 201, tr.text);
    const count = async (status: string) => sumOf(await scrape(), 'authentication_token_cache_request_total', { status }, 'value');
    const [hits, misses] = [await count('hit'), await count('miss')];
    const client = new HttpsClient(s.url, { ca: await readFile(devPkiPaths(s.dataDir).caCert, 'utf8') });
    try {
      for (let i = 0; i < 3; i++)
        assert.equal((await client.request('GET', '/api', undefined, { authorization: `Bearer ${tr.json.status.token}` })).status, 200);
    } finally {
      client.close();
    }
    assert.equal(await count('miss'), misses + 1, 'the first use checks the signature');
    assert.equal(await count('hit'), hits + 2, 'the next two are answered by the cache');
    assert.ok(sumOf(await scrape(), 'authentication_token_cache_fetch_total', { status: 'ok' }, 'value') >= 1);
  });

  it("the file store's size on disk", async () => {
    const m = await scrape();
    const size = samples(m, 'apiserver_storage_size_bytes');
    assert.equal(size.length, 1);
    assert.match(size[0]!.labels['storage_cluster_id']!, /^[0-9a-f]{16}$/);
    assert.ok(Number(size[0]!.value) > 0);
  });

  it('process and Node.js runtime series, and the build info', async () => {
    // Garbage for the collector to observe.
    let keep: unknown[] = [];
    for (let i = 0; i < 200_000; i++) keep.push({ i });
    keep = [];
    const m = await eventually('a garbage collection observed', async () => {
      const x = await scrape();
      return samples(x, 'nodejs_gc_duration_seconds').some((g) => Number(g.count) > 0) && x;
    });
    assert.equal(keep.length, 0);
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_open_fds', 'process_start_time_seconds'])
      assert.ok(Number(samples(m, name)[0]?.value) > 0, name);
    assert.ok(Number(samples(m, 'process_start_time_seconds')[0]!.value) <= Date.now() / 1000);
    assert.ok(samples(m, 'nodejs_eventloop_lag_seconds').length === 1);
    assert.ok(samples(m, 'nodejs_eventloop_lag_p99_seconds').length === 1);
    const info = samples(m, 'gatehouse_build_info');
    assert.equal(info.length, 1);
    assert.equal(info[0]!.value, '1');
    assert.equal(info[0]!.labels['git_version'], (await s.admin.request('GET', '/version')).json.gitVersion);
    assert.equal(info[0]!.labels['node_version'], process.version);
    assert.equal(m.get('process_cpu_seconds_total')!.help, 'Total user and system CPU time spent in seconds.', 'as the client library writes it');
  });
});

describe('label values from clients stay bounded', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  it('10,000 distinct paths no route serves (non-resource paths, groups, resources) add a handful of series, not one each', async () => {
    const series = async () => {
      const text = (await s.admin.request('GET', '/metrics')).text;
      return text.split('\n').filter((l) => l.startsWith('apiserver_request_total{'));
    };
    const before = await series();
    const paths = Array.from({ length: 10_000 }, (_, i) =>
      i % 3 === 0 ? `/random-${i}` : i % 3 === 1 ? `/apis/g${i}.example.com/v1/things` : `/api/v1/namespaces/default/kind${i}/name`,
    );
    for (let i = 0; i < paths.length; i += 50) {
      const answers = await Promise.all(paths.slice(i, i + 50).map((p) => s.admin.request('GET', p)));
      for (const a of answers) assert.equal(a.status, 404);
    }
    const lines = await series();
    const key = (l: string) => l.slice(0, l.lastIndexOf(' '));
    const had = new Set(before.map(key));
    const added = lines.filter((l) => !had.has(key(l)) && l.includes('code="404"'));
    // One label set per verb and scope the paths have (GET of none and of a resource, LIST of the cluster), each answered 404.
    assert.ok(added.length <= 3, `new series: ${added.join('\n')}`);
    assert.deepEqual(
      lines.filter((l) => /random-|g\d+\.example\.com|kind\d/.test(l)),
      [],
      "the client's path is never a label value",
    );
    const labelSets = lines.map(key);
    assert.equal(new Set(labelSets).size, labelSets.length, 'no series written twice');
    const unrouted = lines.filter((l) => l.includes('group=""') && l.includes('version=""') && l.includes('code="404"'));
    assert.ok(unrouted.reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0) >= 10_000, 'each request still counted');
  });
});
