// The aggregation proxy's answers: a backend's redirect is never
// relayed nor followed (CVE-2022-3172, 502 as kube-aggregator), and an
// upgrade the backend answers with anything but 101 closes both connections
// (CVE-2018-1002105, CVE-2020-8559).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { sleep, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { register, servingPki, startEcho, type EchoBackend } from '../aggregation/fixture.js';

const BASE = '/apis/echo.gatehouse.dev/v1/namespaces/x/echoes';

describe('the aggregation proxy and a hostile backend', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let echo: EchoBackend;

  before(async () => {
    gh = await startGatehouse();
    const frontProxyCa = readFileSync(join(gh.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8');
    const pem = servingPki(tempDir('proxy-certs'), 'echo');
    echo = await startEcho(pem, frontProxyCa);
    await register(gh.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: pem.ca, gpm: 20000 });
    const deadline = Date.now() + 30_000;
    while ((await gh.admin.request('GET', `${BASE}/warm`)).status !== 200) {
      if (Date.now() > deadline) throw new Error('the echo APIService never served');
      await sleep(100);
    }
  });

  after(async () => {
    await echo?.close();
    await stopAll();
  });

  it('a backend redirect is answered 502 and its Location never reaches the client', async () => {
    for (const method of ['GET', 'POST', 'DELETE']) {
      const r = await gh.admin.request(method, `${BASE}/a/redirect`, method === 'POST' ? { x: 1 } : undefined);
      assert.equal(r.status, 502, `${method}: ${r.text}`);
      assert.equal(r.headers.location, undefined);
      assert.equal(r.json?.kind, 'Status');
      assert.equal(r.json?.message, 'the backend attempted to redirect this request, which is not permitted');
      assert.doesNotMatch(r.text, /attacker/);
    }
    // Not a redirect: a 304 is the answer to a conditional request and passes.
    const notModified = await gh.admin.request('GET', `${BASE}/a/redirect304`, undefined, { 'if-none-match': '"e"' });
    assert.equal(notModified.status, 304);
    // The APIService stays available and the next request is served.
    const ok = await gh.admin.request('GET', `${BASE}/a`);
    assert.equal(ok.status, 200, ok.text);
  });

  it("a client's identity headers in any case and underscore spelling never reach the backend", async () => {
    const r = await gh.admin.request('GET', `${BASE}/spelled`, undefined, {
      X_Remote_User: 'mallory',
      x_remote_group: 'system:masters',
      'X-REMOTE-EXTRA-SCOPES': 'all',
      'x_remote-extra_scopes': 'all',
      'X-Remote_Uid': '0',
    });
    assert.equal(r.status, 200, r.text);
    const h = r.json.headers;
    for (const k of ['x_remote_user', 'x_remote_group', 'x-remote-extra-scopes', 'x_remote-extra_scopes', 'x-remote_uid']) assert.equal(h[k], undefined, k);
    assert.equal(h['x-remote-user'], 'admin');
  });

  /** Sends one upgrade request with the admin certificate; resolves once the gateway closes the connection (bounded). */
  function upgrade(path: string, until?: RegExp): Promise<{ text: string; closed: boolean }> {
    const pki = join(gh.dataDir, 'pki');
    return new Promise((resolve, reject) => {
      const s = connect(
        {
          host: '127.0.0.1',
          port: gh.port,
          servername: 'localhost',
          ca: readFileSync(join(pki, 'ca.crt')),
          cert: readFileSync(join(pki, 'admin.crt')),
          key: readFileSync(join(pki, 'admin.key')),
        },
        () => {
          s.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`);
        },
      );
      let text = '';
      s.setEncoding('utf8');
      s.on('data', (d: string) => {
        text += d;
        if (until?.test(text)) {
          s.destroy();
          resolve({ text, closed: false });
        }
      });
      s.on('close', () => resolve({ text, closed: true }));
      s.on('error', reject);
      setTimeout(() => {
        s.destroy();
        resolve({ text, closed: false });
      }, 15_000).unref();
    });
  }

  it('an upgrade the backend refuses but keeps open is relayed, then both connections close', async () => {
    const r = await upgrade(`${BASE}/a/deny`);
    assert.match(r.text, /^HTTP\/1\.1 403/);
    assert.match(r.text, /no$/);
    assert.equal(r.closed, true);
    const deadline = Date.now() + 10_000;
    while (!echo.upgradeClosed.has(`${BASE}/a/deny`) && Date.now() < deadline) await sleep(50);
    assert.equal(echo.upgradeClosed.has(`${BASE}/a/deny`), true, 'the backend connection was left open');
  });

  it('an upgrade answered with a redirect is a 502 and closes both connections', async () => {
    const r = await upgrade(`${BASE}/a/redirect`);
    assert.match(r.text, /^HTTP\/1\.1 502/);
    assert.doesNotMatch(r.text, /attacker|Location/i);
    assert.equal(r.closed, true);
    const deadline = Date.now() + 10_000;
    while (!echo.upgradeClosed.has(`${BASE}/a/redirect`) && Date.now() < deadline) await sleep(50);
    assert.equal(echo.upgradeClosed.has(`${BASE}/a/redirect`), true, 'the backend connection was left open');
    // And an accepted upgrade still works right after.
    const ok = await upgrade(`${BASE}/a/exec-after`, /\r\n\r\n/);
    assert.match(ok.text, /^HTTP\/1\.1 101/);
  });
});
