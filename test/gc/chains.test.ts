// The garbage collector over HTTPS: owner → dependent → dependent chains
// under the Background, Foreground and Orphan policies, blockOwnerDeletion,
// live owners keeping dependents, and invalid references.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CM, configMap, gone, until } from './helpers.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

describe('garbage collection', () => {
  it('deletes a chain owner → dependent → dependent in the background', async () => {
    const a = await configMap(s.admin, 'bg-a');
    const b = await configMap(s.admin, 'bg-b', [a]);
    const c = await configMap(s.admin, 'bg-c', [b]);
    const d = await s.admin.request('DELETE', `${a.path}?propagationPolicy=Background`);
    assert.equal(d.status, 200, d.text);
    assert.equal(d.json.status, 'Success');
    await until('the dependent to go', () => gone(s.admin, b.path));
    await until('the dependent of the dependent to go', () => gone(s.admin, c.path));
  });

  it('deletes dependents before the owner in the foreground, waiting for blocking ones', async () => {
    const a = await configMap(s.admin, 'fg-a');
    const b = await configMap(s.admin, 'fg-b', [a], true);
    // b blocks a; c blocks b; c carries a finalizer so the chain holds until it is released.
    const r = await s.admin.request('POST', CM(), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'fg-c',
        finalizers: ['example.com/hold'],
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'fg-b', uid: b.uid, blockOwnerDeletion: true }],
      },
    });
    assert.equal(r.status, 201, r.text);
    const d = await s.admin.request('DELETE', a.path, { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Foreground' });
    assert.equal(d.status, 200, d.text);
    assert.ok(d.json.metadata.deletionTimestamp);
    assert.deepEqual(d.json.metadata.finalizers, ['foregroundDeletion']);
    const c = await until('the last dependent to be marked', async () => {
      const g = await s.admin.request('GET', `${CM()}/fg-c`);
      return g.json?.metadata?.deletionTimestamp ? g.json : undefined;
    });
    const bNow = await s.admin.request('GET', b.path);
    assert.equal(bNow.status, 200, 'the middle dependent waits for its blocking dependent');
    assert.deepEqual(bNow.json.metadata.finalizers, ['foregroundDeletion']);
    assert.equal((await s.admin.request('GET', a.path)).status, 200, 'the owner waits too');
    const rel = await s.admin.request('PUT', `${CM()}/fg-c`, { ...c, metadata: { ...c.metadata, finalizers: [] } });
    assert.equal(rel.status, 200, rel.text);
    await until('the middle dependent to go', () => gone(s.admin, b.path));
    await until('the owner to go', () => gone(s.admin, a.path));
  });

  it('lets the owner go without waiting for dependents that do not block', async () => {
    const a = await configMap(s.admin, 'fg-nb-a');
    const r = await s.admin.request('POST', CM(), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fg-nb-b', finalizers: ['example.com/hold'], ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: a.name, uid: a.uid }] },
    });
    assert.equal(r.status, 201);
    await s.admin.request('DELETE', `${a.path}?propagationPolicy=Foreground`);
    await until('the owner to go', () => gone(s.admin, a.path));
    const b = await s.admin.request('GET', `${CM()}/fg-nb-b`);
    assert.ok(b.json.metadata.deletionTimestamp, 'the dependent is being deleted');
    await s.admin.request('PUT', `${CM()}/fg-nb-b`, { ...b.json, metadata: { ...b.json.metadata, finalizers: [] } });
    await until('the dependent to go', () => gone(s.admin, `${CM()}/fg-nb-b`));
  });

  it('orphans dependents: their references to the owner are removed and they stay', async () => {
    const a = await configMap(s.admin, 'or-a');
    const b = await configMap(s.admin, 'or-b', [a]);
    const c = await configMap(s.admin, 'or-c', [b]);
    const d = await s.admin.request('DELETE', `${a.path}?propagationPolicy=Orphan`);
    assert.equal(d.status, 200, d.text);
    assert.deepEqual(d.json.metadata.finalizers, ['orphan']);
    await until('the owner to go', () => gone(s.admin, a.path));
    const bNow = await s.admin.request('GET', b.path);
    assert.equal(bNow.status, 200);
    assert.equal(bNow.json.metadata.ownerReferences, undefined);
    const cNow = await s.admin.request('GET', c.path);
    assert.equal(cNow.json.metadata.ownerReferences[0].uid, b.uid, 'references to other owners stay');
  });

  it('orphans with the legacy orphanDependents=true', async () => {
    const a = await configMap(s.admin, 'or-legacy-a');
    const b = await configMap(s.admin, 'or-legacy-b', [a]);
    await s.admin.request('DELETE', a.path, { orphanDependents: true });
    await until('the owner to go', () => gone(s.admin, a.path));
    assert.equal((await s.admin.request('GET', b.path)).json.metadata.ownerReferences, undefined);
  });

  it('keeps a dependent with one live owner and drops the reference to the gone one', async () => {
    const a = await configMap(s.admin, 'two-a');
    const b = await configMap(s.admin, 'two-b');
    const c = await configMap(s.admin, 'two-c', [a, b]);
    await s.admin.request('DELETE', a.path);
    const refs = await until('the reference to go', async () => {
      const g = await s.admin.request('GET', c.path);
      return g.json.metadata.ownerReferences?.length === 1 ? g.json.metadata.ownerReferences : undefined;
    });
    assert.equal(refs[0].uid, b.uid);
  });

  it('deletes a dependent created with an owner that does not exist', async () => {
    const c = await configMap(s.admin, 'dangling', [{ name: 'never-was', uid: '00000000-0000-0000-0000-000000000000', path: '' }]);
    await until('the dependent to go', () => gone(s.admin, c.path));
  });

  it('treats an owner recreated under the same name with another uid as gone', async () => {
    const a = await configMap(s.admin, 'recreated-a');
    await s.admin.request('DELETE', a.path);
    await configMap(s.admin, 'recreated-a');
    const c = await configMap(s.admin, 'recreated-c', [a]);
    await until('the dependent to go', () => gone(s.admin, c.path));
  });

  it('finds a namespaced owner only in the dependent namespace', async () => {
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-other' } });
    const a = await configMap(s.admin, 'xns-a');
    const c = await configMap(s.admin, 'xns-c', [a], false, 'gc-other');
    await until('the dependent in the other namespace to go', () => gone(s.admin, c.path));
    assert.equal((await s.admin.request('GET', a.path)).status, 200);
  });

  it('ignores a namespaced owner of a cluster-scoped object with a log line', async () => {
    const a = await configMap(s.admin, 'cs-owner');
    const r = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'gc-invalid-owner', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: a.name, uid: 'not-the-uid' }] },
      rules: [],
    });
    assert.equal(r.status, 201, r.text);
    await until('the log line', async () => (s.logs.some((l) => l.includes('invalid ownerReference') && l.includes('gc-invalid-owner')) ? true : undefined));
    assert.equal((await s.admin.request('GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-invalid-owner')).status, 200);
  });

  it('lets a cluster-scoped owner hold namespaced dependents', async () => {
    const ns = await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gc-owner-ns' } });
    assert.equal(ns.status, 201);
    const role = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'gc-owner-role' },
      rules: [],
    });
    const r = await s.admin.request('POST', CM(), {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'owned-by-role',
        ownerReferences: [{ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'gc-owner-role', uid: role.json.metadata.uid }],
      },
    });
    assert.equal(r.status, 201);
    await new Promise((res) => setTimeout(res, 200));
    assert.equal((await s.admin.request('GET', `${CM()}/owned-by-role`)).status, 200, 'a live owner keeps it');
    await s.admin.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterroles/gc-owner-role');
    await until('the dependent to go', () => gone(s.admin, `${CM()}/owned-by-role`));
  });
});
