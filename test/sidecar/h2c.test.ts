// A sidecar in front of an h2c-only upstream (--upstream-force-h2c, as
// kube-rbac-proxy's h2c example: an insecure gRPC-style server on loopback):
// requests and their bodies reach it over HTTP/2 without TLS, with the
// caller's identity and without the client's credentials or identity
// headers; a non-loopback h2c upstream is refused.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Http2Server, type IncomingHttpHeaders } from 'node:http2';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { HttpsClient } from '../helpers/client.js';
import { freePort } from '../helpers/ports.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';

describe('sidecar in front of an h2c upstream', { timeout: 60_000 }, () => {
  let dir: string;
  let peer: WebhookPeer;
  let upstream: Http2Server;
  let sidecar: RunningSidecar;
  let client: (user: string) => HttpsClient;
  const seen: Array<{ headers: IncomingHttpHeaders; body: string }> = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-h2c-'));
    peer = await startWebhookPeer();
    // h2c only: an HTTP/1.1 request would not be understood.
    upstream = createServer();
    upstream.on('stream', (stream, headers) => {
      let body = '';
      stream.setEncoding('utf8');
      stream.on('data', (c: string) => (body += c));
      stream.on('end', () => {
        seen.push({ headers, body });
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
        stream.end(`h2 ${headers[':method']} ${headers[':path']} ${body}`);
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const clientCa = generateCa('sidecar-clients');
    await writeFile(join(dir, 'clients.crt'), clientCa.certPem);
    const parsed = parseServeFlags([
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--upstream=http://127.0.0.1:${(upstream.address() as AddressInfo).port}/svc`,
      '--upstream-force-h2c',
      `--client-ca-file=${join(dir, 'clients.crt')}`,
      `--authentication-token-webhook-config-file=${await peer.kubeconfig(dir, 'authn')}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'authz')}`,
      '--authorization-webhook-version=v1',
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    sidecar = await startSidecar(parsed.options, { log: () => undefined, env: {} });
    const ca = await readFile(devPkiPaths(dir).caCert, 'utf8');
    client = (user) => {
      const c = generateClientCert(clientCa, { user });
      return new HttpsClient(sidecar.url, { ca, cert: c.certPem, key: c.keyPem });
    };
  });

  after(async () => {
    await sidecar?.shutdown('test');
    await new Promise<void>((r) => upstream.close(() => r()));
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('forwards a request and its body over h2c, with the identity and without the credentials', async () => {
    seen.length = 0;
    const c = client('allow-alice');
    const r = await c.request('POST', '/pkg.Service/Method?x=1', 'payload', {
      'content-type': 'application/grpc',
      'x-remote-user': 'spoofed',
      te: 'trailers',
    });
    c.close();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, 'h2 POST /svc/pkg.Service/Method?x=1 payload');
    const h = seen[0]!.headers;
    assert.equal(h['x-remote-user'], 'allow-alice');
    assert.equal(h['authorization'], undefined);
    assert.equal(h['te'], 'trailers');
    assert.equal(h[':scheme'], 'http');
  });

  it("a client's __proto__ header breaks nothing (Node's parser keeps it out of req.headers; the others pass)", async () => {
    seen.length = 0;
    const c = client('allow-alice');
    const r = await c.request(
      'GET',
      '/pkg.Service/Proto',
      undefined,
      JSON.parse('{"__proto__": {"polluted": "yes"}, "x-other": "y"}') as Record<string, string>,
    );
    c.close();
    assert.equal(r.status, 200, r.text);
    assert.equal(seen[0]!.headers['x-other'], 'y');
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('denies before reaching the upstream', async () => {
    seen.length = 0;
    const c = client('deny-bob');
    assert.equal((await c.request('GET', '/pkg.Service/Method')).status, 403);
    c.close();
    assert.equal(seen.length, 0);
  });

  it('refuses an h2c upstream that is not on loopback', () => {
    const r = parseServeFlags(['--upstream=http://10.0.0.1:9000', '--upstream-force-h2c']);
    assert.ok('error' in r);
    assert.match(r.error, /--upstream-force-h2c needs a loopback http:\/\/ --upstream/);
  });
});
