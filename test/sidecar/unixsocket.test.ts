// A sidecar in front of an upstream on a unix socket (--upstream=unix:///…),
// as kube-rbac-proxy's unix-socket example: requests reach it with the
// caller's identity (a socket is local, so kube-rbac-proxy's identity fields
// are allowed), and a route whose socket does not exist answers 503 naming
// it. In-process; client certificates authenticate and a real
// SubjectAccessReview webhook decides by the user name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { freePort } from '../helpers/ports.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';

describe('sidecar in front of a unix-socket upstream', { timeout: 60_000 }, () => {
  let dir: string;
  let peer: WebhookPeer;
  let app: Server;
  let sidecar: RunningSidecar;
  let client: (user: string) => HttpsClient;
  const seen: Array<{ url: string; headers: IncomingHttpHeaders }> = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-unix-'));
    peer = await startWebhookPeer();
    app = createServer((req, res) => {
      seen.push({ url: req.url ?? '', headers: req.headers });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('over the socket');
    });
    await new Promise<void>((r) => app.listen(join(dir, 'app.sock'), r));
    await writeFile(
      join(dir, 'routes.yaml'),
      `routes:\n- {name: gone, prefix: /gone, upstream: "unix://${join(dir, 'missing.sock')}"}\n- {name: app, prefix: /}\n`,
    );
    const clientCa = generateCa('sidecar-clients');
    await writeFile(join(dir, 'clients.crt'), clientCa.certPem);
    const parsed = parseServeFlags([
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--upstream=unix://${join(dir, 'app.sock')}`,
      `--routes=${join(dir, 'routes.yaml')}`,
      '--auth-header-fields-enabled',
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
      const c = generateClientCert(clientCa, { user, groups: ['team'] });
      return new HttpsClient(sidecar.url, { ca, cert: c.certPem, key: c.keyPem });
    };
  });

  after(async () => {
    await sidecar?.shutdown('test');
    await closeServer(app);
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('proxies an allowed request over the socket with the identity headers and fields', async () => {
    const c = client('allow-alice');
    const r = await c.request('GET', '/metrics?x=1');
    c.close();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, 'over the socket');
    assert.equal(seen.at(-1)!.url, '/metrics?x=1');
    assert.equal(seen.at(-1)!.headers['x-remote-user'], 'allow-alice');
    assert.equal(seen.at(-1)!.headers['x-remote-groups'], 'team|system:authenticated');
  });

  it('answers 503 naming a socket that does not exist', async () => {
    const c = client('allow-alice');
    const r = await c.request('GET', '/gone/x');
    c.close();
    assert.equal(r.status, 503);
    assert.equal(r.json.reason, 'ServiceUnavailable');
    assert.match(r.json.message, /the upstream socket ".*missing\.sock" does not exist/);
  });
});
