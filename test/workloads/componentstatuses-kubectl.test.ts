// core/v1 ComponentStatuses through kubectl: kube's deprecation warning, the
// three components kube lists with live checks (the store as etcd-0, the
// in-process controllers, the scheduler probed at kube's default port), a
// read-only resource, and kube's answer for a component it does not know.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { kubectlServer, NEEDS_KUBECTL } from '../helpers/kubectl-server.js';

describe('core/v1 ComponentStatuses with kubectl', NEEDS_KUBECTL, () => {
  const ctx = kubectlServer();

  it('lists the components with kube columns and warning', async () => {
    const r = await ctx.k.run(['get', 'cs']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /Warning: v1 ComponentStatus is deprecated in v1.19\+/);
    const lines = r.stdout.trim().split('\n');
    assert.deepEqual(lines[0]!.trim().split(/\s{2,}/), ['NAME', 'STATUS', 'MESSAGE', 'ERROR']);
    assert.deepEqual(lines[1]!.trim().split(/\s{2,}/), ['controller-manager', 'Healthy', 'ok']);
    assert.deepEqual(lines[2]!.trim().split(/\s{2,}/), ['etcd-0', 'Healthy', 'ok']);
    // Nothing listens at the scheduler's port unless someone runs one here: either answer is kube's.
    const scheduler = lines[3]!.trim().split(/\s{2,}/);
    assert.equal(scheduler[0], 'scheduler');
    if (scheduler[1] === 'Unhealthy') assert.match(scheduler.at(-1)!, /^Get "https:\/\/127\.0\.0\.1:10259\/healthz": /);
    else assert.equal(scheduler[1], 'Healthy');
  });

  it('gets one component, refuses writes and unknown names as kube does', async () => {
    const etcd = await ctx.s.admin.request('GET', '/api/v1/componentstatuses/etcd-0');
    assert.deepEqual(etcd.json, {
      kind: 'ComponentStatus',
      apiVersion: 'v1',
      metadata: { name: 'etcd-0', creationTimestamp: null },
      conditions: [{ type: 'Healthy', status: 'True', message: 'ok' }],
    });
    const missing = await ctx.s.admin.request('GET', '/api/v1/componentstatuses/nope');
    assert.equal(missing.status, 500);
    assert.equal(missing.json.message, 'Component not found: nope');
    assert.equal(missing.json.reason, undefined);
    const discovery = (await ctx.s.admin.request('GET', '/api/v1')).json.resources.find((x: { name: string }) => x.name === 'componentstatuses');
    assert.deepEqual(discovery, {
      name: 'componentstatuses',
      singularName: 'componentstatus',
      namespaced: false,
      kind: 'ComponentStatus',
      verbs: ['get', 'list'],
      shortNames: ['cs'],
    });
    const del = await ctx.s.admin.request('DELETE', '/api/v1/componentstatuses/etcd-0');
    assert.equal(del.status, 405);
    const sel = (await ctx.s.admin.request('GET', '/api/v1/componentstatuses?fieldSelector=metadata.name%3Detcd-0')).json;
    assert.deepEqual(
      sel.items.map((o: { metadata: { name: string } }) => o.metadata.name),
      ['etcd-0'],
    );
  });
});
