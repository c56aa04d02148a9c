// Tracing in a backend process (`gatehouse sample-backend
// --tracing-config-file`): a request through the gateway is one trace across
// both processes — the backend's server span is a child of the gateway's
// proxy span (the traceparent it was sent: a front proxy's context is trusted,
// as a privileged caller's), with the backend's own authorization and store
// spans under it (its span starts once authentication named the caller). Both export to one
// real OTLP/HTTP receiver, at different paths. A tracing file that does not
// load stops the backend before it starts. The backend's own audit log
// (--audit-policy-file, --audit-log-path) records the end user under the
// Audit-ID the gateway answered with.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { NS, register, servingPki, startSampleBackend, waitAvailable, type SampleBackend } from '../aggregation/fixture.js';
import { runGatehouse, stopAll } from '../e2e/helpers.js';
import { startOtlpReceiver, traceSpans, type OtlpReceiver } from './receiver.js';
import { completeLines } from '../helpers/auditlog.js';

const SERVER = 2;
const CLIENT = 3;

describe('tracing and audit in a backend process', { timeout: 180_000 }, () => {
  let dir: string;
  let rx: OtlpReceiver;
  let s: TestServer;
  let sample: SampleBackend;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-tracing-backend-'));
    rx = await startOtlpReceiver();
    const config = (path: string) =>
      `apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nendpoint: http://${rx.hostPort}${path}\nsamplingRatePerMillion: 1000000\n`;
    await writeFile(join(dir, 'gateway.yaml'), config('/gateway'));
    await writeFile(join(dir, 'backend.yaml'), config('/backend'));
    await writeFile(
      join(dir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Request\n  resources: [{group: samples.gatehouse.dev}]\n',
    );
    s = await startTestServer({ flags: [`--tracing-config-file=${join(dir, 'gateway.yaml')}`], hooks: { tracingBatchDelayMs: 20 } });
    const pem = servingPki(dir, 'sample-api');
    // The backend process sends its spans every 50 ms rather than the SDK's 5 s (the SDK reads this variable).
    process.env['OTEL_BSP_SCHEDULE_DELAY'] = '50';
    sample = await startSampleBackend({
      dataDir: join(dir, 'sample-data'),
      pem,
      frontProxyCaFile: join(s.dataDir, 'pki', 'front-proxy-ca.crt'),
      extra: [
        `--tracing-config-file=${join(dir, 'backend.yaml')}`,
        `--audit-policy-file=${join(dir, 'policy.yaml')}`,
        `--audit-log-path=${join(dir, 'backend-audit.log')}`,
      ],
    });
    await register(s.admin, { service: 'sample-api', port: sample.port, group: 'samples.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(s.admin, 'v1.samples.gatehouse.dev', 'True');
  });

  after(async () => {
    await sample?.stop();
    await s?.close();
    await stopAll();
    await rx?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("the backend's server span is a child of the gateway's proxy span, with its own authorization and store spans", async () => {
    const traceId = randomBytes(16).toString('hex');
    const clientSpan = randomBytes(8).toString('hex');
    const r = await s.admin.request(
      'POST',
      `/apis/samples.gatehouse.dev/v1/namespaces/${NS}/widgets`,
      { apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'traced' }, spec: { color: 'red' } },
      { traceparent: `00-${traceId}-${clientSpan}-01` },
    );
    assert.equal(r.status, 201, r.text);

    const gw = await traceSpans(rx, '/gateway', traceId, (x) => x.some((y) => y.kind === CLIENT));
    const gwServer = gw.find((x) => x.kind === SERVER)!;
    assert.equal(gwServer.parentSpanId, clientSpan);
    const proxy = gw.find((x) => x.kind === CLIENT && x.attributes['gatehouse.backend'] === 'APIService v1.samples.gatehouse.dev');
    assert.ok(proxy, JSON.stringify(gw.map((x) => [x.name, x.attributes])));
    assert.equal(proxy.parentSpanId, gwServer.spanId);

    const be = await traceSpans(rx, '/backend', traceId, (x) => x.some((y) => y.kind === SERVER) && x.some((y) => y.name.startsWith('Create ')));
    const srv = be.filter((x) => x.kind === SERVER);
    assert.equal(srv.length, 1);
    const beServer = srv[0]!;
    assert.equal(beServer.parentSpanId, proxy.spanId, 'parented by the traceparent the gateway sent');
    assert.equal(beServer.name, 'POST /apis/samples.gatehouse.dev/v1/namespaces/{:namespace}/widgets');
    assert.equal(beServer.attributes['http.response.status_code'], 201);
    assert.equal(beServer.resource['service.name'], 'sample-backend');
    assert.equal(gwServer.resource['service.name'], 'apiserver');
    const child = (name: string) => {
      const found = be.filter((x) => x.name === name || (name.endsWith(' ') && x.name.startsWith(name)));
      assert.equal(found.length, 1, `${name}: ${JSON.stringify(be.map((x) => x.name))}`);
      assert.equal(found[0]!.parentSpanId, beServer.spanId);
      return found[0]!;
    };
    // Whether the context is trusted depends on who sent it: the span starts after authentication.
    assert.equal(be.filter((x) => x.name === 'authentication').length, 0);
    assert.equal(child('authorization').attributes['authorization.decision'], 'allow');
    assert.match(String(child('Create ').attributes['key']), /widgets/);
    assert.deepEqual(rx.refused, []);
  });

  it("the backend writes its own audit events, under the gateway's Audit-ID, for the end user", async () => {
    const r = await s.admin.request('POST', `/apis/samples.gatehouse.dev/v1/namespaces/${NS}/widgets`, {
      apiVersion: 'samples.gatehouse.dev/v1',
      kind: 'Widget',
      metadata: { name: 'audited' },
      spec: { color: 'blue' },
    });
    assert.equal(r.status, 201, r.text);
    const id = String(r.headers['audit-id']);
    let ev: Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 200 && !ev; i++) {
      ev = (await completeLines(join(dir, 'backend-audit.log'))).map((l) => JSON.parse(l) as Record<string, any>).find((e) => e['auditID'] === id); // eslint-disable-line @typescript-eslint/no-explicit-any
      if (!ev) await new Promise((res) => setTimeout(res, 25));
    }
    assert.ok(ev, `no event ${id} in the backend's audit log`);
    assert.equal(ev['stage'], 'ResponseComplete');
    assert.equal(ev['level'], 'Request');
    assert.equal(ev['user']['username'], 'admin', 'the user the gateway authenticated, from the request headers');
    assert.equal(ev['objectRef']['resource'], 'widgets');
    assert.equal(ev['requestObject']['spec']['color'], 'blue');
    assert.equal(ev['responseStatus']['code'], 201);
  });

  it('a tracing file that does not load stops the backend before it starts, naming the file', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\nsamplingRate: 5\n');
    const run = await runGatehouse(['sample-backend', `--tracing-config-file=${bad}`, `--data-dir=${join(dir, 'never')}`]);
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, new RegExp(`--tracing-config-file ${bad.replace(/[.]/g, '\\.')}: samplingRate: unknown field`));
    assert.equal(existsSync(join(dir, 'never', 'samples-store')), false, 'no store was opened');
  });
});
