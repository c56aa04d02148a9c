// Server-side apply over lists: atomic lists (container args), set lists
// (finalizers), map lists (containers by name, ports by containerPort and
// protocol, in a PodTemplate), with two and three managers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { applier, entry, managers, NS } from './helpers.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});
const a = applier(() => s);
const PODS = `${NS}/pods`;
// Containers are mutable in a PodTemplate; a Pod's are not beyond their images (kube's ValidatePodUpdate).
const TEMPLATES = `${NS}/podtemplates`;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const pod = (name: string, containers: any[], meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, ...meta },
  spec: { containers },
});
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const template = (name: string, containers: any[]) => ({
  apiVersion: 'v1',
  kind: 'PodTemplate',
  metadata: { name },
  template: { spec: { containers } },
});

describe('server-side apply over lists', () => {
  it('owns containers by name and ports by containerPort and protocol', async () => {
    const r = await a.ok(
      `${TEMPLATES}/p1`,
      template('p1', [
        {
          name: 'app',
          image: 'app:1',
          ports: [
            { containerPort: 80, protocol: 'TCP' },
            { containerPort: 53, protocol: 'UDP' },
          ],
        },
      ]),
      'alice',
    );
    assert.deepEqual(entry(r, 'alice').fieldsV1, {
      'f:template': {
        'f:spec': {
          'f:containers': {
            'k:{"name":"app"}': {
              '.': {},
              'f:image': {},
              'f:name': {},
              'f:ports': {
                'k:{"containerPort":53,"protocol":"UDP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
                'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {}, 'f:protocol': {} },
              },
            },
          },
        },
      },
    });
  });
  it('lets a second manager add a container and a port without conflict', async () => {
    const r = await a.ok(
      `${TEMPLATES}/p1`,
      template('p1', [
        { name: 'app', ports: [{ containerPort: 8080 }] },
        { name: 'side', image: 'side:1' },
      ]),
      'bob',
    );
    assert.deepEqual(
      r.template.spec.containers.map((c: { name: string }) => c.name),
      ['app', 'side'],
    );
    assert.deepEqual(
      r.template.spec.containers[0].ports.map((p: { containerPort: number }) => p.containerPort),
      [80, 53, 8080],
    );
    assert.ok(entry(r, 'bob').fieldsV1['f:template']['f:spec']['f:containers']['k:{"name":"app"}']['f:ports']['k:{"containerPort":8080,"protocol":"TCP"}']);
  });
  it('conflicts on a container field another manager owns, naming the item by key', async () => {
    const r = await a.apply(`${TEMPLATES}/p1`, template('p1', [{ name: 'app', image: 'app:2' }]), 'bob');
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.message, 'Apply failed with 1 conflict: conflict with "alice": .template.spec.containers[name="app"].image');
  });
  it('removes a container the applier dropped and nobody else owns, keeping the others', async () => {
    await a.ok(`${TEMPLATES}/p1`, template('p1', [{ name: 'app', ports: [{ containerPort: 8080 }] }]), 'bob');
    const r = await a.get(`${TEMPLATES}/p1`);
    assert.deepEqual(
      r.template.spec.containers.map((c: { name: string }) => c.name),
      ['app'],
    );
    assert.deepEqual(
      r.template.spec.containers[0].ports.map((p: { containerPort: number }) => p.containerPort),
      [80, 53, 8080],
    );
  });
  it('removes a port item dropped by its only owner', async () => {
    await a.ok(`${TEMPLATES}/p1`, template('p1', [{ name: 'app', image: 'app:1', ports: [{ containerPort: 80, protocol: 'TCP' }] }]), 'alice');
    const r = await a.get(`${TEMPLATES}/p1`);
    assert.deepEqual(
      r.template.spec.containers[0].ports.map((p: { containerPort: number }) => p.containerPort),
      [80, 8080],
    );
  });
  it('replaces an atomic list whole and lets only one manager own it', async () => {
    await a.ok(`${TEMPLATES}/p2`, template('p2', [{ name: 'c', image: 'x', args: ['a', 'b'] }]), 'alice');
    const e = entry(await a.get(`${TEMPLATES}/p2`), 'alice').fieldsV1['f:template']['f:spec']['f:containers']['k:{"name":"c"}'];
    assert.deepEqual(e['f:args'], {});
    const r = await a.apply(`${TEMPLATES}/p2`, template('p2', [{ name: 'c', args: ['z'] }]), 'bob');
    assert.equal(r.status, 409);
    assert.equal(r.json.details.causes[0].field, '.template.spec.containers[name="c"].args');
    const f = await a.ok(`${TEMPLATES}/p2`, template('p2', [{ name: 'c', args: ['z'] }]), 'bob', 'force=true');
    assert.deepEqual(f.template.spec.containers[0].args, ['z']);
    assert.equal(entry(f, 'alice').fieldsV1['f:template']['f:spec']['f:containers']['k:{"name":"c"}']['f:args'], undefined);
  });
  it('merges a set list item by item across three managers', async () => {
    const meta = (f: string[]) => ({ finalizers: f });
    await a.ok(`${PODS}/p3`, pod('p3', [{ name: 'c', image: 'x' }], meta(['a.io/one'])), 'm1');
    await a.ok(`${PODS}/p3`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p3', ...meta(['b.io/two']) } }, 'm2');
    const r3 = await a.ok(`${PODS}/p3`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p3', ...meta(['a.io/one', 'c.io/three']) } }, 'm3');
    assert.deepEqual([...r3.metadata.finalizers].sort(), ['a.io/one', 'b.io/two', 'c.io/three']);
    assert.deepEqual(entry(r3, 'm2').fieldsV1, { 'f:metadata': { 'f:finalizers': { 'v:"b.io/two"': {} } } });
    await a.ok(`${PODS}/p3`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p3' } }, 'm3'); // drops one (m1 keeps it) and three
    const r = await a.get(`${PODS}/p3`);
    assert.deepEqual([...r.metadata.finalizers].sort(), ['a.io/one', 'b.io/two']);
    assert.deepEqual(managers(r), ['m1/Apply', 'm2/Apply']);
    await s.admin.request('PATCH', `${PODS}/p3`, { metadata: { finalizers: null } }, { 'content-type': 'application/merge-patch+json' });
  });
  it('ignores status in an apply to the main resource and applies status through /status', async () => {
    const r = await a.ok(`${PODS}/p2`, { ...pod('p2', [{ name: 'c', image: 'x' }]), status: { phase: 'Running' } }, 'alice');
    assert.notEqual(r.status?.phase, 'Running');
    const st = await a.ok(`${PODS}/p2/status`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p2' }, status: { phase: 'Running' } }, 'kubelet');
    assert.equal(st.status.phase, 'Running');
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const e = st.metadata.managedFields.find((x: any) => x.manager === 'kubelet');
    assert.equal(e.subresource, 'status');
    assert.deepEqual(e.fieldsV1, { 'f:status': { 'f:phase': {} } });
  });
  it('refuses a map-list item without its key with a clear 400', async () => {
    const r = await a.apply(`${TEMPLATES}/p2`, template('p2', [{ image: 'nokey' }]), 'alice');
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /omits key field "name"/);
  });
});
