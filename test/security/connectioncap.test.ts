// Per-client caps: one client address holds at most
// --max-connections-per-client-address open connections; more are closed
// before the TLS handshake while clients from other addresses are served, and
// the address is served again once it lets some go. Each of its HTTP/2
// connections is bounded to --http2-max-streams-per-connection streams (the
// SETTINGS nghttp2 enforces; test/http/http2.test.ts checks the value), so one
// address holds at most the product. The abuser speaks from 127.0.0.2 (every
// 127/8 address is loopback on Linux), the normal client from 127.0.0.1.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { startGatehouse, stopAll, type Gatehouse } from '../e2e/helpers.js';

const CAP = 20;
const ABUSER = '127.0.0.2';

describe('connections per client address', { timeout: 120_000 }, () => {
  let gh: Gatehouse;
  let ca: string;
  before(async () => {
    gh = await startGatehouse({ flags: [`--max-connections-per-client-address=${CAP}`] });
    ca = readFileSync(join(gh.dataDir, 'pki', 'ca.crt'), 'utf8');
  });
  after(stopAll);

  /** A TLS connection from `from`: open (handshake done) or refused (closed before it). */
  function open(from: string): Promise<{ socket: TLSSocket; ok: boolean }> {
    return new Promise((resolve) => {
      const tcp = netConnect({ host: '127.0.0.1', port: gh.port, localAddress: from });
      const socket = tlsConnect({ socket: tcp, ca, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
      socket.once('secureConnect', () => resolve({ socket, ok: true }));
      socket.once('error', () => resolve({ socket, ok: false }));
      socket.once('close', () => resolve({ socket, ok: false }));
    });
  }

  it('closes the connections past the cap of one address, and serves the others and then it again', async () => {
    const held: TLSSocket[] = [];
    try {
      for (let i = 0; i < CAP; i++) {
        const c = await open(ABUSER);
        assert.ok(c.ok, `connection ${i + 1} of ${CAP} is accepted`);
        held.push(c.socket);
      }
      for (let i = 0; i < 5; i++) {
        const extra = await open(ABUSER);
        assert.equal(extra.ok, false, `connection ${CAP + i + 1} from ${ABUSER} is closed before the handshake`);
        extra.socket.destroy();
      }
      // Another address is served meanwhile, on new connections too.
      for (let i = 0; i < 5; i++) assert.equal((await gh.admin.request('GET', '/api/v1/namespaces/default')).status, 200);
      const other = await open('127.0.0.1');
      assert.ok(other.ok);
      other.socket.destroy();
      // The held connections still work: an HTTP/1.1 request on one of them is answered.
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        held[0]!.setEncoding('utf8');
        held[0]!.on('data', (c: string) => {
          text += c;
          if (text.includes('\r\n\r\n')) resolve(text);
        });
        held[0]!.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      assert.match(answer, /^HTTP\/1\.1 200 /);
      // Letting some go makes room again.
      for (const s of held.splice(0, 3)) s.destroy();
      let again = await open(ABUSER);
      for (let i = 0; i < 50 && !again.ok; i++) {
        again.socket.destroy();
        await new Promise((r) => setTimeout(r, 20));
        again = await open(ABUSER);
      }
      assert.ok(again.ok, 'the address is served again below the cap');
      held.push(again.socket);
    } finally {
      for (const s of held) s.destroy();
    }
    assert.match(gh.proc.stderr, /connection from 127\.0\.0\.2 refused: it holds 20 open connections \(--max-connections-per-client-address=20\)/);
    assert.equal((gh.proc.stderr.match(/connection from 127\.0\.0\.2 refused/g) ?? []).length, 1, 'one log line for the whole episode');
  });
});
