// List bodies built from each stored object's remembered encoding, small
// pages sent whole and large ones streamed: the JSON is byte for byte what
// serializing the list at once gives (multi-byte UTF-8 included), for
// unpaged, limit=500 and continued pages; gzip, pretty, protobuf, CBOR, Table
// and PartialObjectMetadataList answers of the same lists stay correct.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decode as cborDecode } from 'cbor2';
import { NO_BACKGROUND_WRITES, startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';
import { unwrap } from './protobuf-k8s.js';
import { STREAM_MIN } from '../../lib/http/parts.js';

let s: TestServer;
let c: HttpsClient;
const NS = '/api/v1/namespaces/pages/configmaps';
const SMALL = '/api/v1/namespaces/pages-small/configmaps';
const COUNT = 640;

const nameOf = (i: number): string => `cm-${String(i).padStart(4, '0')}`;

before(async () => {
  // Two answers of one list are compared byte for byte, the list's resourceVersion (the store's revision) included.
  s = await startTestServer({ flags: ['--feature-gates=CBORServingAndStorage=true', ...NO_BACKGROUND_WRITES] });
  c = s.admin;
  for (const ns of ['pages', 'pages-small']) await c.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (let i = 0; i < COUNT; i += 32) {
    await Promise.all(
      Array.from({ length: Math.min(32, COUNT - i) }, async (_, k) => {
        const n = i + k;
        // ~1 KiB each, with 2-, 3- and 4-byte UTF-8 characters: a wrong byte count would cut the body.
        const r = await c.request('POST', NS, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: nameOf(n), labels: { n: String(n) } },
          data: { text: `é€😀 ${n} ${'x'.repeat(900 + (n % 50))}` },
        });
        assert.equal(r.status, 201, r.text);
      }),
    );
  }
  for (let i = 0; i < 3; i++) await c.request('POST', SMALL, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: nameOf(i) }, data: { a: 'ü' } });
});
after(async () => {
  await s.close();
});

/** The list as serializing it at once gives: its own metadata, each item as a GET of it answers. */
async function reference(listText: string, path: string): Promise<string> {
  const list = JSON.parse(listText) as { kind: string; apiVersion: string; metadata: unknown; items: Array<{ metadata: { name: string } }> };
  const items = await Promise.all(
    list.items.map(async (o) => {
      const one = await c.request('GET', `${path}/${o.metadata.name}`);
      assert.equal(one.status, 200);
      return JSON.parse(one.text) as unknown;
    }),
  );
  return JSON.stringify({ kind: list.kind, apiVersion: list.apiVersion, metadata: list.metadata, items }) + '\n'; // kube's encoder ends a body with a newline
}

describe('JSON list bodies', () => {
  it('sends a large unpaged list (streamed) byte for byte as one serialization would', async () => {
    const r = await c.request('GET', NS, undefined, { accept: 'application/json' });
    assert.equal(r.status, 200);
    assert.ok(r.body.length > STREAM_MIN, `the list (${r.body.length} bytes) is above the streaming threshold`);
    assert.equal(Number(r.headers['content-length']), r.body.length);
    assert.equal(r.json.items.length, COUNT);
    assert.equal(r.text, await reference(r.text, NS));
  });

  it('sends limit=500 pages and the continued page byte for byte, in key order', async () => {
    const p1 = await c.request('GET', `${NS}?limit=500`);
    assert.equal(p1.status, 200);
    assert.equal(p1.json.items.length, 500);
    assert.equal(p1.json.metadata.remainingItemCount, COUNT - 500);
    assert.equal(Number(p1.headers['content-length']), p1.body.length);
    assert.equal(p1.text, await reference(p1.text, NS));
    const p2 = await c.request('GET', `${NS}?limit=500&continue=${encodeURIComponent(p1.json.metadata.continue)}`);
    assert.equal(p2.status, 200);
    assert.equal(p2.text, await reference(p2.text, NS));
    const names = [...p1.json.items, ...p2.json.items].map((o: { metadata: { name: string } }) => o.metadata.name);
    assert.deepEqual(
      names,
      Array.from({ length: COUNT }, (_, i) => nameOf(i)),
    );
  });

  it('sends a small list whole, byte for byte', async () => {
    const r = await c.request('GET', SMALL);
    assert.equal(r.status, 200);
    assert.equal(r.json.items.length, 3);
    assert.equal(r.text, await reference(r.text, SMALL));
  });

  it('reflects a write in the next list (no stale encoding of a replaced object)', async () => {
    const before = await c.request('GET', `${NS}/${nameOf(7)}`);
    const put = await c.request('PUT', `${NS}/${nameOf(7)}`, { ...before.json, data: { text: 'changed ✓' } });
    assert.equal(put.status, 200, put.text);
    const r = await c.request('GET', `${NS}?limit=500`);
    const item = r.json.items.find((o: { metadata: { name: string } }) => o.metadata.name === nameOf(7));
    assert.deepEqual(item.data, { text: 'changed ✓' });
    assert.equal(item.metadata.resourceVersion, put.json.metadata.resourceVersion);
    assert.equal(r.text, await reference(r.text, NS));
  });

  it('gzips a large list when asked, to the same bytes', async () => {
    const plain = await c.request('GET', NS);
    const zipped = await c.request('GET', NS, undefined, { 'accept-encoding': 'gzip' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(zipped.body.equals(plain.body));
  });

  it('indents the list with pretty=true', async () => {
    const plain = await c.request('GET', `${NS}?limit=500`);
    const pretty = await c.request('GET', `${NS}?limit=500&pretty=true`);
    assert.equal(pretty.text, JSON.stringify(JSON.parse(plain.text), null, 2)); // json.MarshalIndent: no final newline
  });

  it('answers HEAD with the headers only', async () => {
    const r = await c.request('HEAD', NS);
    assert.equal(r.status, 200);
    assert.equal(r.body.length, 0);
  });
});

describe('other encodings of the same lists', () => {
  it('protobuf: the same items as the JSON list', async () => {
    const json = await c.request('GET', `${NS}?limit=500`);
    const pb = await c.request('GET', `${NS}?limit=500`, undefined, { accept: 'application/vnd.kubernetes.protobuf' });
    assert.equal(pb.status, 200);
    assert.match(String(pb.headers['content-type']), /protobuf/);
    const { kind, object } = unwrap(pb.body);
    assert.equal(kind, 'ConfigMapList');
    assert.equal(object.items.length, 500);
    for (let i = 0; i < 500; i += 37) {
      assert.equal(object.items[i].metadata.name, json.json.items[i].metadata.name);
      assert.deepEqual(object.items[i].data, json.json.items[i].data);
      assert.equal(object.items[i].metadata.resourceVersion, json.json.items[i].metadata.resourceVersion);
    }
    assert.equal(object.metadata.continue, json.json.metadata.continue);
  });

  it('CBOR: decodes to the JSON list', async () => {
    const json = await c.request('GET', NS);
    const cb = await c.request('GET', NS, undefined, { accept: 'application/cbor' });
    assert.equal(cb.status, 200);
    assert.deepEqual(cborDecode(new Uint8Array(cb.body)), json.json);
  });

  it('Table: one row per item; PartialObjectMetadataList: metadata only', async () => {
    const table = await c.request('GET', `${NS}?limit=500`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(table.status, 200);
    assert.equal(table.json.kind, 'Table');
    assert.equal(table.json.rows.length, 500);
    assert.equal(table.json.rows[3].cells[0], nameOf(3));
    const partial = await c.request('GET', `${NS}?limit=500`, undefined, { accept: 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io' });
    assert.equal(partial.status, 200);
    assert.equal(partial.json.kind, 'PartialObjectMetadataList');
    assert.equal(partial.json.items.length, 500);
    assert.equal(partial.json.items[0].kind, 'PartialObjectMetadata');
    assert.equal(partial.json.items[0].data, undefined);
    assert.equal(partial.json.items[0].metadata.name, nameOf(0));
  });
});
