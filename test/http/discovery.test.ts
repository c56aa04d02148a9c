// Discovery documents, /version and the health endpoints over HTTP.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';

let s: TestServer;
let c: HttpsClient;
before(async () => {
  s = await startTestServer();
  c = s.admin;
});
after(async () => {
  await s.close();
});

describe('discovery', () => {
  it('serves /api with the core versions', async () => {
    const r = await c.request('GET', '/api');
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'APIVersions');
    assert.deepEqual(r.json.versions, ['v1']);
  });

  it('serves /api/v1 with configmaps, pods/status and namespaces', async () => {
    const r = await c.request('GET', '/api/v1');
    assert.equal(r.json.kind, 'APIResourceList');
    assert.equal(r.json.groupVersion, 'v1');
    const byName = new Map(r.json.resources.map((x: { name: string }) => [x.name, x]));
    const cms = byName.get('configmaps') as { namespaced: boolean; kind: string; shortNames: string[]; verbs: string[] };
    assert.equal(cms.kind, 'ConfigMap');
    assert.equal(cms.namespaced, true);
    assert.deepEqual(cms.shortNames, ['cm']);
    for (const v of ['create', 'delete', 'deletecollection', 'get', 'list', 'update', 'watch']) assert.ok(cms.verbs.includes(v), v);
    assert.ok(byName.has('pods/status'));
    assert.equal((byName.get('namespaces') as { namespaced: boolean }).namespaced, false);
  });

  it('serves /apis, /apis/<group> and /apis/<group>/<version>', async () => {
    const groups = await c.request('GET', '/apis');
    assert.equal(groups.json.kind, 'APIGroupList');
    const names = groups.json.groups.map((g: { name: string }) => g.name);
    for (const g of ['events.k8s.io', 'coordination.k8s.io', 'discovery.k8s.io', 'rbac.authorization.k8s.io', 'apiregistration.k8s.io'])
      assert.ok(names.includes(g), g);
    const g = await c.request('GET', '/apis/rbac.authorization.k8s.io');
    assert.equal(g.json.kind, 'APIGroup');
    assert.equal(g.json.preferredVersion.groupVersion, 'rbac.authorization.k8s.io/v1');
    const v = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1');
    assert.equal(v.json.kind, 'APIResourceList');
    assert.ok(v.json.resources.some((x: { name: string }) => x.name === 'clusterroles'));
  });

  it('answers 404 for an unknown group', async () => {
    const r = await c.request('GET', '/apis/nope.example.com/v1');
    assert.equal(r.status, 404);
    assert.equal(r.json.reason, 'NotFound');
  });

  it('serves aggregated discovery with its content type', async () => {
    const accept = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList';
    for (const path of ['/api', '/apis']) {
      const r = await c.request('GET', path, undefined, { accept });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], accept);
      assert.equal(r.json.kind, 'APIGroupDiscoveryList');
      assert.equal(r.json.apiVersion, 'apidiscovery.k8s.io/v2');
      assert.ok(r.json.items.length > 0);
    }
  });

  it('serves /version', async () => {
    const r = await c.request('GET', '/version');
    assert.equal(r.status, 200);
    for (const k of ['major', 'minor', 'gitVersion', 'platform']) assert.equal(typeof r.json[k], 'string', k);
  });
});

describe('health', () => {
  for (const ep of ['/healthz', '/livez', '/readyz']) {
    it(`answers ${ep} with plain ok`, async () => {
      const r = await c.request('GET', ep);
      assert.equal(r.status, 200);
      assert.equal(r.text, 'ok');
      assert.match(String(r.headers['content-type']), /^text\/plain/);
    });
  }

  it('lists every check with verbose and ends with healthz check passed', async () => {
    const r = await c.request('GET', '/readyz?verbose');
    assert.equal(r.status, 200);
    const lines = r.text.trimEnd().split('\n');
    assert.ok(lines.includes('[+]ping ok'), r.text);
    assert.ok(lines.includes('[+]log ok'), r.text);
    assert.equal(lines.at(-1), 'healthz check passed');
  });

  it('prints excluded checks with repeatable exclude', async () => {
    const r = await c.request('GET', '/livez?verbose&exclude=ping&exclude=log');
    assert.equal(r.status, 200);
    assert.match(r.text, /^\[\+\]ping excluded: ok$/m);
    assert.match(r.text, /^\[\+\]log excluded: ok$/m);
  });

  it('serves single checks', async () => {
    const r = await c.request('GET', '/readyz/ping');
    assert.equal(r.status, 200);
    assert.equal(r.text, 'ok');
    assert.equal((await c.request('GET', '/livez/ping')).status, 200);
  });

  it('answers 404 for an unknown check', async () => {
    assert.equal((await c.request('GET', '/readyz/nope')).status, 404);
  });
});
