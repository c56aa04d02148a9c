// Request deadlines through the gateway (--request-timeout, the `timeout`
// query parameter, --max-requests-inflight): a proxied request to a backend
// that never answers ends at its deadline with a 504 naming the APIService,
// the backend request is cut, and the seat it held is free at once.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { NS, register, servingPki, startEcho, waitAvailable, type EchoBackend } from './fixture.js';

const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/${NS}/echoes`;

describe('request deadlines through the gateway', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let echo: EchoBackend;

  before(async () => {
    // One seat for reads: a request still holding it after its deadline would make the next one a 429.
    gh = await startGatehouse({
      flags: ['--request-timeout=3s', '--max-requests-inflight=1', '--min-request-timeout=1', '--enable-priority-and-fairness=false'],
    });
    const pem = servingPki(tempDir('deadline-certs'), 'echo');
    echo = await startEcho(pem, readFileSync(join(gh.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'));
    await register(gh.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca });
    await waitAvailable(gh.admin, 'v1.echo.gatehouse.dev', 'True');
  });
  after(async () => {
    await echo?.close();
    await stopAll();
  });

  it('answers 504 naming the APIService at --request-timeout, cuts the backend request and frees the seat', async () => {
    const r = await gh.admin.request('GET', `${ECHOES}/hang`);
    assert.equal(r.status, 504, r.text);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.reason, 'Timeout');
    assert.match(r.json.message, /APIService "v1\.echo\.gatehouse\.dev" \(gatehouse-samples\/echo\)/);
    assert.match(r.json.message, /within 3s/);
    // The seat is free: with one read seat, this would be a 429 otherwise.
    const next = await gh.admin.request('GET', `${ECHOES}/after`);
    assert.equal(next.status, 200, next.text);
    for (let i = 0; i < 50 && !echo.cut.includes(`${ECHOES}/hang`); i++) await sleep(100);
    assert.ok(echo.cut.includes(`${ECHOES}/hang`), 'the backend request was cut');
  });

  it('takes a shorter deadline from the timeout query parameter, never a longer one', async () => {
    const short = await gh.admin.request('GET', `${ECHOES}/hang?timeout=500ms`);
    assert.equal(short.status, 504, short.text);
    assert.match(short.json.message, /within 500ms/);
    const long = await gh.admin.request('GET', `${ECHOES}/hang?timeout=1h`);
    assert.equal(long.status, 504, long.text);
    assert.match(long.json.message, /within 3s/);
  });

  it('refuses a timeout that is not a duration with 400 naming it', async () => {
    for (const bad of ['abc', '10', '1x']) {
      const r = await gh.admin.request('GET', `/api/v1/namespaces/default/configmaps?timeout=${bad}`);
      assert.equal(r.status, 400, `${bad}: ${r.text}`);
      assert.match(r.json.message, /invalid timeout specified in the request URL/);
    }
  });

  it('ends a watch without timeoutSeconds between --min-request-timeout and twice that', async () => {
    const list = await gh.admin.request('GET', '/api/v1/namespaces/default/configmaps');
    const w = await gh.admin.watch(`/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`);
    try {
      // The server ends it (1 to 2 s here); the bound only keeps a broken server from hanging the test.
      for (let i = 0; i < 100 && !w.ended; i++) await sleep(100);
      assert.ok(w.ended, 'the watch ended by itself');
    } finally {
      w.stop();
    }
  });
});
