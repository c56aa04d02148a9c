// End to end through a real gateway process to real backends over TLS: the
// sample backend (`gatehouse sample-backend`) and an echo backend that shows
// what a backend receives.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kubectl, findKubectl, sleep, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { HttpsClient } from '../helpers/client.js';
import { parseMetrics, samples } from '../helpers/prometheus.js';
import { upgradeRoundTrip } from '../helpers/raw.js';
import { NS, register, servingPki, startEcho, startSampleBackend, waitAvailable, type EchoBackend, type Pem, type SampleBackend } from './fixture.js';

const WIDGETS = `/apis/samples.gatehouse.dev/v1/namespaces/${NS}/widgets`;

describe('aggregation through the gateway', { timeout: 180_000 }, () => {
  let gh: Gatehouse;
  let sample: SampleBackend;
  let samplePem: Pem;
  let sampleData: string;
  let frontProxyCaFile: string;
  let echo: EchoBackend;

  before(async () => {
    gh = await startGatehouse();
    const dir = tempDir('agg-certs');
    frontProxyCaFile = join(gh.dataDir, 'pki', 'front-proxy-ca.crt');
    samplePem = servingPki(dir, 'sample-api');
    sampleData = tempDir('sample-data');
    sample = await startSampleBackend({ dataDir: sampleData, pem: samplePem, frontProxyCaFile });
    const echoPem = servingPki(dir, 'echo');
    echo = await startEcho(echoPem, readFileSync(frontProxyCaFile, 'utf8'));
    await register(gh.admin, { service: 'sample-api', port: sample.port, group: 'samples.gatehouse.dev', caPem: samplePem.ca });
    await register(gh.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: echoPem.ca, gpm: 20000 });
  });

  after(async () => {
    if (process.env.AGG_DEBUG) process.stderr.write(`gateway stderr:\n${gh?.proc.stderr}\nsample stderr:\n${sample?.proc.stderr}\n`);
    await echo?.close();
    await stopAll();
  });

  it('local APIServices exist for every built-in group version and autoregister-completion is ready', async () => {
    const r = await gh.admin.request('GET', '/apis/apiregistration.k8s.io/v1/apiservices');
    const names = r.json.items.map((i: { metadata: { name: string } }) => i.metadata.name);
    for (const n of ['v1.', 'v1.coordination.k8s.io', 'v1.rbac.authorization.k8s.io', 'v1.apiregistration.k8s.io']) assert.ok(names.includes(n), n);
    const local = r.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'v1.coordination.k8s.io');
    assert.equal(local.spec.service, undefined);
    assert.equal(local.status.conditions[0].reason, 'Local');
    const ready = await gh.admin.request('GET', '/readyz/autoregister-completion');
    assert.equal(ready.status, 200);
  });

  it('a registered backend becomes Available with reason Passed', async () => {
    const c = await waitAvailable(gh.admin, 'v1.samples.gatehouse.dev', 'True');
    assert.equal(c.reason, 'Passed');
    await waitAvailable(gh.admin, 'v1.echo.gatehouse.dev', 'True');
  });

  it('widgets are created, read, listed, updated and deleted through the gateway', async () => {
    const created = await gh.admin.request('POST', WIDGETS, {
      apiVersion: 'samples.gatehouse.dev/v1',
      kind: 'Widget',
      metadata: { name: 'w1' },
      spec: { color: 'red' },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.metadata.namespace, NS);
    const got = await gh.admin.request('GET', `${WIDGETS}/w1`);
    assert.equal(got.json.spec.color, 'red');
    const upd = await gh.admin.request('PUT', `${WIDGETS}/w1`, { ...got.json, spec: { color: 'blue' } });
    assert.equal(upd.status, 200, upd.text);
    const patched = await gh.admin.request(
      'PATCH',
      `${WIDGETS}/w1`,
      { metadata: { labels: { size: 'l' } } },
      { 'content-type': 'application/merge-patch+json' },
    );
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.json.metadata.labels.size, 'l');
    const list = await gh.admin.request('GET', WIDGETS);
    assert.equal(list.json.kind, 'WidgetList');
    assert.deepEqual(
      list.json.items.map((i: { spec: { color: string } }) => i.spec.color),
      ['blue'],
    );
    const del = await gh.admin.request('DELETE', `${WIDGETS}/w1`);
    assert.equal(del.status, 200, del.text);
    assert.equal((await gh.admin.request('GET', `${WIDGETS}/w1`)).status, 404);
  });

  it('widgets have no protobuf form: JSON when Accept lists it after protobuf (client-go), 406 when it does not', async () => {
    const PB = 'application/vnd.kubernetes.protobuf';
    const created = await gh.admin.request(
      'POST',
      WIDGETS,
      { apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'pb' }, spec: { color: 'red' } },
      { accept: `${PB}, application/json` },
    );
    assert.equal(created.status, 201, created.text);
    assert.equal(created.headers['content-type'], 'application/json');
    const list = await gh.admin.request('GET', WIDGETS, undefined, { accept: `${PB}, application/json` });
    assert.equal(list.headers['content-type'], 'application/json');
    assert.equal(list.json.kind, 'WidgetList');
    for (const path of [WIDGETS, `${WIDGETS}/pb`, `${WIDGETS}?watch=1`]) {
      const r = await gh.admin.request('GET', path, undefined, { accept: PB });
      assert.equal(r.status, 406, path);
      assert.equal(r.headers['content-type'], 'application/json');
      assert.equal(r.json.reason, 'NotAcceptable');
    }
    assert.equal((await gh.admin.request('DELETE', `${WIDGETS}/pb`)).status, 200);
  });

  it('a watch through the gateway streams widget events as they happen', async () => {
    const list = await gh.admin.request('GET', WIDGETS);
    const w = await gh.admin.watch(`${WIDGETS}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    assert.equal(w.status, 200);
    await gh.admin.request('POST', WIDGETS, {
      apiVersion: 'samples.gatehouse.dev/v1',
      kind: 'Widget',
      metadata: { name: 'watched' },
      spec: { color: 'green' },
    });
    const ev = await w.next(10_000);
    assert.equal(ev?.type, 'ADDED');
    assert.equal(ev?.object.metadata.name, 'watched');
    await gh.admin.request('DELETE', `${WIDGETS}/watched`);
    assert.equal((await w.next(10_000))?.type, 'DELETED');
    w.stop();
  });

  it('a user the gateway does not authorize is refused before the backend is asked', async () => {
    const r = await gh.anonymous.request('GET', WIDGETS);
    assert.equal(r.status, 403);
    assert.equal(echo.seen.has('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes'), false);
  });

  it('the backend sees the gateway identity and never the headers the client sent', async () => {
    const path = '/apis/echo.gatehouse.dev/v1/namespaces/x/echoes';
    const r = await gh.admin.request('GET', path, undefined, {
      'X-Remote-User': 'mallory',
      'X-Remote-Group': 'system:masters',
      'X-Remote-Extra-Scopes': 'all',
      'X-Remote-Uid': '0',
      Authorization: 'Bearer not-a-token',
    });
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    assert.equal(h['x-remote-user'], 'admin');
    assert.match(h['x-remote-group'], /system:masters/);
    assert.match(h['x-remote-group'], /system:authenticated/);
    assert.equal(h['x-remote-extra-scopes'], undefined);
    assert.equal(h['x-remote-uid'], undefined);
    assert.equal(h['authorization'], undefined);
    assert.equal(r.json.peer, 'front-proxy-client');
  });

  it('an impersonated user is what the backend sees', async () => {
    await gh.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'jane-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'jane' }],
    });
    let r;
    for (let i = 0; i < 50; i++) {
      r = await gh.admin.request('GET', '/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/one', undefined, {
        'Impersonate-User': 'jane',
        'Impersonate-Group': 'devs',
        'Impersonate-Extra-Team': 'blue',
      });
      if (r.status !== 403) break;
      await sleep(100);
    }
    r = r!;
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    assert.equal(h['x-remote-user'], 'jane');
    assert.equal(h['x-remote-group'], 'devs, system:authenticated');
    assert.equal(h['x-remote-extra-team'], 'blue');
    assert.equal(
      Object.keys(h).some((k) => k.startsWith('impersonate-')),
      false,
    );
  });

  it('request bodies are forwarded', async () => {
    const r = await gh.admin.request('POST', '/apis/echo.gatehouse.dev/v1/namespaces/x/echoes', { hello: 'world' });
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(JSON.parse(r.json.body), { hello: 'world' });
  });

  it('the sample backend refuses identity headers not sent with the front-proxy certificate', async () => {
    const pki = join(gh.dataDir, 'pki');
    const direct = new HttpsClient(`https://127.0.0.1:${sample.port}`, {
      ca: samplePem.ca,
      cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
      key: readFileSync(join(pki, 'admin.key'), 'utf8'),
    });
    try {
      const r = await direct.request('GET', WIDGETS, undefined, { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' });
      assert.ok(r.status === 401 || r.status === 403, `${r.status} ${r.text}`);
    } finally {
      direct.close();
    }
  });

  it('a backend whose certificate is not signed by the caBundle is refused with a 503 naming the APIService', async () => {
    const other = servingPki(tempDir('agg-other'), 'sample-api');
    await register(gh.admin, { service: 'sample-api', port: sample.port, group: 'wrongca.gatehouse.dev', caPem: other.ca });
    const c = await waitAvailable(gh.admin, 'v1.wrongca.gatehouse.dev', 'False', 'FailedDiscoveryCheck');
    assert.match(c.message, /certificate/);
    const r = await gh.admin.request('GET', '/apis/wrongca.gatehouse.dev/v1/namespaces/x/widgets');
    assert.equal(r.status, 503);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'ServiceUnavailable');
    assert.match(r.json.message, /v1\.wrongca\.gatehouse\.dev/);
    await gh.admin.request('DELETE', '/apis/apiregistration.k8s.io/v1/apiservices/v1.wrongca.gatehouse.dev');
  });

  it('an APIService whose service has no endpoints is unavailable with MissingEndpoints', async () => {
    await gh.admin.request('POST', `/api/v1/namespaces/${NS}/services`, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'empty' },
      spec: { ports: [{ name: 'https', port: 443 }] },
    });
    await gh.admin.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.empty.gatehouse.dev' },
      spec: {
        group: 'empty.gatehouse.dev',
        version: 'v1',
        service: { namespace: NS, name: 'empty' },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 1,
      },
    });
    await waitAvailable(gh.admin, 'v1.empty.gatehouse.dev', 'False', 'MissingEndpoints');
    await gh.admin.request('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.nosvc.gatehouse.dev' },
      spec: {
        group: 'nosvc.gatehouse.dev',
        version: 'v1',
        service: { namespace: NS, name: 'absent' },
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 1,
      },
    });
    await waitAvailable(gh.admin, 'v1.nosvc.gatehouse.dev', 'False', 'ServiceNotFound');
    // kube-aggregator's metrics: 1 while unavailable, the transitions counted by reason; an available one is 0.
    const m = parseMetrics((await gh.admin.request('GET', '/metrics')).text);
    assert.equal(samples(m, 'aggregator_unavailable_apiservice', { name: 'v1.nosvc.gatehouse.dev' })[0]?.value, '1');
    assert.equal(samples(m, 'aggregator_unavailable_apiservice', { name: 'v1.samples.gatehouse.dev' })[0]?.value, '0');
    assert.ok(Number(samples(m, 'aggregator_unavailable_apiservice_total', { name: 'v1.empty.gatehouse.dev', reason: 'MissingEndpoints' })[0]?.value) >= 1);
    for (const n of ['v1.empty.gatehouse.dev', 'v1.nosvc.gatehouse.dev']) await gh.admin.request('DELETE', `/apis/apiregistration.k8s.io/v1/apiservices/${n}`);
  });

  it('discovery merges the remote groups in priority order', async () => {
    const apis = await gh.admin.request('GET', '/apis');
    const names: string[] = apis.json.groups.map((g: { name: string }) => g.name);
    assert.equal(names[0], 'echo.gatehouse.dev', 'groupPriorityMinimum 20000 comes before every built-in group');
    assert.equal(names.at(-1), 'samples.gatehouse.dev', 'groupPriorityMinimum 1000 comes after every built-in group');
    const group = await gh.admin.request('GET', '/apis/samples.gatehouse.dev');
    assert.equal(group.json.preferredVersion.groupVersion, 'samples.gatehouse.dev/v1');
    const gv = await gh.admin.request('GET', '/apis/samples.gatehouse.dev/v1');
    assert.equal(gv.status, 200);
    assert.ok(gv.json.resources.some((r: { name: string }) => r.name === 'widgets'));
    // Aggregated discovery: the remote resources were fetched from the backend (eventually).
    const deadline = Date.now() + 15_000;
    for (;;) {
      const agg = await gh.admin.request('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
      const g = agg.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'samples.gatehouse.dev');
      const echoG = agg.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'echo.gatehouse.dev');
      if (g?.versions[0].resources.some((r: { resource: string }) => r.resource === 'widgets') && echoG?.versions[0].resources.length === 1) {
        assert.equal(g.versions[0].freshness, 'Current');
        assert.equal(agg.json.items[0].metadata.name, 'echo.gatehouse.dev');
        break;
      }
      assert.ok(Date.now() < deadline, `aggregated discovery never listed widgets: ${agg.text.slice(0, 300)}`);
      await sleep(200);
    }
  });

  it('kubectl api-resources and kubectl get show the remote types', { skip: findKubectl() ? false : 'kubectl not installed' }, async () => {
    const k = new Kubectl(findKubectl()!, gh.kubeconfig);
    const out = await k.ok(['api-resources', '--api-group=samples.gatehouse.dev']);
    assert.match(out, /widgets\s+wdg\s+samples\.gatehouse\.dev\/v1\s+true\s+Widget/);
    // Validated as kubectl validates: /openapi/v2 (protobuf) has no schema for the remote kind, so kubectl skips it.
    await k.ok(
      ['apply', '-f', '-'],
      JSON.stringify({ apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'kw', namespace: NS }, spec: { color: 'teal' } }),
    );
    const got = await k.ok(['get', 'wdg', '-n', NS]);
    assert.match(got, /kw\s+teal/);
  });

  it('an upgrade is forwarded only after authorization, and a refused one closes the connection', async () => {
    const ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
    const cert = readFileSync(join(gh.dataDir, 'pki', 'admin.crt'), 'utf8');
    const key = readFileSync(join(gh.dataDir, 'pki', 'admin.key'), 'utf8');
    const raw = (path: string, withCert: boolean) => upgradeRoundTrip({ port: gh.port, ca, ...(withCert ? { cert, key } : {}) }, path);
    const denied = await raw('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/a/exec', false);
    assert.match(denied.text, /^HTTP\/1\.1 403/);
    assert.equal(denied.closed, true);
    assert.equal(echo.seen.has('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/a/exec'), false);
    const ok = await raw('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/a/exec', true);
    assert.match(ok.text, /^HTTP\/1\.1 101/);
    assert.match(ok.text, /ping$/);
    assert.equal(echo.seen.get('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/a/exec')?.headers['x-remote-user'], 'admin');
    const refused = await raw('/apis/echo.gatehouse.dev/v1/namespaces/x/echoes/a/refuse', true);
    assert.match(refused.text, /^HTTP\/1\.1 400/);
    assert.equal(refused.closed, true);
  });

  it('stopping the backend makes it unavailable with a quick 503 and stale discovery, and restarting it recovers', async () => {
    await gh.admin.request('POST', WIDGETS, {
      apiVersion: 'samples.gatehouse.dev/v1',
      kind: 'Widget',
      metadata: { name: 'durable' },
      spec: { color: 'black' },
    });
    await sample.stop();
    // Nothing listens on the backend's port: the dial is refused at once (not our timeout, nor a 502 of a cut answer).
    const first = await gh.admin.request('GET', WIDGETS);
    assert.equal(first.status, 503);
    assert.match(first.json.message, /v1\.samples\.gatehouse\.dev/);
    assert.match(first.json.message, /: error trying to reach service: connect ECONNREFUSED /);
    const c = await waitAvailable(gh.admin, 'v1.samples.gatehouse.dev', 'False', 'FailedDiscoveryCheck');
    assert.match(c.message, /failing or missing response/);
    assert.match(c.message, /: connect ECONNREFUSED /);
    // Quick without a clock: once unavailable, the 503 is the Available condition's (its reason and the probe's
    // refused dial), answered without dialing the backend or waiting on anything of it.
    const quick = await gh.admin.request('GET', WIDGETS);
    assert.equal(quick.status, 503);
    assert.equal(quick.json.reason, 'ServiceUnavailable');
    assert.match(quick.json.message, /\): FailedDiscoveryCheck: failing or missing response from https:\/\/\S+: connect ECONNREFUSED /);
    const agg = await gh.admin.request('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' });
    const g = agg.json.items.find((i: { metadata: { name: string } }) => i.metadata.name === 'samples.gatehouse.dev');
    assert.equal(g.versions[0].freshness, 'Stale');

    sample = await startSampleBackend({ port: sample.port, dataDir: sampleData, pem: samplePem, frontProxyCaFile });
    await waitAvailable(gh.admin, 'v1.samples.gatehouse.dev', 'True', 'Passed');
    const back = await gh.admin.request('GET', `${WIDGETS}/durable`);
    assert.equal(back.status, 200, back.text);
    assert.equal(back.json.spec.color, 'black');
  });
});
