// Request limits that must reach the client over HTTP: a body over
// --max-request-body-bytes is answered 413 — declared too large, or chunked
// and crossing the limit — and the answer arrives even while the client is
// still sending megabytes (a close with unread bytes would make the kernel
// reset the connection and lose it); bad values of known query parameters
// are a 400 naming the parameter.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';
import { upload, type UploadResult } from '../helpers/upload.js';

const CM = '/api/v1/namespaces/default/configmaps';
const LIMIT = 256 * 1024;
const SENT = 8 * 1024 * 1024;

describe('limits that reach the client', { timeout: 180_000 }, () => {
  let gh: Gatehouse;
  let tls: { ca: Buffer; cert: Buffer; key: Buffer };

  before(async () => {
    // A separate process: the reset that lost the 413 depends on the two ends not sharing one event loop.
    gh = await startGatehouse({ flags: [`--max-request-body-bytes=${LIMIT}`] });
    const pki = join(gh.dataDir, 'pki');
    tls = { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
  });
  after(async () => {
    await stopAll();
  });

  const assert413 = (o: UploadResult, what: string): void => {
    assert.equal(o.status, 413, `${what}: no 413 reached the client (${o.error ?? 'no error'})`);
    assert.equal(o.headers?.['connection'], 'close', what);
    const status = JSON.parse(o.body ?? '');
    assert.equal(status.kind, 'Status', what);
    assert.equal(status.reason, 'RequestEntityTooLarge', what);
    assert.equal(status.code, 413, what);
  };

  it('a body declared larger than the limit is answered 413, and the answer arrives while megabytes are still being sent', async () => {
    for (let i = 0; i < 20; i++) assert413(await upload({ port: gh.port, path: CM, tls }, SENT, false), `try ${i}`);
  });

  it('a chunked body is answered 413 once it crosses the limit, and the answer arrives', async () => {
    for (let i = 0; i < 20; i++) assert413(await upload({ port: gh.port, path: CM, tls }, SENT, true), `try ${i}`);
  });

  it('a body just under the limit is read and judged, and the server keeps serving', async () => {
    const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits-ok' }, data: { a: 'x'.repeat(LIMIT - 200) } };
    const r = await gh.admin.request('POST', CM, big);
    assert.equal(r.status, 201, r.text.slice(0, 300));
    assert.equal((await gh.admin.request('GET', `${CM}/limits-ok`)).status, 200);
    assert.equal((await gh.anonymous.request('GET', '/livez')).status, 200);
  });
});

describe('bad values of known query parameters', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  const cases: Array<[string, string, string]> = [
    ['timeoutSeconds on a list', `${CM}?timeoutSeconds=abc`, 'timeoutSeconds'],
    ['timeoutSeconds on a watch', `${CM}?watch=1&timeoutSeconds=1.5`, 'timeoutSeconds'],
    ['limit', `${CM}?limit=ten`, 'limit'],
    ['resourceVersion on a list', `${CM}?resourceVersion=abc`, 'resourceVersion'],
    ['resourceVersion on a get', `${CM}/x?resourceVersion=-1`, 'resourceVersion'],
    ['resourceVersionMatch', `${CM}?resourceVersion=1&resourceVersionMatch=Newest`, 'resourceVersionMatch'],
    ['labelSelector', `${CM}?labelSelector=a%20in%20(`, 'labelSelector'],
    ['fieldSelector', `${CM}?fieldSelector=nope%3Dx`, 'nope'],
  ];
  for (const [what, path, names] of cases) {
    it(`${what}: refused with a Status naming the parameter`, async () => {
      const r = await s.admin.request('GET', path);
      assert.ok(r.status === 400 || r.status === 422, `${path}: ${r.status} ${r.text}`);
      assert.equal(r.json.kind, 'Status');
      assert.ok(JSON.stringify(r.json).includes(names), `${path}: ${r.text}`);
    });
  }

  it('includeObject of a Table: refused with a 400 naming it', async () => {
    const r = await s.admin.request('GET', `${CM}?includeObject=Maybe`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(r.status, 400, r.text);
    assert.match(r.json.message, /includeObject: Unsupported value: "Maybe"/);
    const ok = await s.admin.request('GET', `${CM}?includeObject=Object`, undefined, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.kind, 'Table');
  });

  it('fieldManager of a create or an update: over 128 characters or unprintable is a 422 naming it, and nothing is stored', async () => {
    const long = await s.admin.request('POST', `${CM}?fieldManager=${'m'.repeat(129)}`, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'limits-fm' },
    });
    assert.equal(long.status, 422, long.text);
    assert.equal(long.json.details.kind, 'CreateOptions');
    assert.equal(long.json.details.causes[0].field, 'fieldManager');
    assert.equal((await s.admin.request('GET', `${CM}/limits-fm`)).status, 404);
    const made = await s.admin.request('POST', `${CM}?fieldManager=ok`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits-fm' } });
    assert.equal(made.status, 201, made.text);
    const bad = await s.admin.request('PUT', `${CM}/limits-fm?fieldManager=a%07b`, { ...made.json, data: { a: '1' } });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.json.details.kind, 'UpdateOptions');
    assert.equal((await s.admin.request('GET', `${CM}/limits-fm`)).json.data, undefined);
  });

  it('good values still work right after', async () => {
    assert.equal((await s.admin.request('GET', `${CM}?timeoutSeconds=5&limit=1`)).status, 200);
  });
});
