// How the OpenAPI documents are served, as kube-apiserver serves them to
// client-go: /openapi/v2 in gnostic protobuf (decoded here with protobufjs
// into the very JSON document), one ETag per document with `Vary: Accept`
// and 304s, the legacy /swagger-2.0.0.pb-v1 path, and the immutable
// `?hash=` URLs of /openapi/v3, whose documents come in gnostic's openapi.v3
// protobuf too (decoded with upstream's OpenAPIv3.proto) for built-in and CRD groups.
import assert from 'node:assert/strict';
import type { OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { HttpsClient } from '../helpers/client.js';
import { decodeGnosticV2 } from './gnostic.js';
import { asGnosticCarriesIt, decodeGnosticV3, EMPTY_DEFAULT } from './gnostic-v3.js';
import { CRD_PATH, crontabCrd, waitEstablished } from '../crd/fixtures.js';

const PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';
const PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';
const V3_PROTOBUF_ACCEPT = 'application/com.github.proto-openapi.spec.v3@v1.0+protobuf';
const V3_PROTOBUF_TYPE = 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf';

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

/** A CRD whose schema uses what a structural schema may: scalar and object defaults, enums with null, int-or-string, maps, extensions. */
function richCrd(): Record<string, any> {
  const crd = crontabCrd({ group: 'pb.example.com', plural: 'widgets', kind: 'Widget' }) as Record<string, any>;
  crd['spec'].versions[0].schema.openAPIV3Schema.properties.spec = {
    type: 'object',
    default: { replicas: 1 },
    properties: {
      replicas: { type: 'integer', default: 1, minimum: 0, maximum: 10 },
      ratio: { type: 'number', default: 0.5, multipleOf: 0.25 },
      paused: { type: 'boolean', default: false },
      mode: { type: 'string', enum: ['fast', 'slow', null], nullable: true, default: 'fast', pattern: '^[a-z]+$', maxLength: 8 },
      port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 5 },
      hosts: { type: 'array', items: { type: 'string', format: 'hostname' }, 'x-kubernetes-list-type': 'set', default: ['a'] },
      raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    'x-kubernetes-validations': [{ rule: 'self.replicas >= 0', message: 'replicas' }],
  };
  return crd;
}

describe('OpenAPI v3 in protobuf', () => {
  async function bothForms(path: string) {
    const json = await get(s.admin, path, { accept: 'application/json' });
    const pb = await get(s.admin, path, { accept: V3_PROTOBUF_ACCEPT });
    assert.equal(json.status, 200);
    assert.equal(pb.status, 200);
    assert.equal(pb.headers['content-type'], V3_PROTOBUF_TYPE);
    return { json, pb, expected: JSON.parse(json.body.toString('utf8')) as Record<string, any>, decoded: decodeGnosticV3(pb.body) as Record<string, any> };
  }

  it('decodes for a built-in group into the JSON document, but for the object defaults gnostic cannot carry', async () => {
    const { expected, decoded } = await bothForms('/openapi/v3/apis/apps/v1');
    assert.deepEqual(Object.keys(decoded['paths']).sort(), Object.keys(expected['paths']).sort());
    assert.deepEqual(Object.keys(decoded['components'].schemas).sort(), Object.keys(expected['components'].schemas).sort());
    assert.deepEqual(decoded, asGnosticCarriesIt(expected, decoded));
    const spec = decoded['components'].schemas['io.k8s.api.apps.v1.Deployment'].properties.spec;
    assert.equal(spec.default, EMPTY_DEFAULT, "kube's `default: {}` arrives as an empty DefaultType");
    assert.deepEqual(decoded['components'].schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind'], [
      { group: 'apps', version: 'v1', kind: 'Deployment' },
    ]);
  });

  it('decodes for a CRD group into the JSON document (but for proto3 zeros): scalar defaults, enums, int-or-string, maps and extensions', async () => {
    const crd = richCrd();
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    await waitEstablished(s, crd['metadata'].name, '/apis/pb.example.com/v1/namespaces/default/widgets');
    const { expected, decoded } = await bothForms('/openapi/v3/apis/pb.example.com/v1');
    assert.deepEqual(decoded, asGnosticCarriesIt(expected, decoded));
    const spec = decoded['components'].schemas['com.example.pb.v1.Widget'].properties.spec;
    assert.equal(spec.default, EMPTY_DEFAULT);
    assert.equal(spec.properties.replicas.default, 1);
    assert.equal(spec.properties.ratio.default, 0.5);
    assert.equal(spec.properties.paused.default, false, 'a oneof member keeps its zero');
    assert.equal(spec.properties.replicas.minimum, undefined, "a proto3 double carries no zero, in kube's bytes too");
    assert.deepEqual(spec.properties.mode.enum, ['fast', 'slow', null]);
    assert.equal(spec.properties.hosts.default, EMPTY_DEFAULT);
    assert.deepEqual(spec['x-kubernetes-validations'], [{ rule: 'self.replicas >= 0', message: 'replicas' }]);
  });

  it("shares the JSON form's ETag with Vary: Accept, 304s, the hash URLs and their redirect", async () => {
    const index = JSON.parse((await get(s.admin, '/openapi/v3')).body.toString('utf8')) as { paths: Record<string, { serverRelativeURL: string }> };
    const url = index.paths['api/v1']!.serverRelativeURL;
    const json = await get(s.admin, url);
    const pb = await get(s.admin, url, { accept: V3_PROTOBUF_TYPE, 'accept-encoding': 'gzip' });
    assert.equal(pb.status, 200);
    assert.equal(pb.headers['content-type'], V3_PROTOBUF_TYPE);
    assert.equal(pb.headers['etag'], json.headers['etag']);
    assert.equal(pb.headers['cache-control'], 'public, immutable');
    assert.match(String(pb.headers['vary']), /Accept(,|$)/);
    assert.equal(pb.headers['content-encoding'], 'gzip');
    assert.equal(decodeGnosticV3(pb.body)['openapi'], '3.0.0');
    const again = await get(s.admin, url, { accept: V3_PROTOBUF_ACCEPT, 'if-none-match': json.headers['etag'] as string });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    const stale = await get(s.admin, '/openapi/v3/api/v1?hash=0123ABCD', { accept: V3_PROTOBUF_ACCEPT });
    assert.equal(stale.status, 301);
    assert.equal(stale.headers['location'], url);
  });

  it('chooses as handler3 does: JSON for wildcards, protobuf by q-value, 406 naming both forms otherwise', async () => {
    const path = '/openapi/v3/api/v1';
    assert.equal((await get(s.admin, path, { accept: '*/*' })).headers['content-type'], 'application/json');
    assert.equal((await get(s.admin, path, { accept: 'application/*' })).headers['content-type'], 'application/json');
    assert.equal((await get(s.admin, path, { accept: `application/json;q=0.5, ${V3_PROTOBUF_ACCEPT}` })).headers['content-type'], V3_PROTOBUF_TYPE);
    const refused = await get(s.admin, path, { accept: 'text/html' });
    assert.equal(refused.status, 406);
    const status = JSON.parse(refused.body.toString('utf8')) as { kind: string; code: number; message: string };
    assert.equal(status.kind, 'Status');
    assert.equal(status.code, 406);
    assert.match(status.message, /application\/json, application\/com\.github\.proto-openapi\.spec\.v3\.v1\.0\+protobuf/);
    assert.equal((await get(s.admin, path, { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' })).status, 406);
  });
});
