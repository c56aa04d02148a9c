// What every namespace gets, as kube-controller-manager gives it: the
// ServiceAccount `default` (`serviceaccount`) and the ConfigMap
// `kube-root-ca.crt` with the cluster CA (`root-ca-cert-publisher`), recreated
// when deleted, never added to a namespace being deleted; a changed
// `kube-root-ca.crt` is put back once (the controllers run on the elected
// leader only, so processes with different CAs do not fight over it).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { devPkiPaths } from '../../certs/devpki.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { eventually } from '../helpers/eventually.js';

describe('namespace defaults (serviceaccount, root-ca-cert-publisher)', () => {
  let s: TestServer;
  let ca: string;
  before(async () => {
    s = await startTestServer({ flags: ['--controllers=*'] });
    ca = await readFile(devPkiPaths(s.dataDir).caCert, 'utf8');
  });
  after(() => s?.close());

  const get = (path: string) => s.admin.request('GET', path);
  const present = (path: string) =>
    eventually(path, async () => {
      const r = await get(path);
      return r.status === 200 ? r.json : undefined;
    });

  it('puts both into the built-in namespaces and into a new one', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      await present(`/api/v1/namespaces/${ns}/serviceaccounts/default`);
      const cm = await present(`/api/v1/namespaces/${ns}/configmaps/kube-root-ca.crt`);
      assert.equal(cm.data['ca.crt'], ca);
    }
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } })).status, 201);
    await present('/api/v1/namespaces/team-a/serviceaccounts/default');
    const cm = await present('/api/v1/namespaces/team-a/configmaps/kube-root-ca.crt');
    assert.match(cm.metadata.annotations['kubernetes.io/description'], /verify the kube-apiserver/);
  });

  it('recreates them when deleted, and puts a changed kube-root-ca.crt back once', async () => {
    const sa = await present('/api/v1/namespaces/team-a/serviceaccounts/default');
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/team-a/serviceaccounts/default')).status, 200);
    await eventually('a new default service account', async () => {
      const r = await get('/api/v1/namespaces/team-a/serviceaccounts/default');
      return r.status === 200 && r.json.metadata.uid !== sa.metadata.uid ? r.json : undefined;
    });
    const cm = await present('/api/v1/namespaces/team-a/configmaps/kube-root-ca.crt');
    const w = await s.admin.watch(`/api/v1/namespaces/team-a/configmaps?watch=1&resourceVersion=${cm.metadata.resourceVersion}`);
    try {
      const put = await s.admin.request('PUT', '/api/v1/namespaces/team-a/configmaps/kube-root-ca.crt', {
        ...cm,
        metadata: { ...cm.metadata, annotations: {} },
        data: { 'ca.crt': 'not the CA', extra: 'x' },
      });
      assert.equal(put.status, 200, put.text);
      const [edited, putBack] = await w.take(2, 10_000);
      assert.equal(edited!.object.data['ca.crt'], 'not the CA');
      assert.equal(putBack!.type, 'MODIFIED');
      assert.deepEqual(putBack!.object.data, { 'ca.crt': ca });
      assert.match(putBack!.object.metadata.annotations['kubernetes.io/description'], /verify the kube-apiserver/);
      // No write loop: the next change the watch sees is this marker, not another rewrite.
      assert.equal(
        (await s.admin.request('POST', '/api/v1/namespaces/team-a/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'marker' } })).status,
        201,
      );
      const [next] = await w.take(1, 10_000);
      assert.equal(`${next!.type} ${next!.object.metadata.name}`, 'ADDED marker');
    } finally {
      w.stop();
    }
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/team-a/configmaps/kube-root-ca.crt')).status, 200);
    await present('/api/v1/namespaces/team-a/configmaps/kube-root-ca.crt');
  });

  it('a token for the default service account authenticates as it', async () => {
    const tr = await s.admin.request('POST', '/api/v1/namespaces/team-a/serviceaccounts/default/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {},
    });
    assert.equal(tr.status, 201, tr.text);
    const who = await s.anonymous.request(
      'POST',
      '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
      { authorization: `Bearer ${tr.json.status.token}` },
    );
    assert.equal(who.json.status.userInfo.username, 'system:serviceaccount:team-a:default');
  });

  it('adds nothing to a namespace being deleted', async () => {
    // A finalizer of the user's keeps the namespace Terminating.
    const ns = await s.admin.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: 'going', finalizers: ['example.com/hold'] },
    });
    assert.equal(ns.status, 201, ns.text);
    await present('/api/v1/namespaces/going/serviceaccounts/default');
    assert.equal((await s.admin.request('DELETE', '/api/v1/namespaces/going')).status, 200);
    await eventually('the namespace to empty', async () => ((await get('/api/v1/namespaces/going/serviceaccounts/default')).status === 404 ? true : undefined));
    // A few passes of both controllers later, it is still empty.
    for (let i = 0; i < 5; i++) {
      await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'nudge-' } });
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal((await get('/api/v1/namespaces/going/serviceaccounts/default')).status, 404);
    assert.equal((await get('/api/v1/namespaces/going/configmaps/kube-root-ca.crt')).status, 404);
  });
});
