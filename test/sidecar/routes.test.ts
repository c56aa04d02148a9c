// A sidecar in front of two upstreams by a route table (--routes): each
// route's upstream, attributes (non-resource, or resource attributes from
// the path's captures, as the cluster's SubjectAccessReview receives them),
// identity-header policy and ignore/deny action; no route is 404. The same
// table answers the sidecar's forward-auth endpoint, here for a proxy
// trusted by its address (--forward-auth-trusted-addresses). The sidecar runs
// in-process; client certificates authenticate and a real SubjectAccessReview
// webhook decides by the user name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { freePort } from '../helpers/ports.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';

interface Hit {
  readonly upstream: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

async function upstreamNamed(name: string, hits: Hit[]): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    hits.push({ upstream: name, url: req.url ?? '', headers: req.headers });
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('sidecar with a route table in front of two upstreams', { timeout: 60_000 }, () => {
  let dir: string;
  let peer: WebhookPeer;
  let a: { server: Server; url: string };
  let b: { server: Server; url: string };
  let sidecar: RunningSidecar;
  let client: (user: string) => HttpsClient;
  let clientCa: ReturnType<typeof generateCa>;
  let anonymous: HttpsClient;
  const hits: Hit[] = [];
  const logs: string[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-routes-'));
    peer = await startWebhookPeer();
    a = await upstreamNamed('a', hits);
    b = await upstreamNamed('b', hits);
    await writeFile(
      join(dir, 'routes.yaml'),
      [
        'routes:',
        '- {name: health, path: /healthz, action: ignore}',
        '- {name: admin, prefix: /admin, action: deny}',
        `- {name: pods, pattern: "/namespaces/{namespace}/{resource}/{name}", resourceAttributes: {apiVersion: v1}, upstream: "${b.url}/"}`,
        `- {name: metrics, regex: "/metrics(/.*)?", identityHeaders: false, upstream: "${b.url}"}`,
        '- {name: api, prefix: /api}',
        '',
      ].join('\n'),
    );
    clientCa = generateCa('sidecar-clients');
    await writeFile(join(dir, 'clients.crt'), clientCa.certPem);
    const parsed = parseServeFlags([
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--upstream=${a.url}`,
      `--routes=${join(dir, 'routes.yaml')}`,
      '--forward-auth-trusted-addresses=127.0.0.0/8',
      `--client-ca-file=${join(dir, 'clients.crt')}`,
      `--authentication-token-webhook-config-file=${await peer.kubeconfig(dir, 'authn')}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'authz')}`,
      '--authorization-webhook-version=v1',
      '--authorization-webhook-cache-authorized-ttl=0s',
      '--authorization-webhook-cache-unauthorized-ttl=0s',
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    sidecar = await startSidecar(parsed.options, { log: (m) => logs.push(m), env: {} });
    const ca = await readFile(devPkiPaths(dir).caCert, 'utf8');
    client = (user) => {
      const c = generateClientCert(clientCa, { user });
      return new HttpsClient(sidecar.url, { ca, cert: c.certPem, key: c.keyPem });
    };
    anonymous = new HttpsClient(sidecar.url, { ca });
  });

  after(async () => {
    anonymous?.close();
    await sidecar?.shutdown('test');
    await closeServer(a.server);
    await closeServer(b.server);
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('sends a prefix route to the default upstream with the caller named', async () => {
    hits.length = 0;
    const c = client('allow-alice');
    const r = await c.request('GET', '/api/things?x=1');
    c.close();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, 'a');
    assert.equal(hits[0]!.url, '/api/things?x=1');
    assert.equal(hits[0]!.headers['x-remote-user'], 'allow-alice');
  });

  it("asks the cluster about the resource the pattern's captures name, and proxies to the route's upstream", async () => {
    hits.length = 0;
    const before = peer.received.length;
    const c = client('allow-alice');
    const r = await c.request('GET', '/namespaces/ns1/pods/p1');
    c.close();
    assert.equal(r.status, 200, r.text);
    assert.equal(r.text, 'b');
    const asked = peer.received.slice(before).map((x) => x.spec['resourceAttributes']);
    assert.deepEqual(asked, [{ namespace: 'ns1', verb: 'get', version: 'v1', resource: 'pods', name: 'p1' }]);
  });

  it("denies what the cluster denies, in kube-rbac-proxy's words", async () => {
    const c = client('deny-bob');
    const r = await c.request('DELETE', '/namespaces/ns1/pods/p1');
    c.close();
    assert.equal(r.status, 403);
    assert.equal(r.json.message, 'Forbidden (user=deny-bob, verb=delete, resource=pods, subresource=, namespace=ns1, name=p1)');
  });

  it('a regex route with identity headers off reaches its upstream without the caller named', async () => {
    hits.length = 0;
    const c = client('allow-alice');
    const r = await c.request('GET', '/metrics/cpu', undefined, { 'x-remote-user': 'spoofed' });
    c.close();
    assert.equal(r.status, 200);
    assert.equal(hits[0]!.upstream, 'b');
    assert.equal(hits[0]!.headers['x-remote-user'], undefined);
  });

  it('an ignored route is anonymous and allowed; a deny route is 403 before anyone is asked; no route is 404', async () => {
    hits.length = 0;
    assert.equal((await anonymous.request('GET', '/healthz')).status, 200);
    assert.equal(hits[0]!.headers['x-remote-user'], undefined);
    const before = peer.received.length;
    const c = client('allow-alice');
    const denied = await c.request('GET', '/admin/users');
    assert.equal(denied.status, 403);
    assert.match(denied.json.message, /route "admin" denies/);
    assert.equal((await c.request('GET', '/elsewhere')).status, 404);
    c.close();
    assert.equal(peer.received.length, before);
  });

  it("serves forward auth from the same table and the cluster's decisions, for a proxy trusted by its address", async () => {
    const fa = (uri: string, headers: Record<string, string> = {}) =>
      anonymous.request('GET', '/gatehouse/forward-auth', undefined, { 'x-original-method': 'GET', 'x-original-uri': uri, ...headers });
    const forwarded = (user: string) => ({ 'x-forwarded-client-cert': encodeURIComponent(generateClientCert(clientCa, { user }).certPem) });
    assert.equal((await fa('/api/x')).status, 401);
    const ok = await fa('/api/x', forwarded('allow-carol'));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.headers['x-remote-user'], 'allow-carol');
    assert.equal((await fa('/api/x', forwarded('deny-dan'))).status, 403);
    assert.equal((await fa('/healthz')).status, 200);
    assert.equal((await fa('/admin/x', forwarded('allow-carol'))).status, 403);
    assert.equal((await fa('/elsewhere', forwarded('allow-carol'))).status, 404);
  });

  it("refuses kube-rbac-proxy's config file beside forward auth, whose attributes come from the route table", () => {
    const r = parseServeFlags(['--upstream=http://127.0.0.1:1', '--resource-attributes=config.yaml', '--forward-auth-trusted-addresses=127.0.0.1']);
    assert.ok('error' in r);
    assert.match(r.error, /--resource-attributes applies to the proxy only/);
  });
});
