// Two-phase deletion with finalizers, delete preconditions,
// deletecollection and the namespace lifecycle.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const CM = '/api/v1/namespaces/default/configmaps';

describe('finalizers and deletionTimestamp', () => {
  it('follows the state table: delete marks, removing one finalizer keeps, removing the last removes', async () => {
    const c = await s.admin.request('POST', CM, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'fin-1', finalizers: ['example.com/a', 'example.com/b'] },
    });
    assert.equal(c.status, 201, c.text);
    const w = await s.admin.watch(`${CM}?watch=1&fieldSelector=metadata.name%3Dfin-1&resourceVersion=${c.json.metadata.resourceVersion}`);
    try {
      const d = await s.admin.request('DELETE', `${CM}/fin-1`);
      assert.equal(d.status, 200);
      assert.equal(d.json.kind, 'ConfigMap');
      assert.ok(d.json.metadata.deletionTimestamp);
      const g1 = await s.admin.request('GET', `${CM}/fin-1`);
      assert.equal(g1.status, 200);
      assert.equal(g1.json.metadata.deletionTimestamp, d.json.metadata.deletionTimestamp);

      // A second delete changes nothing.
      const d2 = await s.admin.request('DELETE', `${CM}/fin-1`);
      assert.equal(d2.status, 200);
      assert.equal(d2.json.metadata.deletionTimestamp, d.json.metadata.deletionTimestamp);

      const u1 = await s.admin.request('PUT', `${CM}/fin-1`, { ...g1.json, metadata: { ...g1.json.metadata, finalizers: ['example.com/b'] } });
      assert.equal(u1.status, 200, u1.text);
      assert.equal((await s.admin.request('GET', `${CM}/fin-1`)).status, 200);

      const u2 = await s.admin.request('PUT', `${CM}/fin-1`, { ...u1.json, metadata: { ...u1.json.metadata, finalizers: [] } });
      assert.equal(u2.status, 200, u2.text);
      assert.equal((await s.admin.request('GET', `${CM}/fin-1`)).status, 404);

      const types = (await w.take(3)).map((e) => e.type);
      assert.deepEqual(types, ['MODIFIED', 'MODIFIED', 'DELETED']);
    } finally {
      w.stop();
    }
  });

  it('refuses new finalizers on a deleting object with 422', async () => {
    await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fin-2', finalizers: ['example.com/a'] } });
    const d = await s.admin.request('DELETE', `${CM}/fin-2`);
    const r = await s.admin.request('PUT', `${CM}/fin-2`, { ...d.json, metadata: { ...d.json.metadata, finalizers: ['example.com/a', 'example.com/new'] } });
    assert.equal(r.status, 422);
    assert.equal(r.json.reason, 'Invalid');
    assert.ok(
      r.json.details.causes.some((c: { field: string }) => c.field === 'metadata.finalizers'),
      r.text,
    );
    await s.admin.request('PUT', `${CM}/fin-2`, { ...d.json, metadata: { ...d.json.metadata, finalizers: [] } });
  });

  it('deletes an object without finalizers at once with a Success Status', async () => {
    await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fin-3' } });
    const d = await s.admin.request('DELETE', `${CM}/fin-3`);
    assert.equal(d.status, 200);
    assert.equal(d.json.kind, 'Status');
    assert.equal(d.json.status, 'Success');
    assert.equal(d.json.details.name, 'fin-3');
    assert.equal((await s.admin.request('GET', `${CM}/fin-3`)).status, 404);
    const again = await s.admin.request('DELETE', `${CM}/fin-3`);
    assert.equal(again.status, 404);
    assert.equal(again.json.reason, 'NotFound');
  });

  it('deletes nothing with dryRun=All', async () => {
    await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'fin-dry' } });
    const d = await s.admin.request('DELETE', `${CM}/fin-dry?dryRun=All`);
    assert.equal(d.status, 200);
    assert.equal((await s.admin.request('GET', `${CM}/fin-dry`)).status, 200);
  });
});

describe('preconditions', () => {
  it('refuses a delete whose uid precondition does not match with 409', async () => {
    await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pre-1' } });
    const r = await s.admin.request('DELETE', `${CM}/pre-1`, { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: 'not-the-uid' } });
    assert.equal(r.status, 409);
    assert.equal(r.json.reason, 'Conflict');
    assert.equal(r.json.details.name, 'pre-1');
    assert.match(r.json.message, /Precondition failed: UID in precondition: not-the-uid/);
    assert.equal((await s.admin.request('GET', `${CM}/pre-1`)).status, 200);
  });

  it('refuses a delete whose resourceVersion precondition is stale with 409', async () => {
    const c = (await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pre-2' } })).json;
    await s.admin.request('PUT', `${CM}/pre-2`, { ...c, data: { x: 'y' } });
    const r = await s.admin.request('DELETE', `${CM}/pre-2`, { preconditions: { resourceVersion: c.metadata.resourceVersion } });
    assert.equal(r.status, 409);
    assert.equal(r.json.reason, 'Conflict');
    assert.match(r.json.message, /Precondition failed: ResourceVersion in precondition/);
  });

  it('deletes when the preconditions hold', async () => {
    const c = (await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'pre-3' } })).json;
    const r = await s.admin.request('DELETE', `${CM}/pre-3`, { preconditions: { uid: c.metadata.uid, resourceVersion: c.metadata.resourceVersion } });
    assert.equal(r.status, 200, r.text);
    assert.equal((await s.admin.request('GET', `${CM}/pre-3`)).status, 404);
  });
});

describe('deletecollection', () => {
  it('deletes only the objects the label selector matches', async () => {
    for (const [name, tier] of [
      ['dc-1', 'x'],
      ['dc-2', 'x'],
      ['dc-3', 'y'],
    ] as const) {
      await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { tier } } });
    }
    const r = await s.admin.request('DELETE', `${CM}?labelSelector=tier%3Dx`);
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.kind, 'ConfigMapList');
    assert.deepEqual(r.json.items.map((o: { metadata: { name: string } }) => o.metadata.name).sort(), ['dc-1', 'dc-2']);
    assert.equal((await s.admin.request('GET', `${CM}/dc-1`)).status, 404);
    assert.equal((await s.admin.request('GET', `${CM}/dc-2`)).status, 404);
    assert.equal((await s.admin.request('GET', `${CM}/dc-3`)).status, 200);
  });
});

describe('namespace lifecycle', () => {
  it('has the default namespaces', async () => {
    const r = await s.admin.request('GET', '/api/v1/namespaces');
    const names = r.json.items.map((n: { metadata: { name: string } }) => n.metadata.name);
    for (const n of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) assert.ok(names.includes(n), n);
    const d = r.json.items.find((n: { metadata: { name: string } }) => n.metadata.name === 'default');
    assert.equal(d.status.phase, 'Active');
  });

  for (const name of ['default', 'kube-system']) {
    it(`refuses to delete the ${name} namespace with 403`, async () => {
      const r = await s.admin.request('DELETE', `/api/v1/namespaces/${name}`);
      assert.equal(r.status, 403);
      assert.equal(r.json.reason, 'Forbidden');
      assert.match(r.json.message, new RegExp(name));
      const g = await s.admin.request('GET', `/api/v1/namespaces/${name}`);
      assert.equal(g.json.metadata.deletionTimestamp, undefined);
    });
  }

  it('terminates a namespace, refuses creates into it, deletes its objects, then removes it', async () => {
    const ns = 'life-1';
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })).status, 201);
    const base = `/api/v1/namespaces/${ns}/configmaps`;
    await s.admin.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' } });
    await s.admin.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held', finalizers: ['example.com/hold'] } });
    const d = await s.admin.request('DELETE', `/api/v1/namespaces/${ns}`);
    assert.equal(d.status, 200, d.text);
    assert.equal(d.json.status.phase, 'Terminating');
    assert.ok(d.json.metadata.deletionTimestamp);

    const c = await s.admin.request('POST', base, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'late' } });
    assert.equal(c.status, 403);
    assert.equal(c.json.reason, 'Forbidden');
    assert.match(c.json.message, /because it is being terminated/);
    assert.ok(
      c.json.details.causes.some((x: { reason: string }) => x.reason === 'NamespaceTerminating'),
      c.text,
    );

    await eventually('c1 deleted', async () => ((await s.admin.request('GET', `${base}/c1`)).status === 404 ? true : undefined), { timeoutMs: 8000 });
    const held = await eventually(
      'held marked',
      async () => {
        const g = await s.admin.request('GET', `${base}/held`);
        return g.json?.metadata?.deletionTimestamp ? g.json : undefined;
      },
      { timeoutMs: 8000 },
    );
    // The finalizer holds the namespace.
    await new Promise((r) => setTimeout(r, 300));
    const still = await s.admin.request('GET', `/api/v1/namespaces/${ns}`);
    assert.equal(still.status, 200);
    assert.equal(still.json.status.phase, 'Terminating');

    const u = await s.admin.request('PUT', `${base}/held`, { ...held, metadata: { ...held.metadata, finalizers: [] } });
    assert.equal(u.status, 200, u.text);
    await eventually('namespace gone', async () => ((await s.admin.request('GET', `/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined), {
      timeoutMs: 8000,
    });
  });

  it('keeps a namespace with a finalizer of its own Terminating, still serving, until the finalizer goes', async () => {
    // The namespace controller once rewrote such a namespace for ever, and on the memory
    // store never yielded to the event loop: the DELETE itself never answered.
    const ns = 'life-held';
    assert.equal(
      (await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, finalizers: ['example.com/hold'] } }))
        .status,
      201,
    );
    const d = await s.admin.request('DELETE', `/api/v1/namespaces/${ns}`);
    assert.equal(d.status, 200, d.text);
    await eventually(
      'the namespace finalizer removed',
      async () => {
        const g = await s.admin.request('GET', `/api/v1/namespaces/${ns}`);
        return g.json.spec?.finalizers?.length === 0 ? g.json : undefined;
      },
      { timeoutMs: 8000 },
    );
    const before = (await s.admin.request('GET', `/api/v1/namespaces/${ns}`)).json.metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 300));
    const still = await s.admin.request('GET', `/api/v1/namespaces/${ns}`);
    assert.equal(still.json.status.phase, 'Terminating');
    assert.equal(still.json.metadata.resourceVersion, before, 'nobody rewrites it meanwhile');
    const u = await s.admin.request('PUT', `/api/v1/namespaces/${ns}`, { ...still.json, metadata: { ...still.json.metadata, finalizers: [] } });
    assert.equal(u.status, 200, u.text);
    await eventually('namespace gone', async () => ((await s.admin.request('GET', `/api/v1/namespaces/${ns}`)).status === 404 ? true : undefined), {
      timeoutMs: 8000,
    });
  });
});
