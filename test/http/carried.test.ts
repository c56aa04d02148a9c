// The headers the chain decides before anyone answers (Audit-Id, APF's
// X-Kubernetes-PF-*) are carried to whichever writer answers
// (lib/http/carried.ts), not set with setHeader: this checks every kind of
// answer the gateway writes carries each of them exactly once, and the
// carrier's rules alone (object and flat-array headers, a backend's own
// values replaced, what later steps read back).
import assert from 'node:assert/strict';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { carryHeader, sentHeader, sentLength, writeHeadWith } from '../../lib/http/carried.js';
import { newExchange, type Exchange } from '../../lib/http/exchange.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { IncomingHttpHeaders } from 'node:http';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function assertCarried(h: IncomingHttpHeaders, what: string): void {
  // Node joins a repeated header with ", ": one UUID each means each was sent once.
  for (const name of ['audit-id', 'x-kubernetes-pf-flowschema-uid', 'x-kubernetes-pf-prioritylevel-uid']) {
    assert.match(String(h[name]), UUID, `${what}: ${name} once, a UUID (got ${String(h[name])})`);
  }
}

function response(): Exchange {
  const req = new IncomingMessage(new Socket());
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.method = 'GET';
  return newExchange(req, new ServerResponse(req));
}

describe('carried headers (lib/http/carried.ts)', () => {
  it("adds them to an object of headers and to a flat list, replacing a backend's own of the same name in any case", () => {
    const a = response();
    carryHeader(a, 'Audit-Id', 'mine');
    const obj: Record<string, string | number> = { 'Content-Type': 'application/json', 'Content-Length': 12 };
    writeHeadWith(a, 200, obj);
    assert.equal(obj['Audit-Id'], 'mine');
    assert.equal(sentHeader(a, 'content-type'), 'application/json');
    assert.equal(sentLength(a), 12);

    const b = response();
    carryHeader(b, 'Audit-Id', 'mine');
    carryHeader(b, 'X-Kubernetes-PF-FlowSchema-UID', 'fs');
    const list = ['audit-id', 'theirs', 'Content-Length', '7', 'X-KUBERNETES-PF-FLOWSCHEMA-UID', 'their-fs', 'X-Other', 'kept'];
    writeHeadWith(b, 201, list, 'Created');
    assert.deepEqual(list, ['Content-Length', '7', 'X-Other', 'kept', 'Audit-Id', 'mine', 'X-Kubernetes-PF-FlowSchema-UID', 'fs']);
    assert.equal(sentLength(b), 7);
    assert.equal(sentHeader(b, 'x-other'), 'kept');
    assert.equal(b.res.statusMessage, 'Created');
  });

  it("replaces a backend's names only when they differ from ours in letters' case alone", () => {
    const x = response();
    carryHeader(x, 'Audit-Id', 'mine');
    carryHeader(x, 'A^b', 'ours');
    // '^' and '~' differ by the case bit but are not letters; 'Audit_Id' differs in a non-letter.
    const list = ['AUDIT-ID', 'a', 'Audit_Id', 'b', 'a~B', 'c', 'audit-id', 'd', 'a^B', 'e'];
    writeHeadWith(x, 200, list);
    assert.deepEqual(list, ['Audit_Id', 'b', 'a~B', 'c', 'Audit-Id', 'mine', 'A^b', 'ours']);
  });

  it('reads back headers set the ordinary way when no writer went through it, and nothing once headers are sent', () => {
    const r = response();
    r.res.setHeader('Content-Length', '5');
    assert.equal(sentLength(r), 5);
    r.res.writeHead(200);
    carryHeader(r, 'Audit-Id', 'late'); // headers sent: ignored, not thrown
    assert.equal(sentHeader(r, 'audit-id'), undefined);
  });
});

describe('every kind of answer carries Audit-Id and the APF headers once', { timeout: 60_000 }, () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
    await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' } });
  });
  after(() => s.close());

  it('objects, lists, errors, discovery, OpenAPI (200 and 304), metrics and health', async () => {
    const cases: [string, string, Record<string, string>?][] = [
      ['a GET', '/api/v1/namespaces/default/configmaps/c1'],
      ['a LIST', '/api/v1/namespaces/default/configmaps'],
      ['a 404', '/api/v1/namespaces/default/configmaps/none'],
      ['a Table', '/api/v1/namespaces/default/configmaps', { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' }],
      ['discovery', '/apis'],
      ['OpenAPI v2', '/openapi/v2'],
      ['/metrics', '/metrics'],
      ['/readyz', '/readyz'],
    ];
    for (const [what, path, headers] of cases) {
      const r = await s.admin.request('GET', path, undefined, headers);
      assert.ok(r.status < 500, `${what}: ${r.status}`);
      assertCarried(r.headers, what);
    }
    const v2 = await s.admin.request('GET', '/openapi/v2');
    const notModified = await s.admin.request('GET', '/openapi/v2', undefined, { 'if-none-match': String(v2.headers.etag) });
    assert.equal(notModified.status, 304);
    assertCarried(notModified.headers, 'OpenAPI 304');
  });

  it('a 401 carries Audit-Id only when auditing is on (as kube: none here), and a watch carries them all', async () => {
    const denied = await s.anonymous.request('GET', '/api/v1/namespaces/default/configmaps', undefined, { authorization: 'Bearer wrong' });
    assert.equal(denied.status, 401);
    assert.equal(denied.headers['audit-id'], undefined);
    const w = await s.admin.watch('/api/v1/namespaces/default/configmaps?watch=1');
    try {
      assert.equal(w.status, 200);
      assertCarried(w.res.headers, 'a watch');
    } finally {
      w.stop();
    }
  });
});
