// Tracing through started servers (--tracing-config-file), with the spans read
// back from a real OTLP/HTTP receiver: kube's server span names, parent and
// child links, the authenticator and authorizer that decided, store spans,
// the client's traceparent as the parent (parent-based sampling), the
// traceparent sent to the token and authorization webhooks and to an
// aggregated backend carrying the same trace, nothing recorded at rate 0
// without a sampled parent, an unreachable collector logged once, and start
// errors for bad files.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { context, ROOT_CONTEXT, type ContextManager } from '@opentelemetry/api';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { freePort, startTestServer, type TestServer } from '../helpers/server.js';
import { HttpsClient } from '../helpers/client.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from '../aggregation/fixture.js';
import { findSpan, startOtlpReceiver, traceSpans, type OtlpReceiver, type ReceivedSpan } from './receiver.js';
import { startReviewWebhook, type ReviewWebhook } from './webhooks.js';
import { startAuditReceiver } from '../audit/receiver.js';
import { CRD_PATH, waitEstablished } from '../crd/fixtures.js';
import { caBundle, gadgetCrd, startConversionWebhook } from '../crd/convertwebhook.js';

const SERVER = 2;
const CLIENT = 3;

function newTrace(): { traceId: string; spanId: string } {
  return { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
}

function traceparent(t: { traceId: string; spanId: string }, sampled = true): string {
  return `00-${t.traceId}-${t.spanId}-${sampled ? '01' : '00'}`;
}

async function tracingFile(dir: string, name: string, body: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, body);
  return file;
}

function one(spans: ReceivedSpan[], pred: (s: ReceivedSpan) => boolean, what: string): ReceivedSpan {
  const found = spans.filter(pred);
  assert.equal(found.length, 1, `${what}: ${JSON.stringify(spans.map((s) => [s.name, s.attributes]))}`);
  return found[0]!;
}

const serverSpan = (spans: ReceivedSpan[]) => spans.find((s) => s.kind === SERVER);

describe('tracing at samplingRatePerMillion 1000000', { timeout: 180_000 }, () => {
  let dir: string;
  let rx: OtlpReceiver;
  let hooks: ReviewWebhook;
  let s: TestServer;
  let tokenUser: HttpsClient;
  let echo: EchoBackend;
  let store: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    rx = await startOtlpReceiver();
    hooks = await startReviewWebhook();
    // host:port, as kube's endpoint is written: read as http://host:port/v1/traces.
    const config = await tracingFile(
      dir,
      'tracing.yaml',
      `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${rx.hostPort}\nsamplingRatePerMillion: 1000000\n`,
    );
    const kubeconfig = await hooks.kubeconfig(dir, 'hook');
    s = await startTestServer({
      flags: [
        `--tracing-config-file=${config}`,
        `--authentication-token-webhook-config-file=${kubeconfig}`,
        '--authentication-token-webhook-cache-ttl=0',
        '--authorization-mode=Node,RBAC,Webhook',
        `--authorization-webhook-config-file=${kubeconfig}`,
        '--authorization-webhook-cache-authorized-ttl=0',
        '--authorization-webhook-cache-unauthorized-ttl=0',
        '--enable-admission-plugins=NodeRestriction',
      ],
      hooks: { tracingBatchDelayMs: 20 },
    });
    store = process.env['GATEHOUSE_TEST_STORAGE'] === 'redis' ? 'redis' : 'memory';
    tokenUser = new HttpsClient(s.url, { ca: await readFile(join(s.dataDir, 'pki', 'ca.crt'), 'utf8') });
    const pem = servingPki(dir, 'echo');
    echo = await startEcho(pem, await readFile(join(s.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(s.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.echo.gatehouse.dev', 'True');
  });

  after(async () => {
    tokenUser?.close();
    await s?.close();
    await echo?.close();
    await hooks?.close();
    await rx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("makes the client's traceparent the parent of the server span, with kube's name, http attributes and child spans", async () => {
    const parent = newTrace();
    const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { traceparent: traceparent(parent) });
    assert.equal(r.status, 200, r.text);
    const spans = await traceSpans(rx, '/v1/traces', parent.traceId, (x) => serverSpan(x) !== undefined);
    const srv = serverSpan(spans)!;
    assert.equal(srv.name, 'GET /api/v1/namespaces/{:namespace}/configmaps');
    assert.equal(srv.parentSpanId, parent.spanId);
    assert.equal(srv.attributes['http.request.method'], 'GET');
    assert.equal(srv.attributes['http.response.status_code'], 200);
    assert.equal(srv.attributes['url.path'], '/api/v1/namespaces/default/configmaps');
    assert.equal(srv.resource['service.name'], 'apiserver');
    assert.deepEqual(rx.refused, []);
    // Whose context it is decides whether it is the parent, so the span starts after authentication (as kube's filter).
    assert.equal(spans.filter((x) => x.name === 'authentication').length, 0);
    const authz = one(spans, (x) => x.name === 'authorization', 'one authorization span');
    assert.equal(authz.parentSpanId, srv.spanId);
    assert.equal(authz.attributes['authorization.authorizer'], 'privileged-groups');
    assert.equal(authz.attributes['authorization.decision'], 'allow');
    const list = one(spans, (x) => x.name === `List ${store}`, 'one store list span');
    assert.equal(list.parentSpanId, srv.spanId);
    assert.equal(typeof list.attributes['key'], 'string');
    // Reads are not admitted.
    assert.equal(spans.filter((x) => x.name === 'admission').length, 0);
  });

  it('traces a write through the token and authorization webhooks, which receive the trace in their traceparent', async () => {
    const before = hooks.calls.length;
    const r = await tokenUser.request(
      'POST',
      '/api/v1/namespaces/default/configmaps',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'traced' }, data: { a: 'b' } },
      { authorization: 'Bearer good-token' },
    );
    assert.equal(r.status, 201, r.text);
    const calls = hooks.calls.slice(before);
    assert.deepEqual(
      calls.map((c) => c.kind),
      ['TokenReview', 'SubjectAccessReview'],
    );
    // No traceparent from the client: a new root trace, sampled at 1000000 per million.
    const traceId = calls[0]!.traceparent?.split('-')[1] ?? '';
    assert.match(traceId, /^[0-9a-f]{32}$/);
    const spans = await traceSpans(rx, '/v1/traces', traceId, (x) => serverSpan(x) !== undefined);
    const srv = serverSpan(spans)!;
    assert.equal(srv.name, 'POST /api/v1/namespaces/{:namespace}/configmaps');
    assert.equal(srv.parentSpanId, '');
    assert.equal(srv.attributes['http.response.status_code'], 201);

    const authn = one(spans, (x) => x.name === 'authentication', 'one authentication span');
    assert.equal(authn.attributes['authentication.authenticator'], 'bearer');
    assert.equal(authn.attributes['authentication.token_authenticator'], 'webhook');
    const tokenCall = one(spans, (x) => x.kind === CLIENT && x.parentSpanId === authn.spanId, 'the token webhook call under authentication');
    assert.equal(tokenCall.name, 'HTTP POST');
    assert.equal(tokenCall.attributes['gatehouse.client'], 'token webhook');
    assert.equal(tokenCall.attributes['http.response.status_code'], 200);
    assert.equal(calls[0]!.traceparent, `00-${traceId}-${tokenCall.spanId}-01`);

    const authz = one(spans, (x) => x.name === 'authorization', 'one authorization span');
    assert.equal(authz.attributes['authorization.authorizer'], 'webhook');
    assert.equal(authz.attributes['authorization.decision'], 'allow');
    assert.equal(authz.attributes['authorization.reason'], 'configmaps are fine');
    const authzCall = one(spans, (x) => x.kind === CLIENT && x.parentSpanId === authz.spanId, 'the authorization webhook call under authorization');
    assert.equal(authzCall.attributes['gatehouse.client'], 'authorization webhook');
    assert.equal(calls[1]!.traceparent, `00-${traceId}-${authzCall.spanId}-01`);

    const admission = one(spans, (x) => x.name === 'admission' && x.attributes['admission.phase'] === 'validating', 'one validating admission span');
    const mutating = one(spans, (x) => x.name === 'admission' && x.attributes['admission.phase'] === 'mutating', 'one mutating admission span');
    assert.deepEqual(mutating.attributes['admission.plugins'], ['LimitRanger', 'MutatingAdmissionWebhook']);
    assert.equal(admission.parentSpanId, srv.spanId);
    assert.ok((admission.attributes['admission.plugins'] as unknown[]).includes('NodeRestriction'), String(admission.attributes['admission.plugins']));
    const create = one(spans, (x) => x.name === `Create ${store}`, 'one store create span');
    assert.equal(create.parentSpanId, srv.spanId);
    assert.match(String(create.attributes['key']), /configmaps.*default.*traced/);
  });

  it("keeps concurrent recorded requests apart: each one's webhook calls and store span hang under its own spans", async () => {
    // No traceparent: an ordinary user's would not be the parent (kube 1.32+), and its span would
    // start after authentication. Each request's trace is found by its store span's key instead.
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        tokenUser.request(
          'POST',
          '/api/v1/namespaces/default/configmaps',
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `concurrent-${i}` } },
          { authorization: 'Bearer good-token' },
        ),
      ),
    );
    for (const r of answers) assert.equal(r.status, 201, r.text);
    for (let i = 0; i < answers.length; i++) {
      const key = new RegExp(`concurrent-${i}$`);
      const { traceId } = await findSpan(rx, '/v1/traces', (x) => x.name === `Create ${store}` && key.test(String(x.attributes['key'])));
      const spans = await traceSpans(rx, '/v1/traces', traceId, (x) => serverSpan(x) !== undefined && x.some((y) => y.name === 'authorization'));
      const srv = serverSpan(spans)!;
      assert.equal(srv.parentSpanId, '');
      const create = one(spans, (x) => x.name === `Create ${store}`, 'one store create span');
      assert.equal(create.parentSpanId, srv.spanId);
      assert.match(String(create.attributes['key']), new RegExp(`concurrent-${i}$`));
      const authn = one(spans, (x) => x.name === 'authentication', 'one authentication span');
      const authz = one(spans, (x) => x.name === 'authorization', 'one authorization span');
      assert.equal(authn.parentSpanId, srv.spanId);
      assert.equal(authz.parentSpanId, srv.spanId);
      one(
        spans,
        (x) => x.kind === CLIENT && x.attributes['gatehouse.client'] === 'authorization webhook' && x.parentSpanId === authz.spanId,
        'its own authorization webhook call',
      );
      // Requests with one token may share one TokenReview: when this one made it, the call is under its authentication.
      for (const call of spans.filter((x) => x.attributes['gatehouse.client'] === 'token webhook')) assert.equal(call.parentSpanId, authn.spanId);
    }
    // The trace is passed by hand: no context manager (an AsyncLocalStorage, whose promise hooks would make
    // every await of the process slower on Node 20 and 22) is registered with OpenTelemetry's API.
    const probe: ContextManager = {
      active: () => ROOT_CONTEXT,
      with: (_c, fn, thisArg, ...args) => fn.apply(thisArg, args),
      bind: (_c, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    assert.equal(context.setGlobalContextManager(probe), true, 'a context manager was registered');
    context.disable();
  });

  it('records a denial as decision forbid, and the 403 on the server span', async () => {
    const parent = newTrace();
    const r = await tokenUser.request('GET', '/api/v1/namespaces/default/secrets', undefined, {
      authorization: 'Bearer good-token',
      traceparent: traceparent(parent),
    });
    assert.equal(r.status, 403, r.text);
    // An ordinary user's context is not the parent: a new root, linked to it.
    const root = await findSpan(rx, '/v1/traces', (x) => x.kind === SERVER && x.links.some((l) => l.traceId === parent.traceId));
    assert.equal(root.parentSpanId, '');
    assert.notEqual(root.traceId, parent.traceId);
    assert.deepEqual(root.links, [{ traceId: parent.traceId, spanId: parent.spanId }]);
    const spans = await traceSpans(rx, '/v1/traces', root.traceId, (x) => x.some((y) => y.name === 'authorization'));
    const authz = one(spans, (x) => x.name === 'authorization', 'one authorization span');
    assert.equal(authz.attributes['authorization.decision'], 'forbid');
    assert.equal(authz.attributes['authorization.authorizer'], undefined, 'no authorizer decided: every one had no opinion');
    assert.equal(serverSpan(spans)!.attributes['http.response.status_code'], 403);
    // A 4xx is the client's failure, not the server's.
    assert.equal(serverSpan(spans)!.status, 0);
  });

  it('records a failed authentication on its span', async () => {
    // Without a traceparent: a request with one waits for authentication before any span, as kube's filter does.
    const r = await tokenUser.request('GET', '/api/v1/namespaces', undefined, { authorization: 'Bearer bad-token' });
    assert.equal(r.status, 401, r.text);
    const srv = await findSpan(
      rx,
      '/v1/traces',
      (x) => x.kind === SERVER && x.attributes['http.response.status_code'] === 401 && x.name === 'GET /api/v1/namespaces',
    );
    const spans = await traceSpans(rx, '/v1/traces', srv.traceId, (x) => x.some((y) => y.name === 'authentication'));
    assert.equal(serverSpan(spans)!.name, 'GET /api/v1/namespaces');
    assert.equal(one(spans, (x) => x.name === 'authentication', 'authentication span').status, 2);
    assert.equal(spans.filter((x) => x.name === 'authorization').length, 0);
  });

  it('proxies to an aggregated backend in a client span whose traceparent the backend receives', async () => {
    const parent = newTrace();
    const path = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes/traced`;
    const r = await s.admin.request('GET', path, undefined, { traceparent: traceparent(parent) });
    assert.equal(r.status, 200, r.text);
    const spans = await traceSpans(rx, '/v1/traces', parent.traceId, (x) => serverSpan(x) !== undefined && x.some((y) => y.kind === CLIENT));
    const srv = serverSpan(spans)!;
    assert.equal(srv.name, 'GET /apis/echo.gatehouse.dev/v1/namespaces/{:namespace}/echoes/{:name}');
    assert.equal(srv.parentSpanId, parent.spanId);
    const proxy = one(spans, (x) => x.kind === CLIENT, 'one proxy span');
    assert.equal(proxy.parentSpanId, srv.spanId);
    assert.equal(proxy.name, 'HTTP GET');
    assert.equal(proxy.attributes['gatehouse.backend'], 'APIService v1.echo.gatehouse.dev');
    assert.equal(proxy.attributes['http.response.status_code'], 200);
    // The client's traceparent is replaced by ours: same trace, our span as the parent.
    assert.equal(echo.seen.get(path)?.headers['traceparent'], `00-${parent.traceId}-${proxy.spanId}-01`);
  });

  it("converts a custom resource by its CRD's webhook in a client span whose traceparent the webhook receives", async () => {
    const hook = await startConversionWebhook();
    try {
      const crd = gadgetCrd({ url: hook.url, caBundle: caBundle(hook.ca.certPem) });
      assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
      const base = (v: string) => `/apis/conv.example.com/${v}/namespaces/default/gadgets`;
      await waitEstablished(s, crd.metadata.name, base('v2'));
      const c = await s.admin.request('POST', base('v2'), {
        apiVersion: 'conv.example.com/v2',
        kind: 'Gadget',
        metadata: { name: 'traced' },
        spec: { host: 'h', port: 1 },
      });
      assert.equal(c.status, 201, c.text);
      const parent = newTrace();
      const r = await s.admin.request('GET', `${base('v1')}/traced`, undefined, { traceparent: traceparent(parent) });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.spec.hostPort, 'h:1');
      const spans = await traceSpans(
        rx,
        '/v1/traces',
        parent.traceId,
        (x) => serverSpan(x) !== undefined && x.some((y) => y.attributes['gatehouse.client'] === 'conversion webhook'),
      );
      const call = one(spans, (x) => x.kind === CLIENT && x.attributes['gatehouse.client'] === 'conversion webhook', 'one conversion webhook span');
      assert.equal(call.name, 'HTTP POST');
      assert.equal(hook.reviews.at(-1)!.traceparent, `00-${parent.traceId}-${call.spanId}-01`);
    } finally {
      await hook.close();
    }
  });

  it('honours an unsampled parent: nothing recorded, the trace still carried to the backend', async () => {
    const parent = newTrace();
    const path = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes/unsampled`;
    const r = await s.admin.request('GET', path, undefined, { traceparent: traceparent(parent, false) });
    assert.equal(r.status, 200, r.text);
    const sent = String(echo.seen.get(path)?.headers['traceparent'] ?? '');
    assert.match(sent, new RegExp(`^00-${parent.traceId}-[0-9a-f]{16}-00$`));
    assert.notEqual(sent.split('-')[2], parent.spanId, "the server's own span id, not the client's");
    // A later sampled request's spans arrive after any of the earlier one's would have (batches go in order).
    const later = newTrace();
    await s.admin.request('GET', '/api/v1/namespaces/default', undefined, { traceparent: traceparent(later) });
    await traceSpans(rx, '/v1/traces', later.traceId, (x) => serverSpan(x) !== undefined);
    assert.equal((rx.spans.get('/v1/traces') ?? []).filter((x) => x.traceId === parent.traceId).length, 0);
  });
});

describe("tracing at samplingRatePerMillion 0 (kube's default)", { timeout: 60_000 }, () => {
  it('records only requests whose parent was sampled', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    const rx = await startOtlpReceiver();
    try {
      // An http URL with its own path is used as given.
      const config = await tracingFile(
        dir,
        'tracing.json',
        JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1beta1', kind: 'TracingConfiguration', endpoint: `http://${rx.hostPort}/zero/v1/traces` }),
      );
      const s = await startTestServer({ flags: [`--tracing-config-file=${config}`], hooks: { tracingBatchDelayMs: 20 } });
      const parent = newTrace();
      try {
        for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { traceparent: traceparent(parent) })).status, 200);
      } finally {
        // Shutdown sends everything buffered: after it, what the receiver lacks was never recorded.
        await s.close();
      }
      const spans = rx.spans.get('/zero/v1/traces') ?? [];
      assert.ok(
        spans.some((x) => x.kind === SERVER && x.parentSpanId === parent.spanId),
        `the sampled parent's request is recorded: ${JSON.stringify([...rx.spans.keys()])} ${rx.refused.join(';')} ${JSON.stringify(spans.map((x) => [x.name, x.traceId]))}`,
      );
      assert.deepEqual([...new Set(spans.map((x) => x.traceId))], [parent.traceId], 'no other request is');
      assert.deepEqual(rx.refused, []);
    } finally {
      await rx.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('incoming trace context by caller (kube 1.32+), at samplingRatePerMillion 0', { timeout: 60_000 }, () => {
  it("honours system:masters' and system:monitoring's context; an anonymous or ordinary caller's sampled context records nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    const rx = await startOtlpReceiver();
    try {
      const config = await tracingFile(dir, 'tracing.yaml', `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${rx.hostPort}\n`);
      await writeFile(join(dir, 'tokens.csv'), 'mon-token,prom,uid-prom,"system:monitoring"\nplain-token,plain,uid-plain,""\n');
      const s = await startTestServer({
        flags: [`--tracing-config-file=${config}`, `--token-auth-file=${join(dir, 'tokens.csv')}`],
        hooks: { tracingBatchDelayMs: 20 },
      });
      const other = new HttpsClient(s.url, { ca: await readFile(join(s.dataDir, 'pki', 'ca.crt'), 'utf8') });
      const masters = newTrace();
      const monitoring = newTrace();
      const untrusted: Array<{ traceId: string; spanId: string }> = [];
      try {
        const path = '/api/v1/namespaces/default/configmaps';
        assert.equal((await s.admin.request('GET', path, undefined, { traceparent: traceparent(masters) })).status, 200);
        assert.equal(
          (await other.request('GET', '/metrics', undefined, { authorization: 'Bearer mon-token', traceparent: traceparent(monitoring) })).status,
          200,
        );
        // A flood of sampled contexts from anonymous and ordinary callers, and failed authentications.
        for (let i = 0; i < 20; i++) {
          const t = newTrace();
          untrusted.push(t);
          const headers: Record<string, string> = { traceparent: traceparent(t) };
          if (i % 3 === 1) headers['authorization'] = 'Bearer plain-token';
          if (i % 3 === 2) headers['authorization'] = 'Bearer no-such-token';
          const r = await other.request('GET', path, undefined, headers);
          assert.equal(r.status, i % 3 === 2 ? 401 : 403, r.text);
        }
      } finally {
        other.close();
        // Shutdown sends everything buffered: after it, what the receiver lacks was never recorded.
        await s.close();
      }
      const spans = rx.spans.get('/v1/traces') ?? [];
      assert.ok(
        spans.some((x) => x.kind === SERVER && x.traceId === masters.traceId && x.parentSpanId === masters.spanId),
        'system:masters: the parent',
      );
      assert.ok(
        spans.some((x) => x.kind === SERVER && x.traceId === monitoring.traceId && x.parentSpanId === monitoring.spanId),
        'system:monitoring: the parent',
      );
      assert.deepEqual(new Set(spans.map((x) => x.traceId)), new Set([masters.traceId, monitoring.traceId]), 'nothing else is recorded at rate 0');
      assert.deepEqual(rx.refused, []);
    } finally {
      await rx.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tracing at samplingRatePerMillion 500000', { timeout: 120_000 }, () => {
  it('records about half of the requests without a parent, an invalid traceparent counting as none', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    const rx = await startOtlpReceiver();
    try {
      const config = await tracingFile(
        dir,
        'tracing.yaml',
        `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${rx.hostPort}\nsamplingRatePerMillion: 500000\n`,
      );
      const s = await startTestServer({ flags: [`--tracing-config-file=${config}`], hooks: { tracingBatchDelayMs: 20 } });
      const N = 200;
      try {
        for (let i = 0; i < N; i++) {
          const headers = i % 2 === 0 ? {} : { traceparent: '00-not-a-trace-01' };
          assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps', undefined, headers)).status, 200);
        }
      } finally {
        await s.close();
      }
      const roots = [...rx.spans.values()].flat().filter((x) => x.kind === SERVER && x.parentSpanId === '');
      // Binomial(200, 0.5): 100 ± 7 (one standard deviation); outside 60..140 happens about once in 10^8 runs.
      assert.ok(roots.length >= 60 && roots.length <= 140, `${roots.length} of ${N} recorded`);
      assert.equal(new Set(roots.map((x) => x.traceId)).size, roots.length, 'each its own trace');
    } finally {
      await rx.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tracing with a blocking audit webhook', { timeout: 60_000 }, () => {
  it('sends the audit webhook call of a request in its trace', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    const rx = await startOtlpReceiver();
    const audit = await startAuditReceiver();
    try {
      const config = await tracingFile(
        dir,
        'tracing.yaml',
        `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: ${rx.hostPort}\nsamplingRatePerMillion: 1000000\n`,
      );
      const policy = await tracingFile(
        dir,
        'policy.yaml',
        'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources: [{group: "", resources: [configmaps]}]\n',
      );
      const s = await startTestServer({
        flags: [
          `--tracing-config-file=${config}`,
          `--audit-policy-file=${policy}`,
          `--audit-webhook-config-file=${await audit.kubeconfig(dir)}`,
          '--audit-webhook-mode=blocking',
        ],
        hooks: { tracingBatchDelayMs: 20 },
      });
      try {
        const parent = newTrace();
        const before = audit.posts;
        assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { traceparent: traceparent(parent) })).status, 200);
        const spans = await traceSpans(rx, '/v1/traces', parent.traceId, (x) => serverSpan(x) !== undefined);
        const srv = serverSpan(spans)!;
        // RequestReceived is sent in the request's path (blocking mode), under its server span.
        const call = one(spans, (x) => x.kind === CLIENT && x.attributes['gatehouse.client'] === 'audit webhook', 'one audit webhook span');
        assert.equal(call.parentSpanId, srv.spanId);
        assert.ok(audit.traceparents.slice(before).includes(`00-${parent.traceId}-${call.spanId}-01`), JSON.stringify(audit.traceparents.slice(before)));
      } finally {
        await s.close();
      }
    } finally {
      await audit.close();
      await rx.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tracing to an unreachable collector', { timeout: 90_000 }, () => {
  it('serves every request and logs the failure once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    try {
      const port = await freePort();
      const config = await tracingFile(
        dir,
        'tracing.yaml',
        `apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:${port}\nsamplingRatePerMillion: 1000000\n`,
      );
      // An export of 1 s rather than the exporter's 10 s: the first report comes sooner, nothing else changes.
      const s = await startTestServer({ flags: [`--tracing-config-file=${config}`], hooks: { tracingBatchDelayMs: 20, tracingExportTimeoutMs: 1000 } });
      try {
        for (let i = 0; i < 20; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
        // The exporter retries a refused connection with backoff for up to its export timeout before it reports:
        // wait for that first report (bounded), so the requests after it fall in the silenced interval.
        for (let i = 0; i < 1500 && !s.logs.some((l) => l.startsWith('tracing: cannot export')); i++) await new Promise((r) => setTimeout(r, 20));
        assert.ok(
          s.logs.some((l) => l.startsWith('tracing: cannot export')),
          `the failure is logged: ${s.logs.join('\n')}`,
        );
        for (let i = 0; i < 20; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
      } finally {
        await s.close();
      }
      const failures = s.logs.filter((l) => l.startsWith('tracing: cannot export'));
      assert.equal(failures.length, 1, failures.join('\n'));
      assert.match(failures[0]!, new RegExp(`http://127\\.0\\.0\\.1:${port}/v1/traces`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('tracing to a collector that takes the connection and never answers', { timeout: 60_000 }, () => {
  it('does not hold shutdown past its deadline: the spans still buffered are logged as lost', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    const held: Socket[] = [];
    const hung = createNetServer((sock) => {
      held.push(sock);
      sock.on('error', () => undefined);
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', r));
    try {
      const port = (hung.address() as AddressInfo).port;
      const config = await tracingFile(
        dir,
        'tracing.yaml',
        `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:${port}\nsamplingRatePerMillion: 1000000\n`,
      );
      // Spans wait in the batch (a minute's delay) until shutdown flushes them into the hung collector. The export
      // outlives the shutdown's 0.3 s; 1 s rather than the exporter's 10 s keeps it from holding this file open.
      const s = await startTestServer({
        flags: [`--tracing-config-file=${config}`],
        hooks: { tracingBatchDelayMs: 60_000, tracingShutdownMs: 300, tracingExportTimeoutMs: 1000 },
      });
      for (let i = 0; i < 5; i++) assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
      await s.close();
      assert.ok(held.length > 0, 'the exporter reached the collector at shutdown');
      assert.ok(
        s.logs.some((l) => l === `tracing: spans not sent to http://127.0.0.1:${port}/v1/traces within 0.3 s of shutdown are lost`),
        s.logs.join('\n'),
      );
    } finally {
      for (const sock of held) sock.destroy();
      await new Promise((r) => hung.close(r));
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('--tracing-config-file start errors', { timeout: 60_000 }, () => {
  it('refuses to start on a file that does not parse or names unknown fields, naming the file and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-'));
    try {
      const cases: Array<[string, string, RegExp]> = [
        [
          'unknown.yaml',
          'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: localhost:4318\nsamplingRate: 5\n',
          /unknown\.yaml: samplingRate: unknown field/,
        ],
        ['syntax.yaml', 'apiVersion: [\n', /syntax\.yaml: not valid YAML or JSON/],
        [
          'rate.yaml',
          'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRatePerMillion: 1000001\n',
          /rate\.yaml: samplingRatePerMillion: Invalid value: 1000001/,
        ],
      ];
      for (const [name, body, want] of cases) {
        const file = await tracingFile(dir, name, body);
        await assert.rejects(startTestServer({ flags: [`--tracing-config-file=${file}`] }), (err: Error) => {
          assert.match(err.message, want);
          assert.ok(err.message.includes(`--tracing-config-file ${file}`), err.message);
          return true;
        });
      }
      await assert.rejects(startTestServer({ flags: [`--tracing-config-file=${join(dir, 'missing.yaml')}`] }), /--tracing-config-file .*missing\.yaml: ENOENT/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
