// A backend's outbound TLS (transport.ts backendTls): the CA, client certificate and key made into one
// secure context, used by a real connection that verifies both ends; material that does not parse kept as
// text, so each connection fails with its own error as before.
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type TLSSocket } from 'node:tls';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { ensureDevPki } from '../../certs/devpki.js';
import { backendTls } from '../../gateway/aggregation/transport.js';

describe('backend TLS options', () => {
  let dir = '';
  let ca = '';
  let fpCa = '';
  let fpCert = '';
  let fpKey = '';
  let server: Server;
  let port = 0;
  const peers: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-backendtls-'));
    const p = await ensureDevPki(dir, { host: '127.0.0.1', port: 6443 });
    const [caPem, cert, key, fpCaPem, fpCertPem, fpKeyPem] = await Promise.all(
      [p.caCert, p.servingCert, p.servingKey, p.frontProxyCaCert, p.frontProxyClientCert, p.frontProxyClientKey].map((f) => readFile(f, 'utf8')),
    );
    [ca, fpCa, fpCert, fpKey] = [caPem!, fpCaPem!, fpCertPem!, fpKeyPem!];
    // The backend requires the front-proxy client certificate, as an aggregated API server does.
    server = createServer({ cert, key, ca: fpCa, requestCert: true, rejectUnauthorized: true }, (s) => {
      const c = s.getPeerCertificate();
      peers.push(String(c.subject?.CN ?? ''));
      s.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** The client's end of a connection the backend closes once it has seen the peer. */
  const handshake = (opts: object): Promise<TLSSocket> =>
    new Promise((resolve, reject) => {
      const s = connect({ ...opts, host: '127.0.0.1', port });
      s.once('error', reject);
      s.on('data', () => undefined);
      s.once('end', () => resolve(s));
    });

  it('makes one secure context that verifies the backend and presents the client certificate', async () => {
    const opts = backendTls({ caPem: ca, clientCert: { certPem: fpCert, keyPem: fpKey } });
    assert.ok(opts.secureContext, 'a secure context');
    assert.equal(opts.ca, undefined);
    assert.equal(opts.key, undefined);
    for (let i = 0; i < 2; i++) {
      const s = await handshake(opts);
      assert.equal(s.authorized, true);
      s.destroy();
    }
    const cn = /CN=([^\n,]+)/.exec(new X509Certificate(fpCert).subject)?.[1];
    assert.deepEqual(peers, [cn, cn], 'the backend saw the front-proxy client certificate on both');
  });

  it('refuses a backend whose certificate does not chain to the caBundle', async () => {
    const opts = backendTls({ caPem: fpCa, clientCert: { certPem: fpCert, keyPem: fpKey } });
    await assert.rejects(handshake(opts), /self[- ]signed|unable to verify|unable to get/i);
  });

  it('keeps material that does not parse as text, so each connection fails with its error', async () => {
    const opts = backendTls({ caPem: ca, clientCert: { certPem: fpCert, keyPem: 'not a key' } });
    assert.equal(opts.secureContext, undefined);
    assert.equal(opts.key, 'not a key');
    await assert.rejects(handshake(opts));
  });
});
