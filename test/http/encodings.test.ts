// Encodings: YAML in and out, Table output, gzip, and the 406/415/413/400/431
// answers for what the server cannot read or write.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:tls';
import { parse as parseYaml } from 'yaml';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';

let s: TestServer;
let c: HttpsClient;
before(async () => {
  s = await startTestServer();
  c = s.admin;
  await c.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'enc' } });
});
after(async () => {
  await s.close();
});

const CM = '/api/v1/namespaces/enc/configmaps';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('YAML', () => {
  it('reads a YAML body and writes YAML when asked', async () => {
    const body = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n';
    const r = await c.request('POST', CM, body, { 'content-type': 'application/yaml', accept: 'application/yaml' });
    assert.equal(r.status, 201, r.text);
    assert.match(String(r.headers['content-type']), /^application\/yaml/);
    const obj = parseYaml(r.text);
    assert.equal(obj.metadata.name, 'from-yaml');
    assert.deepEqual(obj.data, { k: 'v' });
    const g = await c.request('GET', `${CM}/from-yaml`, undefined, { accept: 'application/yaml' });
    assert.equal(parseYaml(g.text).kind, 'ConfigMap');
    const l = await c.request('GET', CM, undefined, { accept: 'application/yaml' });
    const list = parseYaml(l.text);
    assert.equal(list.kind, 'ConfigMapList');
    assert.ok(list.items.some((o: { metadata: { name: string } }) => o.metadata.name === 'from-yaml'));
  });

  it('answers errors to a YAML client as a YAML Status', async () => {
    const r = await c.request('GET', `${CM}/missing`, undefined, { accept: 'application/yaml' });
    assert.equal(r.status, 404);
    assert.match(String(r.headers['content-type']), /^application\/yaml/);
    const st = parseYaml(r.text);
    assert.equal(st.kind, 'Status');
    assert.equal(st.reason, 'NotFound');
  });

  it('answers 400 naming the problem for malformed YAML', async () => {
    const r = await c.request('POST', CM, 'metadata: [unclosed\n  name: x', { 'content-type': 'application/yaml' });
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /YAML/);
  });
});

describe('Table', () => {
  before(async () => {
    await c.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't1' }, data: { a: '1', b: '2' } });
    await c.request('POST', '/apis/rbac.authorization.k8s.io/v1/namespaces/enc/roles', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'r1' },
      rules: [],
    });
    await c.request('POST', '/api/v1/namespaces/enc/pods', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p1' },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
  });

  it('renders a list as a Table with per-type columns for configmaps', async () => {
    const r = await c.request('GET', CM, undefined, { accept: TABLE });
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /as=Table/);
    assert.equal(r.json.kind, 'Table');
    assert.equal(r.json.apiVersion, 'meta.k8s.io/v1');
    const cols = r.json.columnDefinitions.map((d: { name: string }) => d.name);
    assert.deepEqual(cols.slice(0, 2), ['Name', 'Data']);
    for (const d of r.json.columnDefinitions) {
      assert.equal(typeof d.type, 'string');
      assert.equal(typeof d.description, 'string');
    }
    const row = r.json.rows.find((x: { cells: unknown[] }) => x.cells[0] === 't1');
    assert.ok(row);
    assert.equal(String(row.cells[1]), '2');
    assert.equal(row.object.kind, 'PartialObjectMetadata');
    assert.ok(r.json.metadata.resourceVersion);
  });

  it('renders pods with the columns kubectl shows', async () => {
    const r = await c.request('GET', '/api/v1/namespaces/enc/pods', undefined, { accept: TABLE });
    const cols = r.json.columnDefinitions.map((d: { name: string }) => d.name);
    for (const want of ['Name', 'Ready', 'Status', 'Restarts', 'Age', 'IP', 'Node']) assert.ok(cols.includes(want), `${want} in ${cols}`);
    assert.equal(r.json.rows[0].cells[0], 'p1');
  });

  it('uses the default Name and Created At columns for a type without its own', async () => {
    const r = await c.request('GET', '/apis/rbac.authorization.k8s.io/v1/namespaces/enc/roles', undefined, { accept: TABLE });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.columnDefinitions.map((d: { name: string; type: string }) => [d.name, d.type]),
      [
        ['Name', 'string'],
        ['Created At', 'date'],
      ],
    );
    assert.equal(r.json.rows[0].cells[0], 'r1');
    assert.match(r.json.rows[0].cells[1], /^\d{4}-\d\d-\d\dT/);
  });

  it('renders a single object as a Table', async () => {
    const r = await c.request('GET', `${CM}/t1`, undefined, { accept: TABLE });
    assert.equal(r.status, 200);
    assert.equal(r.json.kind, 'Table');
    assert.equal(r.json.rows.length, 1);
    assert.equal(r.json.rows[0].cells[0], 't1');
  });

  it('includes the object, its metadata or nothing per includeObject', async () => {
    const full = await c.request('GET', `${CM}/t1?includeObject=Object`, undefined, { accept: TABLE });
    assert.equal(full.json.rows[0].object.kind, 'ConfigMap');
    assert.deepEqual(full.json.rows[0].object.data, { a: '1', b: '2' });
    const meta = await c.request('GET', `${CM}/t1?includeObject=Metadata`, undefined, { accept: TABLE });
    assert.equal(meta.json.rows[0].object.kind, 'PartialObjectMetadata');
    assert.equal(meta.json.rows[0].object.metadata.name, 't1');
    assert.equal(meta.json.rows[0].object.data, undefined);
    const none = await c.request('GET', `${CM}/t1?includeObject=None`, undefined, { accept: TABLE });
    assert.equal(none.json.rows[0].object, undefined);
  });

  it('falls back to JSON when the Table is listed after JSON with lower weight', async () => {
    const r = await c.request('GET', CM, undefined, { accept: `${TABLE};q=0.5,application/json;q=0.9` });
    assert.equal(r.json.kind, 'ConfigMapList');
  });
});

describe('compression', () => {
  it('gzips a large enough list when asked', async () => {
    for (let i = 0; i < 30; i++) {
      await c.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { v: 'x'.repeat(200) } });
    }
    const r = await c.request('GET', CM, undefined, { 'accept-encoding': 'gzip' });
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], 'gzip');
    assert.equal(r.json.kind, 'ConfigMapList');
    const plain = await c.request('GET', CM);
    assert.equal(plain.headers['content-encoding'], undefined);
  });
});

describe('a large object', () => {
  // Its JSON answer is the stored object's remembered bytes (lib/http/respond.ts), not a fresh encoding.
  it('answers GET with the object as stored, plain, gzipped, pretty and to HEAD, and the new bytes after an update', async () => {
    const data = { text: 'ü€'.repeat(12_000), ascii: 'x'.repeat(20_000) };
    const made = await c.request('POST', CM, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large' }, data });
    assert.equal(made.status, 201, made.text);
    for (let round = 0; round < 2; round++) {
      const plain = await c.request('GET', `${CM}/large`);
      assert.equal(plain.status, 200);
      assert.deepEqual(plain.json.data, data);
      assert.equal(Number(plain.headers['content-length']), Buffer.byteLength(plain.text));
      assert.equal(plain.text, JSON.stringify(plain.json) + '\n', "compact JSON ending in kube's newline, no trailing comma");
      const zipped = await c.request('GET', `${CM}/large`, undefined, { 'accept-encoding': 'gzip' });
      assert.equal(zipped.headers['content-encoding'], 'gzip');
      assert.equal(zipped.text, plain.text);
      const pretty = await c.request('GET', `${CM}/large?pretty=true`);
      assert.deepEqual(pretty.json, plain.json);
      assert.match(pretty.text, /\n {2}"kind"/);
      const head = await c.request('HEAD', `${CM}/large`);
      assert.equal(head.status, 200);
      assert.equal(head.headers['content-length'], plain.headers['content-length']);
      assert.equal(head.text, '');
    }
    data.ascii = 'y'.repeat(30_000);
    const put = await c.request('PUT', `${CM}/large`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'large' }, data });
    assert.equal(put.status, 200, put.text);
    const after = await c.request('GET', `${CM}/large`);
    assert.deepEqual(after.json.data, data);
    assert.equal(after.json.metadata.resourceVersion, put.json.metadata.resourceVersion);
  });
});

describe('unsupported and bad input', () => {
  it('answers 406 when only application/xml is accepted', async () => {
    const r = await c.request('GET', CM, undefined, { accept: 'application/xml' });
    assert.equal(r.status, 406);
    assert.equal(r.json.reason, 'NotAcceptable');
  });

  it('answers 415 for a text/plain body', async () => {
    const r = await c.request('POST', CM, 'name: x', { 'content-type': 'text/plain' });
    assert.equal(r.status, 415);
    assert.equal(r.json.reason, 'UnsupportedMediaType');
  });

  it('answers 413 for a body over 3 MiB and stores nothing', async () => {
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge' }, data: { v: 'x'.repeat(3 * 1024 * 1024 + 10) } });
    const r = await c.request('POST', CM, body);
    assert.equal(r.status, 413);
    assert.equal(r.json.reason, 'RequestEntityTooLarge');
    assert.equal((await c.request('GET', `${CM}/huge`)).status, 404);
  });

  it('answers 400 naming the problem for malformed JSON', async () => {
    const r = await c.request('POST', CM, '{"apiVersion": "v1", "kind": ');
    assert.equal(r.status, 400);
    assert.equal(r.json.reason, 'BadRequest');
    assert.match(r.json.message, /JSON/);
  });

  it('answers 400 for a body that is an array', async () => {
    const r = await c.request('POST', CM, '[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"arr"}}]');
    assert.equal(r.status, 400);
    assert.match(r.json.message, /array/);
  });

  it('answers 431 for request headers past the 1 MiB + 4 KiB limit, as Node and Go do', async () => {
    const { ca } = s.admin.agent.options as { ca: string };
    const url = new URL(s.url);
    const statusLine = await new Promise<string>((resolve, reject) => {
      const sock = connect({ host: url.hostname, port: Number(url.port), ca, servername: 'localhost' }, () => {
        sock.write(`GET /version HTTP/1.1\r\nHost: x\r\nX-Pad: ${'a'.repeat((1 << 20) + 8192)}\r\n\r\n`);
      });
      let got = '';
      sock.on('data', (d: Buffer) => {
        got += d.toString('latin1');
      });
      sock.on('close', () => resolve(got.split('\r\n')[0]!));
      sock.on('error', (err) => (got ? resolve(got.split('\r\n')[0]!) : reject(err)));
    });
    assert.equal(statusLine, 'HTTP/1.1 431 Request Header Fields Too Large');
  });

  it('keeps serving after bad input', async () => {
    assert.equal((await c.request('GET', CM)).status, 200);
  });
});
