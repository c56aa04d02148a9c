// Protobuf answers: objects, lists, Status errors, watch frames and
// PartialObjectMetadata of built-in types, read with an independent decoder
// built from Kubernetes' field numbers (protobuf-k8s.ts) and compared with the
// JSON answer; the JSON fallback and 406 for a type without a protobuf
// schema; request and response encodings chosen independently; bad protobuf
// bodies refused with a Status, nothing stored.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { NO_BACKGROUND_WRITES, startTestServer, type TestServer } from '../helpers/server.js';
import { FrameReader, K8S, unwrap, wrap } from './protobuf-k8s.js';
import { eventually } from '../helpers/eventually.js';

const PB = 'application/vnd.kubernetes.protobuf';
const CLIENT_GO = `${PB}, application/json`;
const NS = 'pb';

let s: TestServer;
before(async () => {
  // A protobuf list's resourceVersion is compared with the JSON list's read before it: nothing may write between them.
  s = await startTestServer({ flags: [...NO_BACKGROUND_WRITES] });
  assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
});
after(async () => {
  await s.close();
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose answer is kept as bytes (the test client keeps them as `body`). */
function raw(method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Raw> {
  return s.admin.request(method, path, body, headers);
}

const withoutType = (o: Record<string, unknown>) => {
  const { kind: _k, apiVersion: _a, ...rest } = o;
  return rest;
};

const TYPES = [
  {
    path: `/api/v1/namespaces/${NS}/configmaps`,
    kind: 'ConfigMap',
    obj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', labels: { a: 'b' }, annotations: { n: 'o' } }, data: { k: 'v', e: '' } },
  },
  {
    path: `/api/v1/namespaces/${NS}/secrets`,
    kind: 'Secret',
    obj: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's1' }, type: 'Opaque', data: { k: Buffer.from('secret').toString('base64') } },
  },
  { path: '/api/v1/namespaces', kind: 'Namespace', obj: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pb-ns', finalizers: ['example.com/x'] } } },
  {
    path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`,
    kind: 'Role',
    obj: {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r1' },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }],
    },
  },
];

describe('protobuf answers for built-in types', () => {
  for (const t of TYPES) {
    it(`${t.kind}: create, GET and LIST in protobuf decode to the JSON answer`, async () => {
      const created = await raw('POST', t.path, { 'content-type': 'application/json', accept: CLIENT_GO }, JSON.stringify(t.obj));
      assert.equal(created.status, 201, created.body.toString());
      assert.equal(created.headers['content-type'], PB);
      const c = unwrap(created.body);
      assert.equal(c.kind, t.kind);
      assert.equal(c.apiVersion, t.obj.apiVersion);

      const name = t.obj.metadata.name;
      const json = (await s.admin.request('GET', `${t.path}/${name}`)).json;
      assert.deepEqual(c.object, withoutType(json));
      const got = await raw('GET', `${t.path}/${name}`, { accept: CLIENT_GO });
      assert.equal(got.status, 200);
      assert.equal(got.headers['content-type'], PB);
      assert.deepEqual(unwrap(got.body).object, withoutType(json));

      const jsonList = (await s.admin.request('GET', t.path)).json;
      const list = await raw('GET', t.path, { accept: PB });
      const l = unwrap(list.body);
      assert.equal(l.kind, `${t.kind}List`);
      assert.equal(l.object.metadata.resourceVersion, jsonList.metadata.resourceVersion);
      assert.deepEqual(l.object.items, jsonList.items.map(withoutType));
      assert.ok(list.body.length < Buffer.byteLength(JSON.stringify(jsonList)), 'protobuf is smaller than JSON');
    });
  }

  it('large lists (a pooled joined buffer; streamed in chunks past 512 KiB) decode to the JSON list', async () => {
    const ns = 'pb-large';
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const value = 'v'.repeat(2000);
    for (let i = 0; i < 320; i += 40) {
      await Promise.all(
        Array.from({ length: 40 }, (_, k) =>
          s.admin.request('POST', `/api/v1/namespaces/${ns}/configmaps`, {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: `big-${i + k}` },
            data: { v: `${i + k}${value}` },
          }),
        ),
      );
    }
    // 100 items: ~210 KB (joined into a pooled buffer); all: ~670 KB (above STREAM_MIN, streamed).
    for (const [query, count] of [
      ['?limit=100', 100],
      ['', undefined],
    ] as const) {
      const jsonList = (await s.admin.request('GET', `/api/v1/namespaces/${ns}/configmaps${query}`)).json;
      const list = await raw('GET', `/api/v1/namespaces/${ns}/configmaps${query}`, { accept: PB });
      assert.equal(list.status, 200);
      assert.equal(Number(list.headers['content-length']), list.body.length);
      const l = unwrap(list.body);
      assert.equal(l.object.items.length, count ?? jsonList.items.length);
      assert.deepEqual(l.object.items, jsonList.items.map(withoutType));
    }
  });

  it('pages carry continue and remainingItemCount in ListMeta', async () => {
    for (const n of ['p1', 'p2', 'p3'])
      await s.admin.request('POST', `/api/v1/namespaces/${NS}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n } });
    const page = unwrap((await raw('GET', `/api/v1/namespaces/${NS}/configmaps?limit=2`, { accept: PB })).body);
    assert.equal(page.object.items.length, 2);
    assert.ok(page.object.metadata.continue);
    assert.ok(page.object.metadata.remainingItemCount >= 1);
  });

  it('answers Status errors in protobuf: 404, 409, 422', async () => {
    const P = `/api/v1/namespaces/${NS}/configmaps`;
    const nf = await raw('GET', `${P}/missing`, { accept: CLIENT_GO });
    assert.equal(nf.status, 404);
    assert.equal(nf.headers['content-type'], PB);
    const st = unwrap(nf.body);
    assert.deepEqual([st.kind, st.apiVersion], ['Status', 'v1']);
    assert.deepEqual(st.object, {
      metadata: {},
      status: 'Failure',
      message: 'configmaps "missing" not found',
      reason: 'NotFound',
      details: { name: 'missing', kind: 'configmaps' },
      code: 404,
    });

    const dup = await raw('POST', P, { 'content-type': 'application/json', accept: PB }, JSON.stringify(TYPES[0]!.obj));
    assert.equal(dup.status, 409);
    assert.equal(unwrap(dup.body).object.reason, 'AlreadyExists');

    const bad = await raw(
      'POST',
      P,
      { 'content-type': 'application/json', accept: PB },
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'Not_Valid' } }),
    );
    assert.equal(bad.status, 422);
    const inv = unwrap(bad.body).object;
    assert.equal(inv.reason, 'Invalid');
    assert.equal(inv.details.causes[0].field, 'metadata.name');
  });

  it('serves PartialObjectMetadataList in protobuf and Table only as JSON', async () => {
    const P = `/api/v1/namespaces/${NS}/configmaps`;
    const r = await raw('GET', P, { accept: `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json` });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], `${PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`);
    const l = unwrap(r.body);
    assert.deepEqual([l.kind, l.apiVersion], ['PartialObjectMetadataList', 'meta.k8s.io/v1']);
    assert.ok(l.object.items.some((i: { metadata: { name: string } }) => i.metadata.name === 'c1'));
    assert.equal(l.object.items[0].data, undefined);

    const t = await s.admin.request('GET', P, undefined, {
      accept: `${PB};as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1, application/json`,
    });
    assert.equal(t.status, 200);
    assert.equal(t.json.kind, 'Table');
    const only = await s.admin.request('GET', P, undefined, { accept: `${PB};as=Table;g=meta.k8s.io;v=v1` });
    assert.equal(only.status, 406);
  });
});

describe('request and response encodings are independent', () => {
  const P = `/api/v1/namespaces/${NS}/configmaps`;
  it('protobuf body, JSON answer', async () => {
    const body = wrap('v1', 'ConfigMap', { metadata: { name: 'in-pb' }, data: { x: '1' } });
    const r = await s.admin.request('POST', P, body, { 'content-type': PB, accept: 'application/json' });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json.data, { x: '1' });
  });
  it('protobuf body, protobuf answer, and an update the same way', async () => {
    const body = wrap('v1', 'ConfigMap', { metadata: { name: 'pb-pb' }, data: { x: '1' } });
    const r = await raw('POST', P, { 'content-type': PB, accept: PB }, body);
    assert.equal(r.status, 201, r.body.toString());
    const created = unwrap(r.body).object;
    const upd = wrap('v1', 'ConfigMap', { metadata: { name: 'pb-pb', resourceVersion: created.metadata.resourceVersion }, data: { x: '2' } });
    const u = await raw('PUT', `${P}/pb-pb`, { 'content-type': PB, accept: CLIENT_GO }, upd);
    assert.equal(u.status, 200, u.body.toString());
    assert.deepEqual(unwrap(u.body).object.data, { x: '2' });
  });
  it('JSON body, protobuf answer (covered above) and YAML answer for a protobuf body', async () => {
    const body = wrap('v1', 'ConfigMap', { metadata: { name: 'pb-yaml' } });
    const r = await s.admin.request('POST', P, body, { 'content-type': PB, accept: 'application/yaml' });
    assert.equal(r.status, 201);
    assert.match(r.text, /name: pb-yaml/);
  });
});

describe('bad protobuf bodies', () => {
  const P = `/api/v1/namespaces/${NS}/configmaps`;
  const good = () => wrap('v1', 'ConfigMap', { metadata: { name: 'bad-pb' }, data: { k: 'v' } });
  const refused = async (body: Buffer, code: number, message: RegExp) => {
    const r = await s.admin.request('POST', P, body, { 'content-type': PB });
    assert.equal(r.status, code, r.text);
    assert.equal(r.json.kind, 'Status');
    assert.match(r.json.message, message);
    assert.equal((await s.admin.request('GET', `${P}/bad-pb`)).status, 404, 'nothing stored');
  };
  it('a truncated body is a 400', async () => {
    const b = good();
    for (const cut of [3, 6, b.length - 3]) await refused(b.subarray(0, cut), 400, /protobuf/);
  });
  it('a wrong envelope prefix is a 400 naming it', async () => {
    const b = Buffer.from(good());
    b[1] = 0x39;
    await refused(b, 400, /expected prefix 6b387300, got "6b397300"/);
    await refused(Buffer.from('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad-pb"}}'), 400, /prefix/);
  });
  it('corrupted bytes are a 400', async () => {
    const b = Buffer.from(good());
    for (let i = 10; i < b.length; i++) b[i] = 0xff;
    await refused(b, 400, /protobuf/);
  });
  it('an invalid wire type is a 400', async () => {
    const u = K8S('Unknown')
      .encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw: Buffer.from([0x0f, 0x01]) })
      .finish();
    await refused(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), u]), 400, /protobuf/);
  });
  it('a gzip contentEncoding is a 415', async () => {
    const u = K8S('Unknown')
      .encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw: Buffer.from([0]), contentEncoding: 'gzip' })
      .finish();
    await refused(Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), u]), 415, /contentEncoding "gzip"/);
  });
  it('an unknown kind in the envelope is a 400 naming it', async () => {
    await refused(wrap('v1', 'ConfigMap', {}).fill(0x58, 8, 9), 400, /protobuf/);
  });
  it('an unknown field number is skipped as Go does, and not stored', async () => {
    // Field 99 (varint 7) appended to the ConfigMap message.
    const msg = K8S('ConfigMap')
      .encode({ metadata: { name: 'unknown-field' } })
      .finish();
    const withExtra = Buffer.concat([msg, Buffer.from([0x98, 0x06, 0x07])]);
    const u = K8S('Unknown')
      .encode({ typeMeta: { apiVersion: 'v1', kind: 'ConfigMap' }, raw: withExtra })
      .finish();
    const r = await s.admin.request('POST', P, Buffer.concat([Buffer.from([0x6b, 0x38, 0x73, 0x00]), u]), { 'content-type': PB });
    assert.equal(r.status, 201, r.text);
    assert.deepEqual(Object.keys(r.json).sort(), ['apiVersion', 'kind', 'metadata']);
  });
});

describe('protobuf watch', () => {
  it('streams length-prefixed WatchEvent frames, read across split TCP reads', async () => {
    const P = `/api/v1/namespaces/${NS}/configmaps`;
    const rv = (await s.admin.request('GET', P)).json.metadata.resourceVersion;
    const reader = new FrameReader();
    let contentType: string | undefined;
    const req = httpsRequest(
      new URL(`${P}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, s.url),
      { agent: false, ca: s.admin.agent.options.ca, cert: s.admin.agent.options.cert, key: s.admin.agent.options.key, headers: { accept: CLIENT_GO } },
      (res) => {
        contentType = res.headers['content-type'];
        // Feed every chunk in pieces of 1-7 bytes, so frames and headers split anywhere.
        res.on('data', (c: Buffer) => {
          for (let i = 0; i < c.length;) {
            const n = 1 + ((i * 7) % 7);
            reader.push(c.subarray(i, i + n));
            i += n;
          }
        });
      },
    );
    req.end();
    try {
      const created = await s.admin.request('POST', P, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w1' }, data: { a: '1' } });
      await s.admin.request('PUT', `${P}/w1`, { ...created.json, data: { a: '2' } });
      await s.admin.request('DELETE', `${P}/w1`);
      await eventually('three events', () => reader.events.filter((e) => e.type !== 'BOOKMARK').length >= 3, { timeoutMs: 5000, intervalMs: 20 });
      assert.equal(contentType, `${PB};stream=watch`);
      const evs = reader.events.filter((e) => e.type !== 'BOOKMARK');
      assert.deepEqual(
        evs.map((e) => e.type),
        ['ADDED', 'MODIFIED', 'DELETED'],
      );
      assert.deepEqual(
        evs.map((e) => e.kind),
        ['ConfigMap', 'ConfigMap', 'ConfigMap'],
      );
      assert.deepEqual(evs[0]!.object, withoutType(created.json));
      assert.deepEqual(evs[1]!.object.data, { a: '2' });
      assert.equal(evs[2]!.object.metadata.name, 'w1');
    } finally {
      req.destroy();
    }
  });

  it('a whole watch body (timeoutSeconds) is whole frames, each a decodable event', async () => {
    const P = `/api/v1/namespaces/${NS}/configmaps`;
    const r = await raw('GET', `${P}?watch=1&timeoutSeconds=1`, { accept: PB });
    const reader = new FrameReader();
    reader.push(r.body);
    assert.ok(reader.events.length > 3);
    assert.ok(reader.events.every((e) => e.type === 'ADDED' && e.kind === 'ConfigMap' && e.object.metadata.namespace === NS));
    assert.equal(reader.pending, 0, 'no partial frame left');
  });
});
