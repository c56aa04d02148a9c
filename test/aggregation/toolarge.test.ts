// A 413 through the aggregation proxy reaches the client: a
// backend that answers 413 while the client is still uploading megabytes
// (declared too large, or chunked and crossing its limit) must not turn
// into a connection reset on the client's side. The gateway, like
// kube-aggregator, streams a proxied body and leaves the limit to the backend
// (here the sample backend, a real process with --max-request-body-bytes);
// it relays the answer, stops forwarding the rest and lets the client's
// connection close without losing the answer (lib/http/linger.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:http2';
import { join } from 'node:path';
import { startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { upload, type UploadResult } from '../helpers/upload.js';
import { NS, register, servingPki, startSampleBackend, waitAvailable } from './fixture.js';

const WIDGETS = `/apis/samples.gatehouse.dev/v1/namespaces/${NS}/widgets`;
const LIMIT = 256 * 1024;
const SENT = 8 * 1024 * 1024;

describe('a 413 through the aggregation proxy', { timeout: 240_000 }, () => {
  let gh: Gatehouse;
  let tls: { ca: Buffer; cert: Buffer; key: Buffer };

  before(async () => {
    gh = await startGatehouse();
    const pki = join(gh.dataDir, 'pki');
    tls = { ca: readFileSync(join(pki, 'ca.crt')), cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')) };
    const pem = servingPki(tempDir('toolarge-certs'), 'sample-api');
    const sample = await startSampleBackend({
      dataDir: tempDir('toolarge-data'),
      pem,
      frontProxyCaFile: join(pki, 'front-proxy-ca.crt'),
      extra: [`--max-request-body-bytes=${LIMIT}`],
    });
    await register(gh.admin, { service: 'sample-api', port: sample.port, group: 'samples.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(gh.admin, 'v1.samples.gatehouse.dev', 'True');
  });
  after(async () => {
    if (process.env.AGG_DEBUG) process.stderr.write(`gateway stderr:\n${gh?.proc.stderr}\n`);
    await stopAll();
  });

  const assert413 = (o: UploadResult, what: string): void => {
    assert.equal(o.status, 413, `${what}: no 413 reached the client (${o.error ?? 'no error'})`);
    assert.equal(o.headers?.['connection'], 'close', `${what}: the client is told the connection ends`);
    const status = JSON.parse(o.body ?? '');
    assert.equal(status.kind, 'Status', what);
    assert.equal(status.reason, 'RequestEntityTooLarge', what);
    assert.equal(status.code, 413, what);
  };

  it("a body declared larger than the backend's limit: the backend's 413 arrives while megabytes are still being sent", async () => {
    for (let i = 0; i < 20; i++) assert413(await upload({ port: gh.port, path: WIDGETS, tls }, SENT, false), `try ${i}`);
  });

  it("a chunked body crossing the backend's limit: the 413 arrives", async () => {
    for (let i = 0; i < 20; i++) assert413(await upload({ port: gh.port, path: WIDGETS, tls }, SENT, true), `try ${i}`);
  });

  it('over HTTP/2 the 413 ends only its stream: the connection carries the next request', async () => {
    const session = connect(`https://127.0.0.1:${gh.port}`, { ...tls, servername: 'localhost' });
    session.on('error', () => undefined);
    try {
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const st = session.request({ ':method': 'POST', ':path': WIDGETS, 'content-type': 'application/json', 'content-length': String(SENT) });
        let body = '';
        let status = 0;
        st.on('response', (h) => {
          status = Number(h[':status']);
        });
        st.setEncoding('utf8');
        st.on('data', (c: string) => {
          body += c;
        });
        st.on('end', () => resolve({ status, body }));
        st.on('error', reject);
        st.end(Buffer.alloc(SENT, 'a'));
      });
      assert.equal(answer.status, 413, answer.body.slice(0, 200));
      assert.equal(JSON.parse(answer.body).reason, 'RequestEntityTooLarge');
      const next = await new Promise<number>((resolve, reject) => {
        const st = session.request({ ':method': 'GET', ':path': WIDGETS });
        st.on('response', (h) => resolve(Number(h[':status'])));
        st.on('error', reject);
        st.resume();
      });
      assert.equal(next, 200);
      assert.equal(session.closed, false);
    } finally {
      session.close();
    }
  });

  it('the gateway and the backend keep serving: a widget under the limit is created right after', async () => {
    const w = { apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'after-413' }, spec: { color: 'x'.repeat(LIMIT / 2) } };
    const r = await gh.admin.request('POST', WIDGETS, w);
    assert.equal(r.status, 201, r.text.slice(0, 300));
    assert.equal((await gh.admin.request('GET', `${WIDGETS}/after-413`)).status, 200);
  });
});
