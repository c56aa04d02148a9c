// The Node authorizer and NodeRestriction through a real server: a kubelet
// identity (client certificate CN=system:node:n1, O=system:nodes) reads what
// its pods need and nothing of other nodes' pods.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';
import { clientAs, eventually } from './kit.js';

const NS = '/api/v1/namespaces/default';

function pod(name: string, node: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...meta },
    spec: { nodeName: node, containers: [{ name: 'c', image: 'busybox' }], ...extra },
  };
}

describe('the Node authorizer with NodeRestriction', () => {
  let srv: TestServer;
  let n1: HttpsClient;
  let notANode: HttpsClient;

  before(async () => {
    srv = await startTestServer({ flags: ['--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction'] });
    n1 = await clientAs(srv, 'system:node:n1', ['system:nodes']);
    notANode = await clientAs(srv, 'system:node:n1');
    for (const [name, data] of [
      ['s1', 'one'],
      ['s2', 'two'],
      ['s3', 'three'],
    ] as const) {
      const r = await srv.admin.request('POST', `${NS}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData: { k: data } });
      assert.equal(r.status, 201, r.text);
    }
    for (const name of ['cm1', 'cm2']) {
      assert.equal((await srv.admin.request('POST', `${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } })).status, 201);
    }
    const p1 = pod('p1', 'n1', {
      volumes: [
        { name: 'v', secret: { secretName: 's1' } },
        { name: 'c', projected: { sources: [{ configMap: { name: 'cm1' } }] } },
      ],
      serviceAccountName: 'runner',
    });
    const p2 = pod('p2', 'n2', {
      imagePullSecrets: [{ name: 's2' }],
      containers: [{ name: 'c', image: 'busybox', envFrom: [{ configMapRef: { name: 'cm2' } }] }],
    });
    for (const p of [p1, p2]) assert.equal((await srv.admin.request('POST', `${NS}/pods`, p)).status, 201);
  });

  after(async () => {
    n1?.close();
    notANode?.close();
    await srv?.close();
  });

  it('lets a node read the secret and config map of a pod bound to it', async () => {
    await eventually('n1 can read s1', async () => (await n1.request('GET', `${NS}/secrets/s1`)).status === 200);
    assert.equal((await n1.request('GET', `${NS}/configmaps/cm1`)).status, 200);
  });

  it("refuses a node the secret and config map of another node's pod", async () => {
    const r = await n1.request('GET', `${NS}/secrets/s2`);
    assert.equal(r.status, 403);
    assert.equal(r.json.reason, 'Forbidden');
    assert.match(
      r.json.message,
      /^secrets "s2" is forbidden: User "system:node:n1" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'n1' and this object/,
    );
    assert.equal((await n1.request('GET', `${NS}/configmaps/cm2`)).status, 403);
    assert.equal((await n1.request('GET', `${NS}/secrets/s3`)).status, 403);
  });

  it('refuses a user named like a node but outside system:nodes', async () => {
    assert.equal((await notANode.request('GET', `${NS}/secrets/s1`)).status, 403);
  });

  it('lets a node list or watch one related secret through a metadata.name field selector', async () => {
    assert.equal((await n1.request('GET', `${NS}/secrets?fieldSelector=metadata.name%3Ds1`)).status, 200);
    assert.equal((await n1.request('GET', `${NS}/secrets?fieldSelector=metadata.name%3Ds2`)).status, 403);
    assert.equal((await n1.request('GET', `${NS}/secrets`)).status, 403);
  });

  it('lets a node list pods only with its own spec.nodeName field selector', async () => {
    const own = await n1.request('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dn1`);
    assert.equal(own.status, 200);
    assert.deepEqual(
      own.json.items.map((p: { metadata: { name: string } }) => p.metadata.name),
      ['p1'],
    );
    const all = await n1.request('GET', '/api/v1/pods');
    assert.equal(all.status, 403);
    assert.match(all.json.message, /can only list\/watch pods with spec.nodeName field selector/);
    assert.equal((await n1.request('GET', `/api/v1/pods?fieldSelector=spec.nodeName%3Dn2`)).status, 403);
    assert.equal((await n1.request('GET', `/api/v1/pods?watch=1&fieldSelector=spec.nodeName%21%3Dn1`)).status, 403);
  });

  it('lets a node get its own pods and its own Node, not others', async () => {
    assert.equal((await n1.request('GET', `${NS}/pods/p1`)).status, 200);
    assert.equal((await n1.request('GET', `${NS}/pods/p2`)).status, 403);
    assert.equal((await n1.request('GET', '/api/v1/nodes/n1')).status, 404);
    const other = await n1.request('GET', '/api/v1/nodes/n2');
    assert.equal(other.status, 403);
    assert.match(other.json.message, /node 'n1' cannot read 'n2', only its own Node object/);
    assert.equal((await n1.request('GET', '/api/v1/nodes')).status, 403);
  });

  it('lets a node create a token only for the service account of its pods', async () => {
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['x'] } };
    const mine = await n1.request('POST', `${NS}/serviceaccounts/runner/token`, body);
    assert.notEqual(mine.status, 403, mine.text);
    assert.equal((await n1.request('POST', `${NS}/serviceaccounts/other/token`, body)).status, 403);
  });

  it('lets a node register its own Node but not set restricted labels or write another node', async () => {
    const node = (name: string, labels: Record<string, string> = {}) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels } });
    const restricted = await n1.request('POST', '/api/v1/nodes', node('n1', { 'node-restriction.kubernetes.io/pool': 'a' }));
    assert.equal(restricted.status, 403);
    assert.equal(restricted.json.message, 'nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/pool');
    const other = await n1.request('POST', '/api/v1/nodes', node('n2'));
    assert.equal(other.status, 403);
    assert.match(other.json.message, /node "n1" is not allowed to modify node "n2"/);
    const own = await n1.request('POST', '/api/v1/nodes', node('n1', { 'kubernetes.io/hostname': 'n1', team: 'a' }));
    assert.equal(own.status, 201, own.text);
    const relabel = { ...own.json, metadata: { ...own.json.metadata, labels: { ...own.json.metadata.labels, 'node-restriction.kubernetes.io/pool': 'b' } } };
    const upd = await n1.request('PUT', '/api/v1/nodes/n1', relabel);
    assert.equal(upd.status, 403, upd.text);
    assert.match(upd.json.message, /is not allowed to modify labels: node-restriction.kubernetes.io\/pool/);
    const taint = { ...own.json, spec: { taints: [{ key: 'k', effect: 'NoSchedule' }] } };
    assert.match((await n1.request('PUT', '/api/v1/nodes/n1', taint)).json.message, /not allowed to modify taints/);
    // A PATCH is judged by the object it produces, in every patch type.
    const smp = await n1.request(
      'PATCH',
      '/api/v1/nodes/n1',
      { metadata: { labels: { 'node-restriction.kubernetes.io/pool': 'c' } } },
      { 'content-type': 'application/strategic-merge-patch+json' },
    );
    assert.equal(smp.status, 403, smp.text);
    assert.match(smp.json.message, /is not allowed to modify labels: node-restriction.kubernetes.io\/pool/);
    const jsonPatch = await n1.request('PATCH', '/api/v1/nodes/n1', [{ op: 'add', path: '/spec', value: { taints: [{ key: 'k', effect: 'NoSchedule' }] } }], {
      'content-type': 'application/json-patch+json',
    });
    assert.equal(jsonPatch.status, 403, jsonPatch.text);
    assert.match(jsonPatch.json.message, /not allowed to modify taints/);
    const harmless = await n1.request('PATCH', '/api/v1/nodes/n1', { metadata: { labels: { team: 'b' } } }, { 'content-type': 'application/merge-patch+json' });
    assert.equal(harmless.status, 200, harmless.text);
    assert.equal((await srv.admin.request('POST', '/api/v1/nodes', node('n2'))).status, 201);
    const n2 = (await srv.admin.request('GET', '/api/v1/nodes/n2')).json;
    assert.match((await n1.request('PUT', '/api/v1/nodes/n2', n2)).json.message, /node "n1" is not allowed to modify node "n2"/);
    // Deleting nodes is not granted to nodes at all (NodeRestriction would refuse it too).
    assert.equal((await n1.request('DELETE', '/api/v1/nodes/n1')).status, 403);
  });

  it('lets a node create only mirror pods bound to itself that reference nothing', async () => {
    const mirror = { 'kubernetes.io/config.mirror': 'hash' };
    const plain = await n1.request('POST', `${NS}/pods`, pod('m0', 'n1'));
    assert.equal(plain.status, 403);
    assert.equal(
      plain.json.message,
      'pods "m0" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods',
    );
    const elsewhere = await n1.request('POST', `${NS}/pods`, pod('m1', 'n2', {}, { annotations: mirror }));
    assert.match(elsewhere.json.message, /node "n1" can only create pods with spec.nodeName set to itself/);
    const withSecret = await n1.request(
      'POST',
      `${NS}/pods`,
      pod('m2', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's2' } }] }, { annotations: mirror }),
    );
    assert.match(withSecret.json.message, /node "n1" can not create pods that reference secrets/);
    const ok = await n1.request('POST', `${NS}/pods`, pod('m3', 'n1', {}, { annotations: mirror }));
    assert.equal(ok.status, 201, ok.text);
  });

  it("refuses a node deleting or updating the status of another node's pod", async () => {
    const del = await n1.request('DELETE', `${NS}/pods/p2`);
    assert.equal(del.status, 403);
    assert.match(del.json.message, /node "n1" can only delete pods with spec.nodeName set to itself/);
    const p2 = (await srv.admin.request('GET', `${NS}/pods/p2`)).json;
    const st = await n1.request('PUT', `${NS}/pods/p2/status`, p2);
    assert.equal(st.status, 403);
    assert.match(st.json.message, /node "n1" can only update pod status for pods with spec.nodeName set to itself/);
    const p1 = (await srv.admin.request('GET', `${NS}/pods/p1`)).json;
    assert.equal((await n1.request('PUT', `${NS}/pods/p1/status`, { ...p1, status: { phase: 'Running' } })).status, 200);
    const upd = await n1.request('PUT', `${NS}/pods/p1`, p1);
    assert.equal(upd.status, 403);
  });

  it('follows the pods: a node loses a secret when its pod is deleted and gains one when a pod is bound', async () => {
    assert.equal((await srv.admin.request('DELETE', `${NS}/pods/p1?gracePeriodSeconds=0`)).status, 200);
    await eventually('n1 loses s1', async () => (await n1.request('GET', `${NS}/secrets/s1`)).status === 403);
    assert.equal((await srv.admin.request('POST', `${NS}/pods`, pod('p3', 'n1', { volumes: [{ name: 'v', secret: { secretName: 's3' } }] }))).status, 201);
    await eventually('n1 gains s3', async () => (await n1.request('GET', `${NS}/secrets/s3`)).status === 200);
  });
});
