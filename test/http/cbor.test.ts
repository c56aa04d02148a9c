// CBOR answers and bodies behind CBORServingAndStorage:
// every answer is read with an independent decoder (cbor2 in its strict core
// deterministic mode, which refuses unsorted keys and longer-than-needed
// heads; Gatehouse encodes with cbor-x) and compared with the JSON answer;
// request bodies are written with cbor-x (Gatehouse decodes with cbor2); objects,
// lists, Status errors, watch streams (application/cbor-seq) read across
// split TCP reads, apply-patch+cbor; bad bodies refused with a Status naming
// the problem and nothing stored; with the gate off (the default) 406 and 415.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { Encoder } from 'cbor-x';
import { decode as strictDecode, Tag } from 'cbor2';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { canI, identity, RBAC, roleBinding, userSubject } from '../authz/rbac-helpers.js';
import { eventually } from '../helpers/eventually.js';

const CBOR = 'application/cbor';
const NS = 'cb';
const P = `/api/v1/namespaces/${NS}/configmaps`;
const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

// cbor-x with plain maps and arrays only: no records, no tag 259 for Maps.
const encoder = new Encoder({ useRecords: false, mapsAsObjects: true, useTag259ForMaps: false } as ConstructorParameters<typeof Encoder>[0]);
const cbor = (v: unknown): Buffer => Buffer.from(encoder.encode(v));

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A request whose answer is kept as bytes (the test client keeps them as `body`). */
function raw(s: TestServer, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Raw> {
  return s.admin.request(method, path, body, headers);
}

/**
 * One CBOR data item: self-described, then a value that cbor2 in core
 * deterministic mode accepts (RFC 8949 §4.2.1: keys sorted by their encoded
 * bytes, shortest heads, definite lengths, no duplicates); its value.
 */
function read(body: Buffer): any {
  assert.deepEqual(body.subarray(0, 3), SELF_DESCRIBED, 'starts with the self-described tag 55799');
  const v = strictDecode(body, { cde: true, rejectDuplicateKeys: true, ignoreGlobalTags: true });
  assert.ok(v instanceof Tag && Number(v.tag) === 55799);
  return v.contents;
}

/**
 * Where the data item starting at `at` ends, or -1 when `b` stops before it
 * does: a test-only walk of RFC 8949's heads (definite lengths; Gatehouse
 * writes no other), independent of both libraries.
 */
function itemEnd(b: Buffer, at: number): number {
  if (at >= b.length) return -1;
  const major = b[at]! >> 5;
  const info = b[at]! & 0x1f;
  const size = info < 24 ? 0 : info === 24 ? 1 : info === 25 ? 2 : info === 26 ? 4 : info === 27 ? 8 : -1;
  if (size < 0) throw new Error(`indefinite length at ${at}`);
  let next = at + 1 + size;
  if (next > b.length) return -1;
  const n = size === 0 ? info : size === 8 ? Number(b.readBigUInt64BE(at + 1)) : b.readUIntBE(at + 1, size);
  switch (major) {
    case 0:
    case 1:
    case 7:
      return next; // integers, floats, simple values: the head is the item
    case 2:
    case 3:
      return next + n <= b.length ? next + n : -1;
    case 4:
    case 5:
      for (let i = 0; i < (major === 5 ? 2 * n : n); i++) {
        next = itemEnd(b, next);
        if (next < 0) return -1;
      }
      return next;
    default:
      return itemEnd(b, next); // a tag: its one item
  }
}

/** An application/cbor-seq reader: bytes in, in any pieces; whole data items out. */
class SeqReader {
  private buf = Buffer.alloc(0);
  readonly items: Buffer[] = [];
  push(piece: Buffer): void {
    this.buf = Buffer.concat([this.buf, piece]);
    for (let end = itemEnd(this.buf, 0); end > 0; end = itemEnd(this.buf, 0)) {
      this.items.push(this.buf.subarray(0, end));
      this.buf = this.buf.subarray(end);
    }
  }
  get pending(): number {
    return this.buf.length;
  }
}

/** client-go's form: every string and map key a byte string (kube's encoder writes them so). */
function byteStrings(v: unknown): unknown {
  if (typeof v === 'string') return Buffer.from(v, 'utf8');
  if (Array.isArray(v)) return v.map(byteStrings);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [Buffer.from(k, 'utf8'), byteStrings(x)]));
  return v;
}

const cm = (name: string, data: Record<string, string> = { k: 'v' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, labels: { app: 'x' } },
  data,
});

describe('CBOR with the gate off (the default)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('answers 406 to a CBOR-only Accept and JSON when Accept falls back', async () => {
    const r = await raw(s, 'GET', '/api/v1/namespaces', { accept: CBOR });
    assert.equal(r.status, 406);
    const st = JSON.parse(r.body.toString());
    assert.equal(st.reason, 'NotAcceptable');
    const fb = await raw(s, 'GET', '/api/v1/namespaces', { accept: `${CBOR}, application/json` });
    assert.equal(fb.status, 200);
    assert.equal(fb.headers['content-type'], 'application/json');
    const w = await raw(s, 'GET', '/api/v1/namespaces?watch=1&timeoutSeconds=1', { accept: 'application/cbor-seq' });
    assert.equal(w.status, 406);
    assert.equal((await raw(s, 'GET', '/apis', { accept: CBOR })).status, 406, 'nor discovery');
  });

  it('refuses CBOR bodies with 415, apply-patch+cbor too, and stores nothing', async () => {
    const r = await raw(s, 'POST', '/api/v1/namespaces/default/configmaps', { 'content-type': CBOR }, cbor(cm('off')));
    assert.equal(r.status, 415, r.body.toString());
    const st = JSON.parse(r.body.toString());
    assert.equal(st.reason, 'UnsupportedMediaType');
    assert.doesNotMatch(st.message, /cbor/, 'CBOR is not offered');
    const a = await raw(
      s,
      'PATCH',
      '/api/v1/namespaces/default/configmaps/off?fieldManager=t',
      { 'content-type': 'application/apply-patch+cbor' },
      cbor(cm('off')),
    );
    assert.equal(a.status, 415, a.body.toString());
    assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default/configmaps/off')).status, 404);
  });

  it('rejects the gate with a bad value at start', async () => {
    await assert.rejects(startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=maybe'] }), /CBORServingAndStorage/);
  });
});

describe('CBOR with CBORServingAndStorage=true', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=true'] });
    assert.equal((await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } })).status, 201);
  });
  after(async () => {
    await s.close();
  });

  it('creates from a CBOR body and answers objects and lists in CBOR equal to the JSON answers', async () => {
    const created = await raw(s, 'POST', P, { 'content-type': CBOR, accept: CBOR }, cbor(cm('c1', { a: '1', b: '' })));
    assert.equal(created.status, 201, created.body.toString());
    assert.equal(created.headers['content-type'], CBOR);
    const c = read(created.body);
    const json = (await s.admin.request('GET', `${P}/c1`)).json;
    assert.deepEqual(c, json);

    const got = await raw(s, 'GET', `${P}/c1`, { accept: `${CBOR}, application/json` });
    assert.equal(got.status, 200);
    assert.deepEqual(read(got.body), json);
    assert.ok(got.body.length < Buffer.byteLength(JSON.stringify(json)), 'CBOR is smaller than JSON');

    await s.admin.request('POST', P, cm('c2'));
    const jsonList = (await s.admin.request('GET', P)).json;
    const list = await raw(s, 'GET', P, { accept: CBOR });
    assert.equal(list.headers['content-type'], CBOR);
    assert.deepEqual(read(list.body), jsonList);
    const page = read((await raw(s, 'GET', `${P}?limit=1`, { accept: CBOR })).body);
    assert.equal(page.items.length, 1);
    assert.ok(page.metadata.continue);
    assert.equal(page.metadata.remainingItemCount, 1);
  });

  it('reads client-go bodies whose strings and keys are byte strings, and updates in CBOR', async () => {
    const r = await raw(s, 'POST', P, { 'content-type': CBOR, accept: CBOR }, Buffer.concat([SELF_DESCRIBED, cbor(byteStrings(cm('bytes', { x: 'é' })))]));
    assert.equal(r.status, 201, r.body.toString());
    const o = read(r.body);
    assert.deepEqual(o.data, { x: 'é' });
    assert.equal(o.metadata.labels.app, 'x');
    const u = await raw(s, 'PUT', `${P}/bytes`, { 'content-type': CBOR, accept: CBOR }, cbor({ ...o, data: { x: 'y' } }));
    assert.equal(u.status, 200, u.body.toString());
    assert.deepEqual(read(u.body).data, { x: 'y' });
    assert.deepEqual((await s.admin.request('GET', `${P}/bytes`)).json.data, { x: 'y' });
  });

  it('reads DeleteOptions from a CBOR body', async () => {
    await s.admin.request('POST', P, cm('del'));
    const opts = { kind: 'DeleteOptions', apiVersion: 'v1', dryRun: ['All'] };
    const dry = await raw(s, 'DELETE', `${P}/del`, { 'content-type': CBOR, accept: CBOR }, cbor(opts));
    assert.equal(dry.status, 200, dry.body.toString());
    const st = read(dry.body);
    assert.deepEqual([st.kind, st.status, st.details.name], ['Status', 'Success', 'del']);
    assert.equal((await s.admin.request('GET', `${P}/del`)).status, 200, 'a dry run deletes nothing');
    const gone = await raw(s, 'DELETE', `${P}/del`, { 'content-type': CBOR }, cbor({ kind: 'DeleteOptions', apiVersion: 'v1' }));
    assert.equal(gone.status, 200);
    assert.equal((await s.admin.request('GET', `${P}/del`)).status, 404);
  });

  it('answers Status errors in CBOR on resource paths', async () => {
    const nf = await raw(s, 'GET', `${P}/missing`, { accept: CBOR });
    assert.equal(nf.status, 404);
    assert.equal(nf.headers['content-type'], CBOR);
    assert.deepEqual(read(nf.body), (await s.admin.request('GET', `${P}/missing`)).json);
    assert.equal(read(nf.body).message, 'configmaps "missing" not found');
    const dup = await raw(s, 'POST', P, { 'content-type': CBOR, accept: CBOR }, cbor(cm('c1')));
    assert.equal(dup.status, 409);
    assert.equal(read(dup.body).reason, 'AlreadyExists');
    const inv = await raw(s, 'POST', P, { 'content-type': CBOR, accept: CBOR }, cbor(cm('Not_Valid')));
    assert.equal(inv.status, 422);
    assert.equal(read(inv.body).details.causes[0].field, 'metadata.name');
    // Authentication fails before the type is known: still CBOR on a resource path.
    const anon = await new Promise<Raw>((resolve, reject) => {
      const req = httpsRequest(new URL(P, s.url), { ca: s.admin.agent.options.ca, headers: { accept: CBOR, authorization: 'Bearer nope' } }, (res) => {
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => parts.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(anon.status, 401);
    assert.equal(anon.headers['content-type'], CBOR);
    assert.equal(read(anon.body).reason, 'Unauthorized');
  });

  it('serves PartialObjectMetadataList in CBOR and Table only as JSON (406 for a CBOR-only Table Accept)', async () => {
    const pom = await raw(s, 'GET', P, { accept: `${CBOR};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1, application/json` });
    assert.equal(pom.status, 200);
    assert.equal(pom.headers['content-type'], `${CBOR};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`);
    const l = read(pom.body);
    assert.deepEqual([l.kind, l.apiVersion], ['PartialObjectMetadataList', 'meta.k8s.io/v1']);
    assert.equal(l.items[0].data, undefined);
    const fb = await s.admin.request('GET', P, undefined, { accept: `${CBOR};as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1` });
    assert.equal(fb.status, 200);
    assert.equal(fb.json.kind, 'Table');
    const only = await raw(s, 'GET', P, { accept: `${CBOR};as=Table;g=meta.k8s.io;v=v1` });
    assert.equal(only.status, 406);
  });

  it('server-side applies an apply-patch+cbor body, creating then updating', async () => {
    const path = `${P}/applied?fieldManager=cbor-test`;
    const a1 = await raw(s, 'PATCH', path, { 'content-type': 'application/apply-patch+cbor', accept: CBOR }, cbor(cm('applied', { one: '1' })));
    assert.equal(a1.status, 201, a1.body.toString());
    const o1 = read(a1.body);
    assert.deepEqual(o1.data, { one: '1' });
    assert.equal(o1.metadata.managedFields[0].manager, 'cbor-test');
    assert.equal(o1.metadata.managedFields[0].operation, 'Apply');
    const a2 = await raw(
      s,
      'PATCH',
      path,
      { 'content-type': 'application/apply-patch+cbor', accept: 'application/json' },
      cbor(byteStrings(cm('applied', { two: '2' }))),
    );
    assert.equal(a2.status, 200, a2.body.toString());
    assert.deepEqual(JSON.parse(a2.body.toString()).data, { two: '2' }, 'the applier dropped "one", which it alone owned');
    const unknown = await raw(s, 'PATCH', path, { 'content-type': 'application/x-unknown' }, '{}');
    assert.equal(unknown.status, 415);
    assert.match(JSON.parse(unknown.body.toString()).message, /application\/apply-patch\+cbor/, 'the 415 names apply-patch+cbor among the types served');
    const bad = await raw(s, 'PATCH', path, { 'content-type': 'application/apply-patch+cbor' }, cbor(cm('applied')).subarray(0, 20));
    assert.equal(bad.status, 400);
    assert.match(JSON.parse(bad.body.toString()).message, /CBOR/);
  });

  it('streams watch events as application/cbor-seq, one self-described WatchEvent per item, across split reads', async () => {
    const rv = (await s.admin.request('GET', P)).json.metadata.resourceVersion;
    const seq = new SeqReader();
    let contentType: string | undefined;
    const o = s.admin.agent.options;
    const req = httpsRequest(
      new URL(`${P}?watch=1&resourceVersion=${rv}`, s.url),
      { agent: false, ca: o.ca, cert: o.cert, key: o.key, headers: { accept: CBOR } },
      (res) => {
        contentType = res.headers['content-type'];
        // Every chunk fed in pieces of 1-7 bytes, so items split anywhere, the tag included.
        res.on('data', (c: Buffer) => {
          for (let i = 0; i < c.length;) {
            const n = 1 + (i % 7);
            seq.push(c.subarray(i, i + n));
            i += n;
          }
        });
      },
    );
    req.end();
    try {
      const N = 25;
      for (let i = 0; i < N; i++) await s.admin.request('POST', P, cm(`w${i}`, { i: String(i) }));
      const created = (await s.admin.request('GET', `${P}/w0`)).json;
      await s.admin.request('PUT', `${P}/w0`, { ...created, data: { i: 'changed' } });
      await s.admin.request('DELETE', `${P}/w1`);
      await eventually(`${N + 2} events`, () => seq.items.length >= N + 2, { intervalMs: 20 });
      // Each item is one self-described WatchEvent; nothing is left half-read.
      const events = seq.items.map(read);
      assert.equal(seq.pending, 0);
      assert.equal(contentType, 'application/cbor-seq');
      assert.deepEqual(
        events.map((e) => e.type),
        [...Array(N).fill('ADDED'), 'MODIFIED', 'DELETED'],
      );
      assert.deepEqual(events[0].object, created);
      assert.deepEqual(events[N].object.data, { i: 'changed' });
      assert.equal(events[N + 1].object.metadata.name, 'w1');
      assert.deepEqual(Object.keys(events[0]), ['type', 'object']);
    } finally {
      req.destroy();
    }
  });

  it('the initial-events-end bookmark arrives as a CBOR event too', async () => {
    // Asked for by its stream name this time.
    const w = await raw(s, 'GET', `${P}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`, {
      accept: 'application/cbor-seq',
    });
    assert.equal(w.status, 200);
    assert.equal(w.headers['content-type'], 'application/cbor-seq');
    const seq = new SeqReader();
    seq.push(w.body);
    assert.equal(seq.pending, 0);
    const evs = seq.items.map(read);
    const bm = evs.find((e) => e.type === 'BOOKMARK');
    assert.equal(bm.object.metadata.annotations['k8s.io/initial-events-end'], 'true');
    assert.deepEqual([bm.object.kind, bm.object.apiVersion], ['ConfigMap', 'v1']);
    assert.ok(evs.filter((e) => e.type === 'ADDED').length >= 2);
  });
});

describe('bad CBOR bodies (gate on)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=true'] });
  });
  after(async () => {
    await s.close();
  });
  const path = '/api/v1/namespaces/default/configmaps';

  const refused = async (body: Buffer, message: RegExp) => {
    const r = await raw(s, 'POST', path, { 'content-type': CBOR, accept: CBOR }, body);
    assert.equal(r.status, 400, r.body.toString());
    const st = read(r.body);
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, 'BadRequest');
    assert.match(st.message, message);
    assert.equal((await s.admin.request('GET', `${path}/bad`)).status, 404, 'nothing stored');
  };

  it('a truncated body is a 400, cut anywhere', async () => {
    const b = cbor(cm('bad'));
    for (const cut of [1, 5, 17, b.length - 1]) await refused(b.subarray(0, cut), /truncated|end of|not a valid CBOR/);
  });
  it('a duplicate map key is a 400 naming the key, as text or as bytes', async () => {
    // {"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bad","name":"bad"}}
    const dupName = Buffer.concat([
      Buffer.from([0xa3]),
      cbor('apiVersion'),
      cbor('v1'),
      cbor('kind'),
      cbor('ConfigMap'),
      cbor('metadata'),
      Buffer.from([0xa2]),
      cbor('name'),
      cbor('bad'),
      cbor('name'),
      cbor('bad'),
    ]);
    await refused(dupName, /duplicate map key "name"/);
    const textAndBytes = Buffer.concat([
      Buffer.from([0xa4]),
      cbor('apiVersion'),
      cbor('v1'),
      cbor('kind'),
      cbor('ConfigMap'),
      cbor('metadata'),
      cbor({ name: 'bad' }),
      cbor(Buffer.from('kind')),
      cbor('Secret'),
    ]);
    await refused(textAndBytes, /duplicate map key "kind"/);
  });
  it('a tag other than 55799 is a 400 naming it', async () => {
    // metadata.creationTimestamp as tag 1 (epoch time)
    const tagged = Buffer.concat([
      Buffer.from([0xa3]),
      cbor('apiVersion'),
      cbor('v1'),
      cbor('kind'),
      cbor('ConfigMap'),
      cbor('metadata'),
      Buffer.from([0xa2]),
      cbor('name'),
      cbor('bad'),
      cbor('creationTimestamp'),
      Buffer.from([0xc1, 0x1a, 0x65, 0x00, 0x00, 0x00]),
    ]);
    await refused(tagged, /tag 1 is not supported/);
  });
  it('trailing bytes, a non-UTF-8 byte string, NaN, undefined and a non-map body are 400s', async () => {
    await refused(Buffer.concat([cbor(cm('bad')), Buffer.from([0x00])]), /Extra data/);
    await refused(cbor({ ...cm('bad'), data: { k: Buffer.from([0xff, 0xfe]) } }), /not valid UTF-8/);
    await refused(cbor({ ...cm('bad'), data: { k: NaN } }), /NaN has no JSON form/);
    await refused(
      Buffer.concat([
        Buffer.from([0xa4]),
        cbor('apiVersion'),
        cbor('v1'),
        cbor('kind'),
        cbor('ConfigMap'),
        cbor('metadata'),
        cbor({ name: 'bad' }),
        cbor('data'),
        Buffer.from([0xf7]),
      ]),
      /undefined/i,
    );
    await refused(cbor([cm('bad')]), /must be a map/);
  });
  it('garbage is a 400, never a crash: the server answers afterwards', async () => {
    const junk = Buffer.alloc(4096);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 131 + 7) & 0xff;
    const r = await raw(s, 'POST', path, { 'content-type': CBOR }, junk);
    assert.equal(r.status, 400);
    const deep = Buffer.concat([Buffer.alloc(100_000, 0x81), Buffer.from([0x00])]);
    const d = await raw(s, 'POST', path, { 'content-type': CBOR }, deep);
    assert.equal(d.status, 400);
    assert.equal((await s.admin.request('GET', '/api/v1/namespaces/default')).status, 200);
  });

  it('answers the review endpoints in CBOR, from a CBOR body', async () => {
    const body = { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', resource: 'pods' } } };
    const r = await raw(s, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', { 'content-type': CBOR, accept: CBOR }, cbor(body));
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.headers['content-type'], CBOR);
    const review = read(r.body);
    assert.equal(review.kind, 'SelfSubjectAccessReview');
    assert.equal(review.status.allowed, true);
    const who = await raw(s, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', { 'content-type': 'application/json', accept: CBOR }, '{}');
    assert.equal(who.status, 201, who.body.toString());
    assert.deepEqual(
      read(who.body).status.userInfo,
      (await s.admin.request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {})).json.status.userInfo,
    );
  });

  it('answers discovery in CBOR: the legacy documents and aggregated discovery, equal to their JSON', async () => {
    for (const path of ['/api', '/apis', '/api/v1', '/apis/apps', '/apis/apps/v1']) {
      const r = await raw(s, 'GET', path, { accept: CBOR });
      assert.equal(r.status, 200, `${path}: ${r.body.toString()}`);
      assert.equal(r.headers['content-type'], CBOR, path);
      assert.equal(r.headers['vary'], 'Accept', path);
      assert.deepEqual(read(r.body), (await s.admin.request('GET', path)).json, path);
    }
    const agg = `${CBOR};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`;
    const r = await raw(s, 'GET', '/apis', { accept: `${agg},application/json` });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], agg);
    const json = (await s.admin.request('GET', '/apis', undefined, { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' })).json;
    assert.equal(json.kind, 'APIGroupDiscoveryList');
    assert.deepEqual(read(r.body), json);
  });
});

describe('the gateway reads CBOR bodies for its own checks (gate on)', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=true'] });
    await s.admin.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'esc' } });
    await s.admin.request('POST', `${RBAC}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'role-writer' },
      rules: [
        { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], verbs: ['create'] },
        { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      ],
    });
    await s.admin.request('POST', `${RBAC}/namespaces/esc/rolebindings`, roleBinding('esc', 'erin', 'ClusterRole', 'role-writer', [userSubject('erin')]));
  });
  after(async () => {
    await s.close();
  });

  it('RBAC escalation prevention judges a Role sent in CBOR by its rules', async () => {
    const erin = await identity(s, 'erin');
    try {
      await eventually('the binding', () => canI(erin.client, { verb: 'create', group: 'rbac.authorization.k8s.io', resource: 'roles', namespace: 'esc' }), {
        timeoutMs: 5000,
      });
      const role = (name: string, resources: string[]) => ({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: 'esc' },
        rules: [{ apiGroups: [''], resources, verbs: ['get'] }],
      });
      const held = await erin.client.request('POST', `${RBAC}/namespaces/esc/roles`, cbor(byteStrings(role('pods', ['pods']))), { 'content-type': CBOR });
      assert.equal(held.status, 201, held.text);
      const more = await erin.client.request('POST', `${RBAC}/namespaces/esc/roles`, cbor(role('secrets', ['secrets'])), { 'content-type': CBOR });
      assert.equal(more.status, 403);
      assert.match(more.json.message, /attempting to grant RBAC permissions not currently held/);
      assert.equal((await s.admin.request('GET', `${RBAC}/namespaces/esc/roles/secrets`)).status, 404);
      const broken = await erin.client.request('POST', `${RBAC}/namespaces/esc/roles`, cbor(role('x', ['secrets'])).subarray(0, 30), { 'content-type': CBOR });
      assert.equal(broken.status, 400);
      assert.match(broken.json.message, /not a valid CBOR object/);
    } finally {
      erin.client.close();
    }
  });
});
