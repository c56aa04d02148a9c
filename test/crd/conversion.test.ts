// CRD conversion webhooks against a real HTTPS webhook started here
// (convertwebhook.ts): objects stored in the storage version (v2), reads,
// lists, watches and writes through v1 converted by ConversionReview v1 over
// TLS verified with the CRD's caBundle (by URL and through a Service and its
// EndpointSlice), the webhook's answers checked as kube checks them, and a
// webhook that is down or answers garbage answering 500 with nothing stored.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestServer, freePort, type TestServer } from '../helpers/server.js';
import { generateCa } from '../../certs/pki.js';
import { CRD_PATH, waitEstablished } from './fixtures.js';
import { caBundle, gadgetCrd, installGadgets, startConversionWebhook, type ConversionWebhook } from './convertwebhook.js';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';

const kubectlBinary = findKubectl('1.33') ?? findKubectl();

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const base = (v: string, plural = 'gadgets') => `/apis/conv.example.com/${v}/namespaces/default/${plural}`;
const v1Gadget = (name: string, hostPort: string) => ({ apiVersion: 'conv.example.com/v1', kind: 'Gadget', metadata: { name }, spec: { hostPort } });
const v2Gadget = (name: string, host: string, port: number) => ({
  apiVersion: 'conv.example.com/v2',
  kind: 'Gadget',
  metadata: { name },
  spec: { host, port },
});

describe('a CRD converted by a webhook named by URL', () => {
  let s: TestServer;
  let hook: ConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook();
    s = await startTestServer();
    await installGadgets(s, hook);
  });
  after(async () => {
    await s.close();
    await hook.close();
  });
  beforeEach(() => {
    hook.mode = 'ok';
    hook.reviews.length = 0;
  });
  let touches = 0;
  /** A new revision of `name`, written through the storage version: a state no read has converted yet. */
  const touch = async (name: string) => {
    const mode = hook.mode;
    hook.mode = 'ok';
    const r = await s.admin.request(
      'PATCH',
      `${base('v2')}/${name}`,
      { metadata: { annotations: { touched: String(++touches) } } },
      {
        'content-type': 'application/merge-patch+json',
      },
    );
    assert.equal(r.status, 200, r.text);
    hook.mode = mode;
  };

  it('stores a v1 create in v2 and serves it through both versions', async () => {
    const c = await s.admin.request('POST', base('v1'), v1Gadget('a', 'example.org:8080'));
    assert.equal(c.status, 201, c.text);
    assert.equal(c.json.apiVersion, 'conv.example.com/v1');
    assert.deepEqual(c.json.spec, { hostPort: 'example.org:8080' });
    assert.equal(c.json.metadata.generation, 1, "metadata other than labels and annotations is the server's, not the webhook's");
    const first = hook.reviews[0]!.review;
    assert.equal(first.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(first.kind, 'ConversionReview');
    assert.equal(first.request.desiredAPIVersion, 'conv.example.com/v2');
    assert.match(first.request.uid, /^[0-9a-f-]{36}$/);
    assert.equal(first.request.objects.length, 1);
    const v2 = await s.admin.request('GET', `${base('v2')}/a`);
    assert.equal(v2.status, 200, v2.text);
    assert.deepEqual(v2.json.spec, { host: 'example.org', port: 8080 }, 'stored in the storage version');
    hook.reviews.length = 0;
    const v1 = await s.admin.request('GET', `${base('v1')}/a`);
    assert.equal(v1.status, 200, v1.text);
    assert.equal(v1.json.apiVersion, 'conv.example.com/v1');
    assert.deepEqual(v1.json.spec, { hostPort: 'example.org:8080' });
    assert.equal(v1.json.metadata.resourceVersion, v2.json.metadata.resourceVersion);
    assert.equal(hook.reviews.length, 0, "the create's answer converted this state to v1 already");
  });

  it('converts each stored state once per version: repeated reads, lists and a new revision', async () => {
    assert.equal((await s.admin.request('POST', base('v2'), v2Gadget('cached', 'c.example', 1))).status, 201);
    hook.reviews.length = 0;
    for (let i = 0; i < 3; i++) {
      const g = await s.admin.request('GET', `${base('v1')}/cached`);
      assert.equal(g.status, 200, g.text);
      assert.deepEqual(g.json.spec, { hostPort: 'c.example:1' });
    }
    assert.equal(hook.reviews.length, 1, 'three reads of one revision, one ConversionReview');
    const l = await s.admin.request('GET', base('v1'));
    assert.equal(l.status, 200, l.text);
    const sent = hook.reviews.slice(1).flatMap((r) => r.review.request.objects.map((o: Json) => o.metadata.name));
    assert.ok(!sent.includes('cached'), `a list sends only states not converted yet: ${sent.join(', ')}`);
    assert.equal((l.json.items as Json[]).find((i) => i.metadata.name === 'cached')?.spec.hostPort, 'c.example:1');
    const p = await s.admin.request('PATCH', `${base('v2')}/cached`, { spec: { port: 2 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    hook.reviews.length = 0;
    assert.deepEqual((await s.admin.request('GET', `${base('v1')}/cached`)).json.spec, { hostPort: 'c.example:2' });
    assert.equal(hook.reviews.length, 1, 'a new revision is converted again');
    hook.reviews.length = 0;
    const dry = await s.admin.request('PATCH', `${base('v2')}/cached?dryRun=All`, { spec: { port: 3 } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(dry.status, 200, dry.text);
    assert.deepEqual((await s.admin.request('GET', `${base('v1')}/cached`)).json.spec, { hostPort: 'c.example:2' }, 'a dry run converts nothing kept');
  });

  it('validates a write against the schema of the version it was sent in, before any conversion', async () => {
    const r = await s.admin.request('POST', base('v1'), { ...v1Gadget('bad', 'x'), spec: { hostPort: 5 } });
    assert.equal(r.status, 422, r.text);
    assert.match(r.json.message, /spec\.hostPort: Invalid value/);
    assert.equal(hook.reviews.length, 0, 'an invalid object is never sent to the webhook');
  });

  it('lists through v1 with one ConversionReview for the whole list; v2 lists call nothing', async () => {
    assert.equal((await s.admin.request('POST', base('v2'), v2Gadget('b', 'b.example', 443))).status, 201);
    hook.reviews.length = 0;
    const l = await s.admin.request('GET', base('v1'));
    assert.equal(l.status, 200, l.text);
    assert.equal(l.json.apiVersion, 'conv.example.com/v1');
    const byName = new Map(l.json.items.map((i: Json) => [i.metadata.name, i]));
    assert.deepEqual((byName.get('b') as Json).spec, { hostPort: 'b.example:443' });
    assert.ok(l.json.items.every((i: Json) => i.apiVersion === 'conv.example.com/v1'));
    assert.equal(hook.reviews.length, 1);
    assert.deepEqual(
      hook.reviews[0]!.review.request.objects.map((o: Json) => o.metadata.name),
      ['b'],
      'the states not converted yet, in one review',
    );
    await touch('a');
    await touch('b');
    hook.reviews.length = 0;
    const table = await s.admin.request('GET', base('v1'), undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(table.status, 200, table.text);
    assert.equal(hook.reviews.length, 1);
    hook.reviews.length = 0;
    assert.equal((await s.admin.request('GET', base('v2'))).status, 200);
    assert.equal(hook.reviews.length, 0);
  });

  it('updates and patches through v1: the old object converted in, the new one converted to storage', async () => {
    const cur = (await s.admin.request('GET', `${base('v1')}/a`)).json as Json;
    const u = await s.admin.request('PUT', `${base('v1')}/a`, { ...cur, spec: { hostPort: 'example.org:9090' } });
    assert.equal(u.status, 200, u.text);
    assert.deepEqual(u.json.spec, { hostPort: 'example.org:9090' });
    assert.equal(u.json.metadata.generation, 2);
    assert.deepEqual((await s.admin.request('GET', `${base('v2')}/a`)).json.spec, { host: 'example.org', port: 9090 });
    const p = await s.admin.request('PATCH', `${base('v1')}/a`, { spec: { hostPort: 'other.org:1' } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    assert.deepEqual(p.json.spec, { hostPort: 'other.org:1' });
    assert.deepEqual((await s.admin.request('GET', `${base('v2')}/a`)).json.spec, { host: 'other.org', port: 1 });
    const st = await s.admin.request('PATCH', `${base('v1')}/a/status`, { status: { ready: true } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(st.status, 200, st.text);
    assert.equal((await s.admin.request('GET', `${base('v2')}/a`)).json.status.ready, true);
    const ap = await s.admin.request(
      'PATCH',
      `${base('v1')}/a?fieldManager=t&force=true`,
      JSON.stringify({ apiVersion: 'conv.example.com/v1', kind: 'Gadget', metadata: { name: 'a' }, spec: { hostPort: 'applied.org:2' } }),
      { 'content-type': 'application/apply-patch+yaml' },
    );
    assert.equal(ap.status, 200, ap.text);
    assert.deepEqual((await s.admin.request('GET', `${base('v2')}/a`)).json.spec, { host: 'applied.org', port: 2 });
  });

  it('watches through v1 with every event converted, in order', async () => {
    const w = await s.admin.watch(`${base('v1')}?watch=true&fieldSelector=metadata.name%3Dwatched`);
    assert.equal(w.status, 200);
    try {
      assert.equal((await s.admin.request('POST', base('v2'), v2Gadget('watched', 'w.example', 1))).status, 201);
      for (let port = 2; port <= 4; port++) {
        const p = await s.admin.request('PATCH', `${base('v2')}/watched`, { spec: { port } }, { 'content-type': 'application/merge-patch+json' });
        assert.equal(p.status, 200, p.text);
      }
      const evs = await w.take(4);
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'MODIFIED', 'MODIFIED'],
      );
      assert.deepEqual(
        evs.map((e) => e.object.spec.hostPort),
        ['w.example:1', 'w.example:2', 'w.example:3', 'w.example:4'],
      );
      assert.ok(evs.every((e) => e.object.apiVersion === 'conv.example.com/v1'));
      hook.mode = 'failure';
      assert.equal(
        (await s.admin.request('PATCH', `${base('v2')}/watched`, { spec: { port: 5 } }, { 'content-type': 'application/merge-patch+json' })).status,
        200,
      );
      const err = await w.next();
      assert.equal(err?.type, 'ERROR', 'an event the webhook cannot convert ends the watch with an error');
      assert.equal(err?.object.code, 500);
      assert.match(err?.object.message, /^conversion webhook for conv\.example\.com\/v2, Kind=Gadget returned invalid response: cannot convert gadgets today/);
      assert.ok(await w.waitEnd());
    } finally {
      w.stop();
    }
  });

  it(
    'serves kubectl through the non-storage version: apply, get -o yaml, and a failing webhook as its error',
    { skip: kubectlBinary ? false : 'kubectl is not installed' },
    async () => {
      const k = new Kubectl(kubectlBinary!, s.kubeconfig);
      try {
        const yaml =
          'apiVersion: conv.example.com/v1\nkind: Gadget\nmetadata:\n  name: kubectl-made\n  namespace: default\nspec:\n  hostPort: kube.example:6443\n';
        assert.match(await k.ok(['apply', '-f', '-'], yaml), /gadget\.conv\.example\.com\/kubectl-made created/);
        assert.deepEqual((await s.admin.request('GET', `${base('v2')}/kubectl-made`)).json.spec, { host: 'kube.example', port: 6443 });
        const got = await k.ok(['get', 'gadgets.v1.conv.example.com', 'kubectl-made', '-n', 'default', '-o', 'jsonpath={.apiVersion} {.spec.hostPort}']);
        assert.equal(got, 'conv.example.com/v1 kube.example:6443');
        hook.mode = 'failure';
        await touch('kubectl-made');
        const failed = await k.run(['get', 'gadgets.v1.conv.example.com', 'kubectl-made', '-n', 'default']);
        assert.notEqual(failed.code, 0);
        assert.match(
          failed.stderr,
          /Error from server: conversion webhook for conv\.example\.com\/v2, Kind=Gadget returned invalid response: cannot convert gadgets today/,
        );
      } finally {
        await stopAll();
      }
    },
  );

  it('keeps labels the webhook sets, and refuses invalid ones', async () => {
    hook.mode = 'relabel';
    await touch('b');
    const g = await s.admin.request('GET', `${base('v1')}/b`);
    assert.equal(g.status, 200, g.text);
    assert.deepEqual(g.json.metadata.labels, { converted: 'yes' });
    hook.mode = 'bad-label';
    await touch('b');
    const bad = await s.admin.request('GET', `${base('v1')}/b`);
    assert.equal(bad.status, 500, bad.text);
    assert.match(bad.json.message, /^conversion webhook for conv\.example\.com\/v2, Kind=Gadget returned invalid metadata: metadata\.labels: /);
  });

  const failures: Array<[ConversionWebhook['mode'], RegExp]> = [
    ['wrong-uid', /returned invalid response: expected response\.uid="[0-9a-f-]{36}", got "not-the-request"$/],
    ['failure', /returned invalid response: cannot convert gadgets today$/],
    ['failure-no-message', /returned invalid response: response\.result\.status was 'Failure', not 'Success'$/],
    ['wrong-count', /failed, no objects returned$/],
    ['rename', /returned invalid object: must have the same name: b != renamed$/],
    ['wrong-version', /returned invalid object at index 0: invalid groupVersion \(expected conv\.example\.com\/v1, received conv\.example\.com\/v3\)$/],
    ['http-500', /failed: the server responded with the status code 500 but did not return more information$/],
  ];
  for (const [mode, message] of failures) {
    it(`answers 500 when the webhook's answer is bad: ${mode}`, async () => {
      hook.mode = mode;
      await touch('b');
      const r = await s.admin.request('GET', `${base('v1')}/b`);
      assert.equal(r.status, 500, r.text);
      assert.equal(r.json.kind, 'Status');
      assert.match(r.json.message, /^conversion webhook for conv\.example\.com\/v2, Kind=Gadget /);
      assert.match(r.json.message, message);
      assert.equal((await s.admin.request('GET', `${base('v2')}/b`)).status, 200, 'the storage version needs no webhook');
    });
  }

  it("counts a list's converted objects", async () => {
    hook.mode = 'wrong-count';
    await touch('b');
    const r = await s.admin.request('GET', base('v1'));
    assert.equal(r.status, 500, r.text);
    assert.match(r.json.message, /^conversion webhook for conv\.example\.com\/v2, Kind=GadgetList returned \d+ objects, expected \d+$/);
  });

  it('stores nothing when a create or an update cannot be converted', async () => {
    hook.mode = 'failure';
    const c = await s.admin.request('POST', base('v1'), v1Gadget('never', 'x:1'));
    assert.equal(c.status, 500, c.text);
    assert.equal((await s.admin.request('GET', `${base('v2')}/never`)).status, 404);
    hook.mode = 'ok';
    const before = (await s.admin.request('GET', `${base('v2')}/b`)).json as Json;
    const cur = (await s.admin.request('GET', `${base('v1')}/b`)).json as Json;
    hook.mode = 'not-json';
    const u = await s.admin.request('PUT', `${base('v1')}/b`, { ...cur, spec: { hostPort: 'changed:2' } });
    assert.equal(u.status, 500, u.text);
    assert.match(u.json.message, /^conversion webhook for conv\.example\.com\/v1, Kind=Gadget failed: /, 'the new object, on its way to storage');
    const afterwards = (await s.admin.request('GET', `${base('v2')}/b`)).json as Json;
    assert.equal(afterwards.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.deepEqual(afterwards.spec, before.spec);
  });
});

describe('a CRD converted by a webhook behind a Service, and webhooks that cannot be reached', () => {
  let s: TestServer;
  let hook: ConversionWebhook;
  before(async () => {
    hook = await startConversionWebhook(['gadget-conv.default.svc']);
    s = await startTestServer();
    const svc = await s.admin.request('POST', '/api/v1/namespaces/default/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'gadget-conv' },
      spec: { ports: [{ name: 'https', port: 8443, targetPort: hook.port, protocol: 'TCP' }] },
    });
    assert.equal(svc.status, 201, svc.text);
    const slice = await s.admin.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'gadget-conv-1', labels: { 'kubernetes.io/service-name': 'gadget-conv' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: hook.port, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    assert.equal(slice.status, 201, slice.text);
    const other = generateCa('another-ca');
    const dead = await freePort();
    const crds = [
      gadgetCrd({ service: { namespace: 'default', name: 'gadget-conv', path: '/convert', port: 8443 }, caBundle: caBundle(hook.ca.certPem) }),
      gadgetCrd({ url: hook.url, caBundle: caBundle(other.certPem) }, 'untrusteds'),
      gadgetCrd({ url: `https://127.0.0.1:${dead}/convert`, caBundle: caBundle(hook.ca.certPem) }, 'deadhooks'),
      gadgetCrd({ service: { namespace: 'default', name: 'no-such-service', path: '/convert' }, caBundle: caBundle(hook.ca.certPem) }, 'lostservices'),
    ];
    for (const crd of crds) {
      const r = await s.admin.request('POST', CRD_PATH, crd);
      assert.equal(r.status, 201, r.text);
      await waitEstablished(s, crd.metadata.name, base('v2', crd.spec.names.plural));
    }
  });
  after(async () => {
    await s.close();
    await hook.close();
  });

  it("reaches the webhook through the Service's EndpointSlice, verifying <service>.<namespace>.svc against the caBundle", async () => {
    const c = await s.admin.request('POST', base('v1'), v1Gadget('svc', 'example.org:8080'));
    assert.equal(c.status, 201, c.text);
    assert.deepEqual((await s.admin.request('GET', `${base('v2')}/svc`)).json.spec, { host: 'example.org', port: 8080 });
    assert.deepEqual((await s.admin.request('GET', `${base('v1')}/svc`)).json.spec, { hostPort: 'example.org:8080' });
    assert.ok(hook.reviews.length >= 2);
  });

  for (const [plural, why] of [
    ['untrusteds', /failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert": .*(certificate|self.signed|issuer)/i],
    ['deadhooks', /failed: Post "https:\/\/127\.0\.0\.1:\d+\/convert": .*ECONNREFUSED/],
    ['lostservices', /failed: service\/no-such-service in "default" is not present$/],
  ] as const) {
    it(`answers 500 and stores nothing when the webhook cannot be used: ${plural}`, async () => {
      const kind = `${plural[0]!.toUpperCase()}${plural.slice(1, -1)}`;
      const reviews = hook.reviews.length;
      const c = await s.admin.request('POST', base('v1', plural), { ...v1Gadget('x', 'a:1'), kind });
      assert.equal(c.status, 500, c.text);
      assert.match(c.json.message, new RegExp(`^conversion webhook for conv\\.example\\.com/v1, Kind=${kind} `));
      assert.match(c.json.message, why);
      assert.equal((await s.admin.request('GET', `${base('v2', plural)}/x`)).status, 404, 'nothing stored half-way');
      assert.equal(hook.reviews.length, reviews, 'an untrusted peer is never sent the objects');
      // The storage version is served without the webhook; the rest of the server keeps serving.
      assert.equal((await s.admin.request('POST', base('v2', plural), { ...v2Gadget('y', 'a', 1), kind })).status, 201);
      const g = await s.admin.request('GET', `${base('v1', plural)}/y`);
      assert.equal(g.status, 500, g.text);
      assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps')).status, 200);
    });
  }
});
