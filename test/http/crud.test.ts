// Create, get, update and delete over HTTP: codes, server-set metadata,
// optimistic concurrency, the status subresource and the Status errors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s.close();
});

const CM = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Record<string, string> = { a: 'b' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });

describe('create and get', () => {
  it('creates a namespaced object with 201 and server-set metadata', async () => {
    const r = await s.admin.request('POST', CM, cm('crud-a'));
    assert.equal(r.status, 201);
    const m = r.json.metadata;
    assert.equal(m.name, 'crud-a');
    assert.equal(m.namespace, 'default');
    assert.match(m.uid, /^[0-9a-f-]{36}$/);
    assert.match(m.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(typeof m.resourceVersion, 'string');
    assert.ok(m.resourceVersion.length > 0);
    const g = await s.admin.request('GET', `${CM}/crud-a`);
    assert.equal(g.status, 200);
    assert.equal(g.json.kind, 'ConfigMap');
    assert.equal(g.json.apiVersion, 'v1');
    assert.deepEqual(g.json.data, { a: 'b' });
    assert.equal(g.json.metadata.uid, m.uid);
  });

  it('creates a cluster-scoped object', async () => {
    const r = await s.admin.request('POST', '/api/v1/persistentvolumes', {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-crud' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp' } },
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.metadata.namespace, undefined);
    const g = await s.admin.request('GET', '/api/v1/persistentvolumes/pv-crud');
    assert.equal(g.status, 200);
    const d = await s.admin.request('DELETE', '/api/v1/persistentvolumes/pv-crud');
    assert.equal(d.status, 200);
    assert.equal((await s.admin.request('GET', '/api/v1/persistentvolumes/pv-crud')).status, 404);
  });

  it('labels a namespace with its name on every write, as kube (a generated name too; a client cannot change the label)', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { generateName: 'crud-ns-', labels: { team: 'a' } },
    });
    assert.equal(r.status, 201, r.text);
    const name = r.json.metadata.name as string;
    assert.deepEqual(r.json.metadata.labels, { team: 'a', 'kubernetes.io/metadata.name': name });
    const put = await s.admin.request('PUT', `/api/v1/namespaces/${name}`, {
      ...r.json,
      metadata: { ...r.json.metadata, labels: { 'kubernetes.io/metadata.name': 'other' } },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.metadata.labels, { 'kubernetes.io/metadata.name': name });
    const sel = await s.admin.request('GET', `/api/v1/namespaces?labelSelector=${encodeURIComponent(`kubernetes.io/metadata.name=${name}`)}`);
    assert.deepEqual(
      sel.json.items.map((n: { metadata: { name: string } }) => n.metadata.name),
      [name],
    );
  });

  it('creates a cluster role in a named group', async () => {
    const r = await s.admin.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'crud-role' },
      rules: [],
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.json.apiVersion, 'rbac.authorization.k8s.io/v1');
  });

  it('generates a name from generateName', async () => {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' } };
    const a = await s.admin.request('POST', CM, body);
    const b = await s.admin.request('POST', CM, body);
    assert.equal(a.status, 201);
    assert.match(a.json.metadata.name, /^gen-[a-z0-9]{5}$/);
    assert.notEqual(a.json.metadata.name, b.json.metadata.name);
    assert.notEqual(a.json.metadata.uid, b.json.metadata.uid);
  });

  it('gives every object a random uid, even when the client sends one', async () => {
    const r = await s.admin.request('POST', CM, { ...cm('crud-uid'), metadata: { name: 'crud-uid', uid: 'mine' } });
    assert.equal(r.status, 201);
    assert.notEqual(r.json.metadata.uid, 'mine');
  });

  it('answers 409 AlreadyExists for a second create of the same name', async () => {
    await s.admin.request('POST', CM, cm('crud-dup'));
    const r = await s.admin.request('POST', CM, cm('crud-dup'));
    assert.equal(r.status, 409);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'AlreadyExists');
    assert.equal(r.json.code, 409);
    assert.deepEqual({ name: r.json.details.name, kind: r.json.details.kind }, { name: 'crud-dup', kind: 'configmaps' });
    assert.equal(r.json.message, 'configmaps "crud-dup" already exists');
  });

  it('answers 422 Invalid for a bad name with a cause on metadata.name', async () => {
    const r = await s.admin.request('POST', CM, cm('Bad_Name'));
    assert.equal(r.status, 422);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(r.json.details.kind, 'ConfigMap');
    assert.equal(r.json.details.name, 'Bad_Name');
    assert.ok(
      r.json.details.causes.some((c: { field: string }) => c.field === 'metadata.name'),
      r.text,
    );
  });

  it('answers 422 when neither name nor generateName is set', async () => {
    const r = await s.admin.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} });
    assert.equal(r.status, 422);
    assert.ok(
      r.json.details.causes.some((c: { field: string }) => c.field === 'metadata.name'),
      r.text,
    );
  });

  it('answers 404 NotFound with details for a missing object', async () => {
    const r = await s.admin.request('GET', `${CM}/nope`);
    assert.equal(r.status, 404);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.status, 'Failure');
    assert.equal(r.json.reason, 'NotFound');
    assert.equal(r.json.message, 'configmaps "nope" not found');
    assert.deepEqual(r.json.details, { name: 'nope', kind: 'configmaps' });
  });

  it('answers 404 for a create into a missing namespace', async () => {
    const r = await s.admin.request('POST', '/api/v1/namespaces/missing-ns/configmaps', cm('x'));
    assert.equal(r.status, 404);
    assert.equal(r.json.reason, 'NotFound');
    assert.equal(r.json.details.kind, 'namespaces');
    assert.equal(r.json.details.name, 'missing-ns');
  });

  it('creates nothing with dryRun=All', async () => {
    const r = await s.admin.request('POST', `${CM}?dryRun=All`, cm('crud-dry'));
    assert.equal(r.status, 201);
    assert.equal(r.json.metadata.name, 'crud-dry');
    assert.equal((await s.admin.request('GET', `${CM}/crud-dry`)).status, 404);
  });

  it('rejects an unknown dryRun value with 422', async () => {
    const r = await s.admin.request('POST', `${CM}?dryRun=Some`, cm('crud-dry2'));
    assert.equal(r.status, 422);
  });
});

describe('bad bodies', () => {
  it('rejects a name mismatch between path and body with 400', async () => {
    await s.admin.request('POST', CM, cm('crud-mm'));
    const r = await s.admin.request('PUT', `${CM}/crud-mm`, cm('other'));
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /other/);
  });

  it('rejects a namespace mismatch with 400', async () => {
    const r = await s.admin.request('POST', CM, { ...cm('crud-ns'), metadata: { name: 'crud-ns', namespace: 'kube-system' } });
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /kube-system/);
  });

  it('rejects a wrong kind with 400', async () => {
    const r = await s.admin.request('POST', CM, { ...cm('crud-kind'), kind: 'Secret' });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /Secret/);
  });

  it('rejects a wrong apiVersion with 400', async () => {
    const r = await s.admin.request('POST', CM, { ...cm('crud-av'), apiVersion: 'apps/v1' });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /apps\/v1/);
  });
});

describe('methods', () => {
  it('answers 405 for a POST to an object path', async () => {
    const r = await s.admin.request('POST', `${CM}/crud-a`, cm('crud-a'));
    assert.equal(r.status, 405);
    assert.equal(r.json.reason, 'MethodNotAllowed');
  });

  it('answers 405 for a PUT to a collection', async () => {
    const r = await s.admin.request('PUT', CM, cm('crud-a'));
    assert.equal(r.status, 405);
    assert.equal(r.json.reason, 'MethodNotAllowed');
  });
});

describe('update', () => {
  it('updates with the current resourceVersion and changes it', async () => {
    const c = (await s.admin.request('POST', CM, cm('crud-u1'))).json;
    const r = await s.admin.request('PUT', `${CM}/crud-u1`, { ...c, data: { a: 'c' } });
    assert.equal(r.status, 200);
    assert.notEqual(r.json.metadata.resourceVersion, c.metadata.resourceVersion);
    assert.equal(r.json.metadata.uid, c.metadata.uid);
    assert.equal(r.json.metadata.creationTimestamp, c.metadata.creationTimestamp);
    assert.deepEqual(r.json.data, { a: 'c' });
  });

  it('answers 409 Conflict for a stale resourceVersion', async () => {
    const c = (await s.admin.request('POST', CM, cm('crud-u2'))).json;
    await s.admin.request('PUT', `${CM}/crud-u2`, { ...c, data: { a: '1' } });
    const r = await s.admin.request('PUT', `${CM}/crud-u2`, { ...c, data: { a: '2' } });
    assert.equal(r.status, 409);
    assert.equal(r.json.reason, 'Conflict');
    assert.equal(r.json.code, 409);
    assert.equal(r.json.details.name, 'crud-u2');
    assert.equal(r.json.details.kind, 'configmaps');
    assert.match(r.json.message, /^Operation cannot be fulfilled on configmaps "crud-u2": the object has been modified/);
  });

  it('updates unconditionally without a resourceVersion', async () => {
    const c = (await s.admin.request('POST', CM, cm('crud-u3'))).json;
    await s.admin.request('PUT', `${CM}/crud-u3`, { ...c, data: { a: '1' } });
    const r = await s.admin.request('PUT', `${CM}/crud-u3`, cm('crud-u3', { a: '2' }));
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.json.data, { a: '2' });
  });

  it('answers 404 for a PUT of a missing configmap', async () => {
    const r = await s.admin.request('PUT', `${CM}/crud-missing`, cm('crud-missing'));
    assert.equal(r.status, 404);
    assert.equal(r.json.reason, 'NotFound');
  });

  it('does not change the resourceVersion on a no-op PUT', async () => {
    const c = (await s.admin.request('POST', CM, cm('crud-noop'))).json;
    const r = await s.admin.request('PUT', `${CM}/crud-noop`, c);
    assert.equal(r.status, 200);
    assert.equal(r.json.metadata.resourceVersion, c.metadata.resourceVersion);
  });

  it("increments a pod's generation on spec changes only", async () => {
    const path = '/api/v1/namespaces/default/pods';
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'crud-gen' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const c = (await s.admin.request('POST', path, pod)).json;
    assert.equal(c.metadata.generation, 1);
    const l = (await s.admin.request('PUT', `${path}/crud-gen`, { ...c, metadata: { ...c.metadata, labels: { x: 'y' } } })).json;
    assert.equal(l.metadata.generation, 1);
    const st = (await s.admin.request('PUT', `${path}/crud-gen/status`, { ...l, status: { phase: 'Running' } })).json;
    assert.equal(st.metadata.generation, 1);
    // Only the image changes (kube's pod update rule allows no other spec change; the defaulted pull policy stays).
    const sp = await s.admin.request('PUT', `${path}/crud-gen`, {
      ...st,
      spec: { ...st.spec, containers: [{ ...st.spec.containers[0], image: 'busybox:2' }] },
    });
    assert.equal(sp.status, 200, sp.text);
    assert.equal(sp.json.metadata.generation, 2);
  });

  it("an EndpointSlice's generation also counts label changes, as its kube strategy does", async () => {
    const path = '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices';
    const eps = { apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'crud-gen' }, addressType: 'IPv4', endpoints: [] };
    const c = (await s.admin.request('POST', path, eps)).json;
    assert.equal(c.metadata.generation, 1);
    const l = await s.admin.request('PUT', `${path}/crud-gen`, { ...c, metadata: { ...c.metadata, labels: { x: 'y' } } });
    assert.equal(l.status, 200, l.text);
    assert.equal(l.json.metadata.generation, 2);
    const a = (await s.admin.request('PUT', `${path}/crud-gen`, { ...l.json, metadata: { ...l.json.metadata, annotations: { a: 'b' } } })).json;
    assert.equal(a.metadata.generation, 2);
  });

  it('types kube keeps no generation for never get one, whatever the client sends or changes', async () => {
    const cases: Array<[string, Record<string, unknown>, (o: Record<string, unknown>) => Record<string, unknown>]> = [
      ['/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', data: { a: '1' } }, (o) => ({ ...o, data: { a: '2' } })],
      ['/api/v1/namespaces/default/secrets', { apiVersion: 'v1', kind: 'Secret', stringData: { a: '1' } }, (o) => ({ ...o, data: { a: 'Mg==' } })],
      ['/api/v1/namespaces/default/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount' }, (o) => ({ ...o, automountServiceAccountToken: false })],
      [
        '/api/v1/namespaces/default/services',
        { apiVersion: 'v1', kind: 'Service', spec: { ports: [{ port: 80 }] } },
        (o) => ({ ...o, spec: { ...(o['spec'] as object), ports: [{ port: 81 }] } }),
      ],
      [
        '/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles',
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', rules: [] },
        (o) => ({ ...o, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }),
      ],
      [
        '/apis/rbac.authorization.k8s.io/v1/clusterroles',
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', rules: [] },
        (o) => ({ ...o, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] }),
      ],
      ['/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace' }, (o) => ({ ...o, metadata: { ...(o['metadata'] as object), labels: { a: 'b' } } })],
    ];
    for (const [path, body, change] of cases) {
      const name = 'crud-nogen';
      const c = await s.admin.request('POST', path, { ...body, metadata: { name, generation: 7 } });
      assert.equal(c.status, 201, `${path}: ${c.text}`);
      assert.equal(c.json.metadata.generation, undefined, path);
      const u = await s.admin.request('PUT', `${path}/${name}`, { ...change(c.json), metadata: { ...c.json.metadata, generation: 3 } });
      assert.equal(u.status, 200, `${path}: ${u.text}`);
      assert.equal(u.json.metadata.generation, undefined, path);
      assert.equal((await s.admin.request('GET', `${path}/${name}`)).json.metadata.generation, undefined, path);
    }
  });

  it('changes only status through /status and ignores status on the main PUT', async () => {
    const path = '/api/v1/namespaces/default/pods';
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'crud-pod' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } };
    const c = await s.admin.request('POST', path, pod);
    assert.equal(c.status, 201, c.text);
    const st = await s.admin.request('PUT', `${path}/crud-pod/status`, {
      ...c.json,
      metadata: { ...c.json.metadata, labels: { ignored: 'yes' } },
      status: { phase: 'Running' },
    });
    assert.equal(st.status, 200, st.text);
    assert.equal(st.json.status.phase, 'Running');
    assert.equal(st.json.metadata.labels?.ignored, undefined);
    const main = await s.admin.request('PUT', `${path}/crud-pod`, {
      ...st.json,
      metadata: { ...st.json.metadata, labels: { l: '1' } },
      status: { phase: 'Failed' },
    });
    assert.equal(main.status, 200, main.text);
    assert.equal(main.json.status.phase, 'Running');
    assert.equal(main.json.metadata.labels.l, '1');
  });
});

describe('events.k8s.io/v1', () => {
  const path = '/apis/events.k8s.io/v1/namespaces/default/events';
  const ev = (name: string, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name },
    eventTime: '2024-01-01T00:00:00.000000Z',
    type: 'Normal',
    action: 'Started',
    reason: 'Started',
    reportingController: 'example.com/ctl',
    reportingInstance: 'ctl-1',
    regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
    ...extra,
  });

  it('accepts a complete event', async () => {
    const r = await s.admin.request('POST', path, ev('ev-ok'));
    assert.equal(r.status, 201, r.text);
  });

  it('rejects a type other than Normal or Warning', async () => {
    const r = await s.admin.request('POST', path, ev('ev-type', { type: 'Bad' }));
    assert.equal(r.status, 422);
    assert.ok(
      r.json.details.causes.some((c: { field: string }) => c.field === 'type'),
      r.text,
    );
  });

  it('requires action, reason, reportingController and reportingInstance', async () => {
    const body: Record<string, unknown> = ev('ev-req');
    for (const k of ['action', 'reason', 'reportingController', 'reportingInstance']) delete body[k];
    const r = await s.admin.request('POST', path, body);
    assert.equal(r.status, 422);
    const fields = r.json.details.causes.map((c: { field: string }) => c.field);
    for (const f of ['action', 'reason', 'reportingController', 'reportingInstance']) assert.ok(fields.includes(f), `${f} in ${fields}`);
  });

  it('forbids deprecated fields on new events', async () => {
    const r = await s.admin.request('POST', path, ev('ev-dep', { deprecatedCount: 3, deprecatedSource: { component: 'x' } }));
    assert.equal(r.status, 422);
    const fields = r.json.details.causes.map((c: { field: string }) => c.field);
    assert.ok(
      fields.some((f: string) => f.startsWith('deprecated')),
      r.text,
    );
  });
});
