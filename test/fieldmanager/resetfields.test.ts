// kube's reset fields on Update entries: a create or update of the main
// resource of a kind with a /status subresource owns nothing under status
// (the strategy resets or keeps it), so its managedFields entry has no
// f:status; a write through /status owns the status it sets. Kinds without
// /status (ConfigMaps) are untouched.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

type Entry = { manager: string; operation: string; subresource?: string; fieldsV1: Record<string, unknown> };
const entries = (obj: unknown): Entry[] => ((obj as { metadata: { managedFields?: Entry[] } }).metadata.managedFields ?? []) as Entry[];
const DEPLOYS = '/apis/apps/v1/namespaces/default/deployments';

describe('reset fields in Update entries', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  it('a Pod created with a status: the creator owns its spec, not the status the server set', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces/default/pods?fieldManager=maker', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1' },
      spec: { containers: [{ name: 'c', image: 'nginx' }] },
      status: { phase: 'Running' },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.status.phase, 'Pending');
    const [e] = entries(r.json);
    assert.equal(e?.manager, 'maker');
    assert.ok(Object.hasOwn(e!.fieldsV1, 'f:spec'));
    assert.equal(Object.hasOwn(e!.fieldsV1, 'f:status'), false, JSON.stringify(e!.fieldsV1));
  });

  // kube's create handler runs the field manager before the strategy's PrepareForCreate: the `kubernetes`
  // finalizer it adds is nobody's, while what decoding defaulted (the name label) is the creator's.
  it('a namespace created with kubectl create: its name label owned, not spec.finalizers nor status.phase', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces?fieldManager=kubectl-create', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'rf' },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.metadata.labels, { 'kubernetes.io/metadata.name': 'rf' });
    assert.deepEqual(r.json.spec, { finalizers: ['kubernetes'] });
    assert.deepEqual(r.json.status, { phase: 'Active' });
    assert.deepEqual(entries(r.json)[0]!.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } });
  });

  it('a namespace created with finalizers of its own: they are the creator’s, `kubernetes` is added after them', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces?fieldManager=maker', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'rf2' },
      spec: { finalizers: ['example.com/hold'] },
    });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(r.json.spec.finalizers, ['example.com/hold', 'kubernetes']);
    assert.deepEqual(entries(r.json)[0]!.fieldsV1['f:spec'], { 'f:finalizers': {} });
  });

  it('an update of a Deployment that sends a status owns none of it; /status owns what it sets', async () => {
    const dep = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd1' },
      spec: { selector: { matchLabels: { a: 'b' } }, template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    };
    const c = await s.admin.request('POST', `${DEPLOYS}?fieldManager=maker`, dep);
    assert.equal(c.status, 201, c.text);
    const put = await s.admin.request('PUT', `${DEPLOYS}/d1?fieldManager=editor`, {
      ...c.json,
      metadata: { ...c.json.metadata, labels: { x: 'y' } },
      status: { replicas: 4 },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.status, {});
    const editor = entries(put.json).find((e) => e.manager === 'editor');
    assert.deepEqual(editor?.fieldsV1, { 'f:metadata': { 'f:labels': { '.': {}, 'f:x': {} } } });
    const st = await s.admin.request('PUT', `${DEPLOYS}/d1/status?fieldManager=controller`, { ...put.json, status: { replicas: 4 } });
    assert.equal(st.status, 200, st.text);
    const ctl = entries(st.json).find((e) => e.manager === 'controller');
    assert.equal(ctl?.subresource, 'status');
    assert.deepEqual(ctl?.fieldsV1, { 'f:status': { 'f:replicas': {} } });
  });

  it('a ConfigMap, which has no /status, is tracked whole', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces/default/configmaps?fieldManager=maker', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
      data: { a: '1' },
    });
    assert.deepEqual(entries(r.json)[0]?.fieldsV1, { 'f:data': { '.': {}, 'f:a': {} } });
  });
});
