// How the OpenAPI documents are served, as kube-apiserver serves them to
// client-go: /openapi/v2 in gnostic protobuf (decoded here with protobufjs
// into the very JSON document), one ETag per document with `Vary: Accept`
// and 304s, the legacy /swagger-2.0.0.pb-v1 path, and the immutable
// `?hash=` URLs of /openapi/v3.
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';
import { decodeGnosticV2 } from './gnostic.js';

const PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A GET whose body is kept as bytes (the test client decodes text). */
function get(client: HttpsClient, path: string, headers: OutgoingHttpHeaders = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(new URL(path, client.base), { method: 'GET', agent: client.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});

describe('OpenAPI v2 in protobuf', () => {
  it('decodes with protobufjs into the same document as the JSON form', async () => {
    const json = await get(s.admin, '/openapi/v2', { accept: 'application/json' });
    const pb = await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT });
    assert.equal(pb.status, 200);
    assert.equal(pb.headers['content-type'], PROTOBUF_TYPE);
    const expected = JSON.parse(json.body.toString('utf8')) as { paths: object; definitions: object };
    const decoded = decodeGnosticV2(pb.body);
    assert.deepEqual(Object.keys(decoded['paths'] as object).sort(), Object.keys(expected.paths).sort());
    assert.deepEqual(Object.keys(decoded['definitions'] as object).sort(), Object.keys(expected.definitions).sort());
    assert.deepEqual(decoded, expected);
  });
  it('carries the vendor extensions client-go reads as YAML (the GVK of each operation, the merge keys)', async () => {
    const doc = decodeGnosticV2((await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT })).body) as any;
    const patch = doc.paths['/api/v1/namespaces/{namespace}/configmaps/{name}'].patch;
    assert.deepEqual(patch['x-kubernetes-group-version-kind'], { group: '', version: 'v1', kind: 'ConfigMap' });
    assert.ok(patch.parameters.some((p: { name: string; in: string }) => p.name === 'fieldValidation' && p.in === 'query'));
    assert.equal(doc.definitions['io.k8s.api.core.v1.PodSpec'].properties.containers['x-kubernetes-patch-merge-key'], 'name');
  });
  it('gives both forms one ETag with Vary: Accept, and answers If-None-Match with 304', async () => {
    const json = await get(s.admin, '/openapi/v2');
    const pb = await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT, 'accept-encoding': 'gzip' });
    const etag = json.headers['etag'] as string;
    assert.match(etag, /^"[0-9a-f]+"$/);
    assert.equal(pb.headers['etag'], etag);
    assert.match(String(pb.headers['vary']), /Accept(,|$)/);
    assert.equal(pb.headers['content-encoding'], 'gzip');
    for (const accept of [PROTOBUF_ACCEPT, 'application/json']) {
      const again = await get(s.admin, '/openapi/v2', { accept, 'if-none-match': etag });
      assert.equal(again.status, 304);
      assert.equal(again.body.length, 0);
      assert.equal(again.headers['etag'], etag);
    }
    assert.equal((await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT, 'if-none-match': `"other", ${etag}` })).status, 304);
    assert.equal((await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT, 'if-none-match': '"other"' })).status, 200);
  });
  it('chooses by Accept: q-values, the dotted protobuf subtype, wildcards; 406 when neither form is accepted', async () => {
    assert.equal((await get(s.admin, '/openapi/v2', { accept: `application/json;q=0.5, ${PROTOBUF_ACCEPT}` })).headers['content-type'], PROTOBUF_TYPE);
    assert.equal((await get(s.admin, '/openapi/v2', { accept: PROTOBUF_TYPE })).headers['content-type'], PROTOBUF_TYPE);
    assert.equal((await get(s.admin, '/openapi/v2', { accept: '*/*' })).headers['content-type'], 'application/json');
    assert.equal((await get(s.admin, '/openapi/v2', { accept: 'text/html' })).status, 406);
  });
  it('serves the same bytes at the legacy /swagger-2.0.0.pb-v1, with the same ETag and 304', async () => {
    const pb = await get(s.admin, '/openapi/v2', { accept: PROTOBUF_ACCEPT });
    const legacy = await get(s.admin, '/swagger-2.0.0.pb-v1');
    assert.equal(legacy.status, 200);
    assert.ok(legacy.body.equals(pb.body));
    assert.equal(legacy.headers['etag'], pb.headers['etag']);
    assert.equal((await get(s.admin, '/swagger-2.0.0.pb-v1', { 'if-none-match': pb.headers['etag'] as string })).status, 304);
  });
});

describe('OpenAPI v3 per group-version', () => {
  it('serves each index URL with its hash as ETag, immutable and expiring in a year', async () => {
    const index = JSON.parse((await get(s.admin, '/openapi/v3')).body.toString('utf8')) as { paths: Record<string, { serverRelativeURL: string }> };
    const url = index.paths['api/v1']!.serverRelativeURL;
    const hash = new URL(url, s.url).searchParams.get('hash')!;
    assert.match(hash, /^[0-9A-F]{128}$/);
    const r = await get(s.admin, url);
    assert.equal(r.status, 200);
    assert.equal(r.headers['etag'], `"${hash}"`);
    assert.equal(r.headers['cache-control'], 'public, immutable');
    assert.equal(r.headers['vary'], 'Accept');
    const expires = Date.parse(r.headers['expires'] as string);
    assert.ok(expires > Date.now() + 360 * 24 * 3600 * 1000, `Expires ${r.headers['expires']} is about a year ahead`);
    assert.equal((await get(s.admin, url, { 'if-none-match': `"${hash}"` })).status, 304);
  });
  it('does not mark a document without hash immutable, and redirects a stale hash to the current URL', async () => {
    const index = JSON.parse((await get(s.admin, '/openapi/v3')).body.toString('utf8')) as { paths: Record<string, { serverRelativeURL: string }> };
    const plain = await get(s.admin, '/openapi/v3/api/v1');
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['cache-control'], 'no-cache, private');
    const stale = await get(s.admin, '/openapi/v3/api/v1?hash=0123ABCD');
    assert.equal(stale.status, 301);
    assert.equal(stale.headers['location'], index.paths['api/v1']!.serverRelativeURL);
    assert.equal((await get(s.admin, '/openapi/v3/apis/no.such/v1')).status, 404);
  });
});
