// connectionOf: one object per connection on both protocols (per-connection
// caches — client-certificate verification, the last bearer token — key on it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createSecureServer } from 'node:http2';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateCa, generateServingCert } from '../../certs/pki.js';
import { connectionOf } from '../../lib/http/connection.js';

describe('connectionOf', () => {
  it('is the same for the requests of one connection and differs across connections, on HTTP/2 and HTTP/1.1', async () => {
    const ca = generateCa('conn-ca');
    const leaf = generateServingCert(ca, { commonName: 'localhost', hosts: ['localhost'] });
    const seen: { version: string; conn: object; socket: object }[] = [];
    const server = createSecureServer({ cert: leaf.certPem, key: leaf.keyPem, allowHTTP1: true }, (req, res) => {
      const r = req as unknown as IncomingMessage;
      seen.push({ version: r.httpVersion, conn: connectionOf(r), socket: r.socket });
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}`;
    try {
      const get = (s: ReturnType<typeof connect>) =>
        new Promise<void>((resolve) => {
          const st = s.request({ ':path': '/' });
          st.resume();
          st.on('end', () => resolve());
        });
      const a = connect(url, { ca: ca.certPem });
      const b = connect(url, { ca: ca.certPem });
      await get(a);
      await get(a);
      await get(b);
      a.close();
      b.close();
      const { request } = await import('node:https');
      const { Agent } = await import('node:https');
      const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.certPem });
      const h1 = () =>
        new Promise<void>((resolve) =>
          request(`${url}/`, { agent }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          }).end(),
        );
      await h1();
      await h1();
      agent.destroy();
      const [s1, s2, s3, h11, h12] = seen;
      assert.deepEqual(
        seen.map((x) => x.version),
        ['2.0', '2.0', '2.0', '1.1', '1.1'],
      );
      // Node hands out a new socket proxy per HTTP/2 request: that is why the session is the key.
      assert.notEqual(s1!.socket, s2!.socket);
      assert.equal(s1!.conn, s2!.conn);
      assert.notEqual(s1!.conn, s3!.conn);
      assert.equal(h11!.conn, h12!.conn);
      assert.equal(h11!.conn, h11!.socket);
    } finally {
      server.close();
    }
  });
});
