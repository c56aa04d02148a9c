// Connection-level abuse against a started gateway:
// a few hundred slowloris sockets and an HTTP/2 rapid-reset flood
// (CVE-2023-44487) leave a normal client served and the process up.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect as h2connect, constants } from 'node:http2';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';

describe('slow and abusive clients', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let ca: string;
  before(async () => {
    gh = await startGatehouse();
    ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
  });
  after(stopAll);

  it('serves a normal client while 300 sockets trickle their headers (slowloris)', async () => {
    const slow: TLSSocket[] = [];
    const timers: NodeJS.Timeout[] = [];
    try {
      await Promise.all(
        Array.from(
          { length: 300 },
          () =>
            new Promise<void>((resolve) => {
              const s = tlsConnect({ host: '127.0.0.1', port: gh.port, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] }, () => {
                s.write('GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\n');
                resolve();
              });
              s.on('error', () => resolve());
              slow.push(s);
            }),
        ),
      );
      // Each keeps sending one header byte a second, never ending the header block.
      for (const s of slow)
        timers.push(
          setInterval(() => {
            if (!s.destroyed) s.write('X');
          }, 1000),
        );
      for (let i = 0; i < 20; i++) {
        const r = await gh.admin.request('GET', '/api/v1/namespaces/default');
        assert.equal(r.status, 200, r.text);
      }
      assert.equal((await gh.admin.request('GET', '/livez')).status, 200);
    } finally {
      for (const t of timers) clearInterval(t);
      for (const s of slow) s.destroy();
    }
  });

  it('survives an HTTP/2 rapid-reset flood and keeps serving others (CVE-2023-44487)', async () => {
    const pki = join(gh.dataDir, 'pki');
    const session = h2connect(gh.url, { ca, cert: readFileSync(join(pki, 'admin.crt')), key: readFileSync(join(pki, 'admin.key')), servername: 'localhost' });
    const ended = new Promise<void>((resolve) => {
      session.once('close', () => resolve());
      session.once('goaway', () => resolve());
    });
    session.on('error', () => undefined);
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
    let opened = 0;
    for (let i = 0; i < 20_000 && !session.closed && !session.destroyed; i++) {
      try {
        const st = session.request({ ':path': '/api/v1/namespaces/default/configmaps' });
        st.on('error', () => undefined);
        st.close(constants.NGHTTP2_CANCEL);
        opened++;
      } catch {
        break;
      }
      if (i % 500 === 0) await new Promise((r) => setImmediate(r));
    }
    assert.ok(opened > 0);
    await Promise.race([ended, new Promise((r) => setTimeout(r, 3000))]);
    session.destroy();
    // Others are served, and the process is up.
    for (let i = 0; i < 5; i++) assert.equal((await gh.admin.request('GET', '/api/v1/namespaces/default')).status, 200);
    assert.equal(gh.proc.running, true);
  });
});
