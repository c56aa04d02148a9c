// Lists: list kinds, all-namespaces lists, paging with consistent
// snapshots and expiring tokens, every resourceVersion/resourceVersionMatch
// cell, too-new versions, and label and field selectors.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient, Reply } from '../helpers/client.js';

let s: TestServer;
let c: HttpsClient;
before(async () => {
  s = await startTestServer();
  c = s.admin;
  for (const ns of ['list-a', 'list-b', 'page', 'sel']) {
    await c.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
});
after(async () => {
  await s.close();
});

const cm = (name: string, labels?: Record<string, string>) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...(labels ? { labels } : {}) } });
const names = (r: Reply): string[] => r.json.items.map((o: { metadata: { name: string } }) => o.metadata.name);
const q = (path: string, params: Record<string, string | undefined>) =>
  `${path}?${new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined)).toString()}`;

async function create(ns: string, name: string, labels?: Record<string, string>): Promise<Reply> {
  const r = await c.request('POST', `/api/v1/namespaces/${ns}/configmaps`, cm(name, labels));
  assert.equal(r.status, 201, r.text);
  return r;
}

describe('list kinds', () => {
  it('answers ConfigMapList, PodList, NamespaceList and ClusterRoleList', async () => {
    for (const [path, kind, apiVersion] of [
      ['/api/v1/namespaces/default/configmaps', 'ConfigMapList', 'v1'],
      ['/api/v1/namespaces/default/pods', 'PodList', 'v1'],
      ['/api/v1/namespaces', 'NamespaceList', 'v1'],
      ['/apis/rbac.authorization.k8s.io/v1/clusterroles', 'ClusterRoleList', 'rbac.authorization.k8s.io/v1'],
      ['/apis/coordination.k8s.io/v1/leases', 'LeaseList', 'coordination.k8s.io/v1'],
    ] as const) {
      const r = await c.request('GET', path);
      assert.equal(r.status, 200, path);
      assert.equal(r.json.kind, kind);
      assert.equal(r.json.apiVersion, apiVersion);
      assert.ok(Array.isArray(r.json.items));
      assert.match(r.json.metadata.resourceVersion, /^\d+$/);
    }
  });

  it('lists across all namespaces', async () => {
    await create('list-a', 'all-1');
    await create('list-b', 'all-2');
    const r = await c.request('GET', '/api/v1/configmaps');
    assert.equal(r.status, 200);
    const keys = r.json.items.map((o: { metadata: { namespace: string; name: string } }) => `${o.metadata.namespace}/${o.metadata.name}`);
    assert.ok(keys.includes('list-a/all-1'));
    assert.ok(keys.includes('list-b/all-2'));
    const one = await c.request('GET', '/api/v1/namespaces/list-a/configmaps');
    assert.deepEqual(names(one), ['all-1']);
  });
});

describe('paging', () => {
  const P = '/api/v1/namespaces/page/configmaps';
  before(async () => {
    for (let i = 1; i <= 5; i++) await create('page', `p${i}`, { n: String(i) });
  });

  it('pages with limit and continue, with remainingItemCount except on the last page', async () => {
    const p1 = await c.request('GET', q(P, { limit: '2' }));
    assert.deepEqual(names(p1), ['p1', 'p2']);
    assert.equal(p1.json.metadata.remainingItemCount, 3);
    assert.ok(p1.json.metadata.continue);
    const p2 = await c.request('GET', q(P, { limit: '2', continue: p1.json.metadata.continue }));
    assert.deepEqual(names(p2), ['p3', 'p4']);
    assert.equal(p2.json.metadata.remainingItemCount, 1);
    const p3 = await c.request('GET', q(P, { limit: '2', continue: p2.json.metadata.continue }));
    assert.deepEqual(names(p3), ['p5']);
    assert.equal(p3.json.metadata.continue, undefined);
    assert.equal(p3.json.metadata.remainingItemCount, undefined);
    assert.equal(p2.json.metadata.resourceVersion, p1.json.metadata.resourceVersion);
    assert.equal(p3.json.metadata.resourceVersion, p1.json.metadata.resourceVersion);
  });

  it('omits remainingItemCount when a selector is set', async () => {
    const r = await c.request('GET', q(P, { limit: '1', labelSelector: 'n!=9' }));
    assert.equal(r.json.items.length, 1);
    assert.ok(r.json.metadata.continue);
    assert.equal(r.json.metadata.remainingItemCount, undefined);
  });

  it('keeps a consistent snapshot across pages while writes happen', async () => {
    const p1 = await c.request('GET', q(P, { limit: '2' }));
    assert.deepEqual(names(p1), ['p1', 'p2']);
    assert.equal((await c.request('DELETE', `${P}/p4`)).status, 200);
    await create('page', 'p35');
    const p3 = (await c.request('GET', `${P}/p3`)).json;
    await c.request('PUT', `${P}/p3`, { ...p3, data: { changed: 'yes' } });
    const rest = await c.request('GET', q(P, { limit: '10', continue: p1.json.metadata.continue }));
    assert.deepEqual(names(rest), ['p3', 'p4', 'p5']);
    assert.equal(rest.json.items[0].data, undefined);
    assert.equal(rest.json.metadata.resourceVersion, p1.json.metadata.resourceVersion);
    const now = await c.request('GET', P);
    assert.deepEqual(names(now), ['p1', 'p2', 'p3', 'p35', 'p5']);
  });

  it('answers 400 for an invalid continue token', async () => {
    for (const token of ['garbage!!', Buffer.from('{"v":"x"}').toString('base64url')]) {
      const r = await c.request('GET', q(P, { limit: '2', continue: token }));
      assert.equal(r.status, 400, token);
      assert.equal(r.json.reason, 'BadRequest');
      assert.match(r.json.message, /continue/);
    }
  });

  it('answers 400 for a continue token of another list', async () => {
    const p1 = await c.request('GET', q(P, { limit: '1' }));
    const r = await c.request('GET', q('/api/v1/namespaces/sel/configmaps', { limit: '1', continue: p1.json.metadata.continue }));
    assert.equal(r.status, 400);
  });
});

describe('expired continue tokens', () => {
  let x: TestServer;
  let offset = 0;
  before(async () => {
    x = await startTestServer({ flags: ['--watch-history=2s'], hooks: { clock: () => Date.now() + offset } });
  });
  after(async () => {
    await x.close();
  });

  it('answers 410 Expired once the token is older than the history window', async () => {
    const P = '/api/v1/namespaces/default/configmaps';
    for (const n of ['e1', 'e2', 'e3']) await x.admin.request('POST', P, cm(n));
    const p1 = await x.admin.request('GET', q(P, { limit: '1' }));
    assert.ok(p1.json.metadata.continue);
    await x.admin.request('POST', P, cm('e4'));
    offset += 3000;
    await x.admin.request('POST', P, cm('e5'));
    const r = await x.admin.request('GET', q(P, { limit: '1', continue: p1.json.metadata.continue }));
    assert.equal(r.status, 410, r.text);
    assert.equal(r.json.reason, 'Expired');
    assert.equal(r.json.code, 410);
  });

  it('answers 410 Expired for an Exact list at a version older than the history window', async () => {
    const P = '/api/v1/namespaces/default/configmaps';
    const old = (await x.admin.request('POST', P, cm('x1'))).json.metadata.resourceVersion;
    await x.admin.request('POST', P, cm('x2'));
    offset += 3000;
    await x.admin.request('POST', P, cm('x3'));
    const r = await x.admin.request('GET', q(P, { resourceVersion: old, resourceVersionMatch: 'Exact' }));
    assert.equal(r.status, 410, r.text);
    assert.equal(r.json.reason, 'Expired');
  });
});

describe('resourceVersion and resourceVersionMatch', () => {
  const P = '/api/v1/namespaces/list-a/configmaps';
  let rv1: string;
  let rv2: string;
  before(async () => {
    rv1 = (await create('list-a', 'rv-1')).json.metadata.resourceVersion;
    rv2 = (await create('list-a', 'rv-2')).json.metadata.resourceVersion;
  });
  const tooNew = () => String(Number(rv2) + 1_000_000);

  function assertListOptionsInvalid(r: Reply): void {
    assert.equal(r.status, 422, r.text);
    assert.equal(r.json.reason, 'Invalid');
    assert.equal(r.json.details.kind, 'ListOptions');
    assert.equal(r.json.details.group, 'meta.k8s.io');
  }

  function assertTooLarge(r: Reply): void {
    assert.equal(r.status, 504, r.text);
    assert.match(r.json.message, /Too large resource version/);
    assert.ok(r.headers['retry-after'], 'Retry-After header');
  }

  describe('get', () => {
    it('serves the most recent state with resourceVersion unset', async () => {
      const r = await c.request('GET', `${P}/rv-1`);
      assert.equal(r.status, 200);
      assert.equal(r.json.metadata.resourceVersion, rv1);
    });
    it('serves any state with resourceVersion 0', async () => {
      assert.equal((await c.request('GET', q(`${P}/rv-1`, { resourceVersion: '0' }))).status, 200);
    });
    it('serves a state not older than a known resourceVersion', async () => {
      assert.equal((await c.request('GET', q(`${P}/rv-1`, { resourceVersion: rv2 }))).status, 200);
    });
    it('answers 504 with Retry-After for a too-new resourceVersion', async () => {
      assertTooLarge(await c.request('GET', q(`${P}/rv-1`, { resourceVersion: tooNew() })));
    });
    it('answers 4xx for a malformed resourceVersion', async () => {
      const r = await c.request('GET', q(`${P}/rv-1`, { resourceVersion: 'abc' }));
      assert.ok(r.status >= 400 && r.status < 500, String(r.status));
      assert.equal(r.json.kind, 'Status');
    });
  });

  describe('list without resourceVersionMatch', () => {
    it('serves the most recent list with rv unset, with or without a limit', async () => {
      for (const extra of [{}, { limit: '1' }]) {
        const r = await c.request('GET', q(P, extra));
        assert.equal(r.status, 200);
        assert.ok(Number(r.json.metadata.resourceVersion) >= Number(rv2));
      }
    });
    it('serves any list with rv 0, with or without a limit', async () => {
      for (const extra of [{}, { limit: '1' }]) assert.equal((await c.request('GET', q(P, { resourceVersion: '0', ...extra }))).status, 200);
    });
    it('serves a list not older than rv without a limit', async () => {
      const r = await c.request('GET', q(P, { resourceVersion: rv1 }));
      assert.equal(r.status, 200);
      assert.ok(Number(r.json.metadata.resourceVersion) >= Number(rv1));
      assert.ok(names(r).includes('rv-2'));
    });
    it('serves the exact list at rv with a limit', async () => {
      const r = await c.request('GET', q(P, { resourceVersion: rv1, limit: '50' }));
      assert.equal(r.status, 200);
      assert.equal(r.json.metadata.resourceVersion, rv1);
      assert.ok(names(r).includes('rv-1'));
      assert.ok(!names(r).includes('rv-2'));
    });
    it('continues a list with rv unset or 0 and a continue token', async () => {
      const p1 = await c.request('GET', q(P, { limit: '1' }));
      for (const rv of [undefined, '0']) {
        const r = await c.request('GET', q(P, { limit: '1', continue: p1.json.metadata.continue, ...(rv ? { resourceVersion: rv } : {}) }));
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.metadata.resourceVersion, p1.json.metadata.resourceVersion);
      }
    });
    it('answers 400 for a continue token with a non-zero rv', async () => {
      const p1 = await c.request('GET', q(P, { limit: '1' }));
      const r = await c.request('GET', q(P, { limit: '1', continue: p1.json.metadata.continue, resourceVersion: rv1 }));
      assert.equal(r.status, 400);
      assert.equal(r.json.reason, 'BadRequest');
    });
    it('answers 504 for a too-new rv without a limit', async () => {
      assertTooLarge(await c.request('GET', q(P, { resourceVersion: tooNew() })));
    });
    it('answers 504 for a too-new rv with a limit', async () => {
      assertTooLarge(await c.request('GET', q(P, { resourceVersion: tooNew(), limit: '1' })));
    });
  });

  describe('list with resourceVersionMatch=Exact', () => {
    for (const extra of [{}, { limit: '1' }] as Array<Record<string, string>>) {
      const paging = extra['limit'] ? 'with a limit' : 'without a limit';
      it(`is invalid with rv unset, ${paging}`, async () => {
        assertListOptionsInvalid(await c.request('GET', q(P, { resourceVersionMatch: 'Exact', ...extra })));
      });
      it(`is invalid with rv 0, ${paging}`, async () => {
        assertListOptionsInvalid(await c.request('GET', q(P, { resourceVersionMatch: 'Exact', resourceVersion: '0', ...extra })));
      });
      it(`serves exactly rv, ${paging}`, async () => {
        const r = await c.request('GET', q(P, { resourceVersionMatch: 'Exact', resourceVersion: rv1, ...extra }));
        assert.equal(r.status, 200, r.text);
        assert.equal(r.json.metadata.resourceVersion, rv1);
        assert.ok(!names(r).includes('rv-2'));
      });
    }
    it('answers 504 for a too-new rv', async () => {
      assertTooLarge(await c.request('GET', q(P, { resourceVersionMatch: 'Exact', resourceVersion: tooNew() })));
    });
  });

  describe('list with resourceVersionMatch=NotOlderThan', () => {
    for (const extra of [{}, { limit: '1' }] as Array<Record<string, string>>) {
      const paging = extra['limit'] ? 'with a limit' : 'without a limit';
      it(`is invalid with rv unset, ${paging}`, async () => {
        assertListOptionsInvalid(await c.request('GET', q(P, { resourceVersionMatch: 'NotOlderThan', ...extra })));
      });
      it(`serves any state with rv 0, ${paging}`, async () => {
        assert.equal((await c.request('GET', q(P, { resourceVersionMatch: 'NotOlderThan', resourceVersion: '0', ...extra }))).status, 200);
      });
      it(`serves a state not older than rv, ${paging}`, async () => {
        const r = await c.request('GET', q(P, { resourceVersionMatch: 'NotOlderThan', resourceVersion: rv1, ...extra }));
        assert.equal(r.status, 200, r.text);
        assert.ok(Number(r.json.metadata.resourceVersion) >= Number(rv1));
      });
    }
    it('answers 504 for a too-new rv', async () => {
      assertTooLarge(await c.request('GET', q(P, { resourceVersionMatch: 'NotOlderThan', resourceVersion: tooNew() })));
    });
  });

  it('rejects an unknown resourceVersionMatch with 422', async () => {
    assertListOptionsInvalid(await c.request('GET', q(P, { resourceVersionMatch: 'Sometimes', resourceVersion: rv1 })));
  });

  it('rejects resourceVersionMatch with a continue token with 422', async () => {
    const p1 = await c.request('GET', q(P, { limit: '1' }));
    assertListOptionsInvalid(await c.request('GET', q(P, { limit: '1', continue: p1.json.metadata.continue, resourceVersionMatch: 'NotOlderThan' })));
  });
});

describe('selectors', () => {
  const S = '/api/v1/namespaces/sel/configmaps';
  before(async () => {
    await create('sel', 's1', { env: 'prod', tier: 'web' });
    await create('sel', 's2', { env: 'dev', tier: 'web' });
    await create('sel', 's3', { env: 'test' });
    await create('sel', 's4');
  });
  const sel = async (labelSelector: string) => {
    const r = await c.request('GET', q(S, { labelSelector }));
    assert.equal(r.status, 200, r.text);
    return names(r).sort();
  };

  it('matches label selectors with =, ==, !=, in, notin, exists and !key', async () => {
    assert.deepEqual(await sel('env=prod'), ['s1']);
    assert.deepEqual(await sel('env==dev'), ['s2']);
    assert.deepEqual(await sel('env!=prod'), ['s2', 's3', 's4']);
    assert.deepEqual(await sel('env in (prod,dev)'), ['s1', 's2']);
    assert.deepEqual(await sel('env notin (prod,dev)'), ['s3', 's4']);
    assert.deepEqual(await sel('tier'), ['s1', 's2']);
    assert.deepEqual(await sel('!tier'), ['s3', 's4']);
    assert.deepEqual(await sel('tier=web,env!=dev'), ['s1']);
  });

  it('matches metadata.name and metadata.namespace field selectors', async () => {
    const r = await c.request('GET', q(S, { fieldSelector: 'metadata.name=s2' }));
    assert.deepEqual(names(r), ['s2']);
    const n = await c.request('GET', q(S, { fieldSelector: 'metadata.name!=s2' }));
    assert.deepEqual(names(n).sort(), ['s1', 's3', 's4']);
    const all = await c.request('GET', q('/api/v1/configmaps', { fieldSelector: 'metadata.namespace=sel' }));
    assert.deepEqual(names(all).sort(), ['s1', 's2', 's3', 's4']);
  });

  it('matches pods by spec.nodeName and status.phase', async () => {
    const P = '/api/v1/namespaces/sel/pods';
    const pod = (name: string, nodeName?: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
    });
    assert.equal((await c.request('POST', P, pod('pa', 'node-1'))).status, 201);
    const pb = await c.request('POST', P, pod('pb'));
    await c.request('PUT', `${P}/pb/status`, { ...pb.json, status: { phase: 'Running' } });
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'spec.nodeName=node-1' }))), ['pa']);
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'spec.nodeName=' }))), ['pb']);
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'status.phase=Running' }))), ['pb']);
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'status.phase=Pending,spec.nodeName=node-1' }))), ['pa']);
  });

  it('matches secrets by type', async () => {
    const P = '/api/v1/namespaces/sel/secrets';
    await c.request('POST', P, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'opaque' }, type: 'Opaque', data: {} });
    await c.request('POST', P, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'tls' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': '', 'tls.key': '' },
    });
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'type=Opaque' }))), ['opaque']);
    assert.deepEqual(names(await c.request('GET', q(P, { fieldSelector: 'type=kubernetes.io/tls' }))), ['tls']);
  });

  it('answers 400 for invalid label and field selectors', async () => {
    for (const labelSelector of ['env in (prod', 'env=a=b', '!!x', 'Bad Key=1']) {
      const r = await c.request('GET', q(S, { labelSelector }));
      assert.equal(r.status, 400, labelSelector);
      assert.equal(r.json.reason, 'BadRequest');
    }
    for (const fieldSelector of ['metadata.name', 'metadata.name in (a)']) {
      const r = await c.request('GET', q(S, { fieldSelector }));
      assert.equal(r.status, 400, fieldSelector);
    }
  });

  it('answers 400 naming an unsupported field label', async () => {
    const r = await c.request('GET', q(S, { fieldSelector: 'spec.color=red' }));
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /field label not supported: spec\.color/);
  });
});
