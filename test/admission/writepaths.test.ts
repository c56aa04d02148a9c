// Admission webhooks on every kind of write: patch, server-side apply,
// deletecollection, the scale subresource, custom resources through
// matchPolicy Equivalent (a webhook registered for v2 sees a v1 write in v2,
// and its patch lands), and kubectl's message for a denial.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';
import { CRD_PATH, crontabCrd, waitEstablished } from '../crd/fixtures.js';
import { startWebhookServer, type WebhookServer } from './webhookserver.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const kubectlBinary = findKubectl('1.33') ?? findKubectl();
const ADM = '/apis/admissionregistration.k8s.io/v1';
const CM = '/api/v1/namespaces/default/configmaps';
const CT = (v: string) => `/apis/stable.example.com/${v}/namespaces/default/crontabs`;
let seq = 0;
const unique = (p: string) => `${p}-${++seq}`;

/** The CronTab CRD served in v1 (storage) and v2, conversion None. */
function twoVersionCrd(): Json {
  const crd = crontabCrd() as Json;
  const v1 = crd.spec.versions[0];
  crd.spec.versions = [v1, { ...structuredClone(v1), name: 'v2', storage: false }];
  return crd;
}

describe('webhooks on every write path', () => {
  let s: TestServer;
  let hooks: WebhookServer;
  const created: string[] = [];

  async function configure(kind: 'validating' | 'mutating', hook: Json): Promise<void> {
    const name = unique(kind);
    const plural = `${kind}webhookconfigurations`;
    const r = await s.admin.request('POST', `${ADM}/${plural}`, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: kind === 'validating' ? 'ValidatingWebhookConfiguration' : 'MutatingWebhookConfiguration',
      metadata: { name },
      webhooks: [
        {
          clientConfig: { url: hooks.url(`/${hook['name']}`), caBundle: hooks.caBundle },
          sideEffects: 'None',
          admissionReviewVersions: ['v1'],
          ...hook,
        },
      ],
    });
    assert.equal(r.status, 201, r.text);
    created.push(`${ADM}/${plural}/${name}`);
  }

  before(async () => {
    hooks = await startWebhookServer();
    s = await startTestServer();
    const crd = twoVersionCrd();
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    await waitEstablished(s, crd.metadata.name, CT('v2'));
  });
  after(async () => {
    await s.close();
    await hooks.close();
    stopAll();
  });
  beforeEach(async () => {
    for (const path of created.splice(0)) await s.admin.request('DELETE', path);
    hooks.reset();
  });

  const cmRule = (ops: string[]) => [{ operations: ops, apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }];

  it('patch and server-side apply are UPDATE and CREATE; deletecollection sends each object', async () => {
    await configure('validating', { name: 'all-ops.example.com', rules: cmRule(['*']) });
    const names = [unique('p'), unique('p')];
    await eventually('in force', async () => {
      await s.admin.request('POST', `${CM}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'probe' } });
      return hooks.received('/all-ops.example.com').length > 0;
    });
    for (const name of names) {
      const c = await s.admin.request(
        'PATCH',
        `${CM}/${name}?fieldManager=test`,
        `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n  labels:\n    batch: wp\n`,
        {
          'content-type': 'application/apply-patch+yaml',
        },
      );
      assert.equal(c.status, 201, c.text);
    }
    const applied = hooks.received('/all-ops.example.com').at(-1)!.request;
    assert.equal(applied.operation, 'CREATE');
    assert.equal(applied.options.kind, 'PatchOptions');
    assert.equal(applied.options.fieldManager, 'test');
    const p = await s.admin.request('PATCH', `${CM}/${names[0]}`, { data: { x: 'y' } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(p.status, 200, p.text);
    const patched = hooks.received('/all-ops.example.com').at(-1)!.request;
    assert.equal(patched.operation, 'UPDATE');
    assert.equal(patched.object.data.x, 'y');
    assert.equal(patched.options.kind, 'PatchOptions');
    hooks.reviews.clear();
    const d = await s.admin.request('DELETE', `${CM}?labelSelector=batch%3Dwp`);
    assert.equal(d.status, 200, d.text);
    const deleted = hooks
      .received('/all-ops.example.com')
      .filter((r) => r.request.operation === 'DELETE' && r.request.oldObject)
      .map((r) => r.request.name)
      .sort();
    assert.deepEqual(deleted, [...names].sort());
  });

  it('matchPolicy Equivalent: a webhook for v2 sees a v1 write in v2; Exact does not', async () => {
    const rules = [{ operations: ['CREATE'], apiGroups: ['stable.example.com'], apiVersions: ['v2'], resources: ['crontabs'] }];
    await configure('validating', { name: 'exact.example.com', rules, matchPolicy: 'Exact' });
    await configure('validating', { name: 'equivalent.example.com', rules });
    const ct = (name: string) => ({ apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name }, spec: { cronSpec: '* * * * *' } });
    await eventually('equivalent in force', async () => {
      assert.equal((await s.admin.request('POST', CT('v1'), ct(unique('ct')))).status, 201);
      return hooks.received('/equivalent.example.com').length > 0;
    });
    const q = hooks.received('/equivalent.example.com').at(-1)!.request;
    assert.deepEqual(q.resource, { group: 'stable.example.com', version: 'v2', resource: 'crontabs' });
    assert.deepEqual(q.kind, { group: 'stable.example.com', version: 'v2', kind: 'CronTab' });
    assert.deepEqual(q.requestResource, { group: 'stable.example.com', version: 'v1', resource: 'crontabs' });
    assert.equal(q.object.apiVersion, 'stable.example.com/v2', 'the object in the webhook’s version');
    assert.equal(hooks.received('/exact.example.com').length, 0);
  });

  it('a mutating webhook registered for v2 patches a v1 write; the scale subresource is admitted as a Scale', async () => {
    await configure('mutating', {
      name: 'label-v2.example.com',
      rules: [{ operations: ['CREATE'], apiGroups: ['stable.example.com'], apiVersions: ['v2'], resources: ['crontabs'] }],
    });
    hooks.answers.set('/label-v2.example.com', {
      kind: 'patch',
      ops: (review) => (review.request.object.apiVersion === 'stable.example.com/v2' ? [{ op: 'add', path: '/metadata/labels', value: { seen: 'v2' } }] : []),
    });
    const name = await eventually('patched', async () => {
      const n = unique('ct');
      const c = await s.admin.request('POST', CT('v1'), { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: n }, spec: { replicas: 1 } });
      assert.equal(c.status, 201, c.text);
      return c.json.metadata.labels?.seen === 'v2' && n;
    });
    const got = await s.admin.request('GET', `${CT('v1')}/${name}`);
    assert.equal(got.json.apiVersion, 'stable.example.com/v1');
    assert.equal(got.json.metadata.labels.seen, 'v2');
    await configure('validating', {
      name: 'scale.example.com',
      rules: [{ operations: ['UPDATE'], apiGroups: ['stable.example.com'], apiVersions: ['v1'], resources: ['crontabs/scale'] }],
    });
    hooks.answers.set('/scale.example.com', { kind: 'deny', message: 'no scaling' });
    const r = await eventually('scale denied', async () => {
      const sc = await s.admin.request('PATCH', `${CT('v1')}/${name}/scale`, { spec: { replicas: 5 } }, { 'content-type': 'application/merge-patch+json' });
      return sc.status !== 200 && sc;
    });
    assert.equal(r.status, 400, r.text);
    const q = hooks.received('/scale.example.com').at(-1)!.request;
    assert.equal(q.subResource, 'scale');
    assert.deepEqual(q.kind, { group: 'autoscaling', version: 'v1', kind: 'Scale' });
    assert.equal(q.object.spec.replicas, 5);
    assert.equal((await s.admin.request('GET', `${CT('v1')}/${name}`)).json.spec.replicas, 1, 'not scaled');
  });

  it("kubectl shows kube's denial message", { skip: kubectlBinary ? false : 'kubectl is not installed' }, async () => {
    hooks.answers.set('/kubectl-deny.example.com', { kind: 'deny', message: 'configmaps are closed' });
    await configure('validating', { name: 'kubectl-deny.example.com', rules: cmRule(['CREATE']) });
    const k = new Kubectl(kubectlBinary!, s.kubeconfig);
    const r = await eventually('denied', async () => {
      const out = await k.run(['create', 'configmap', unique('k'), '--from-literal=a=b']);
      return out.code !== 0 && out;
    });
    assert.match(r.stderr, /^error: failed to create configmap: admission webhook "kubectl-deny\.example\.com" denied the request: configmaps are closed$/m);
  });
});
