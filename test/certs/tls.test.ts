import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { generateCa, generateClientCert, generateServingCert } from '../../certs/pki.js';

const ca = generateCa();
const serving = generateServingCert(ca);
const admin = generateClientCert(ca, { user: 'admin', groups: ['system:masters'] });
const twoGroups = generateClientCert(ca, { user: 'jane', groups: ['dev', 'ops'] });
const stranger = generateClientCert(generateCa('stranger'), { user: 'mallory' });

type Seen = { CN?: string; O?: string | string[] };
const seen: Seen[] = [];
const server = createServer({ cert: serving.certPem, key: serving.keyPem, ca: ca.certPem, requestCert: true, rejectUnauthorized: true }, (socket) => {
  const subject = socket.getPeerCertificate().subject as Seen;
  seen.push({ CN: subject.CN, O: subject.O });
  socket.end('ok');
});
server.on('tlsClientError', () => {
  /* the stranger's handshake is expected to fail */
});
let port = 0;
before(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});
after(() => server.close());

async function handshake(host: string, servername: string | undefined, cert: { certPem: string; keyPem: string }): Promise<string> {
  const socket: TLSSocket = connect({ host, port, ca: ca.certPem, cert: cert.certPem, key: cert.keyPem, ...(servername ? { servername } : {}) });
  let data = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    data += d;
  });
  // 'close' always comes, also when the peer drops the connection without a clean 'end'.
  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.once('close', () => resolve(data));
  });
}

describe('TLS on loopback with the generated certificates', () => {
  it('the admin client connects to 127.0.0.1 and the server sees CN and O', async () => {
    assert.equal(await handshake('127.0.0.1', undefined, admin), 'ok');
    assert.deepEqual(seen.at(-1), { CN: 'admin', O: 'system:masters' });
  });

  it('the client verifies the server as localhost and the server sees every group', async () => {
    assert.equal(await handshake('127.0.0.1', 'localhost', twoGroups), 'ok');
    assert.deepEqual(seen.at(-1), { CN: 'jane', O: ['dev', 'ops'] });
  });

  it('a client certificate from another CA is refused', async () => {
    // Under TLS 1.3 the client learns of the refusal only after its side of the handshake: an error or an empty close.
    const before = seen.length;
    const result = await handshake('127.0.0.1', undefined, stranger).catch((err: unknown) => err);
    assert.notEqual(result, 'ok');
    assert.equal(seen.length, before);
  });

  it('the client refuses a name the serving certificate does not cover', async () => {
    await assert.rejects(handshake('127.0.0.1', 'example.com', admin), /altnames/i);
  });
});
