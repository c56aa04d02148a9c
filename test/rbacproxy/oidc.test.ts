// OIDC in sidecar mode, from kube-rbac-proxy's command line: --oidc-issuer,
// --oidc-clientID and --oidc-ca-file against a real oidc-provider over
// HTTPS, with kube-rbac-proxy's claim defaults (email for the user, groups
// for the groups). The token is verified by the gateway's OIDC verifier in
// the sidecar (no TokenReview); the cluster's SubjectAccessReview (a real
// webhook deciding by the user name) still authorizes. In-process.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { translateArgs } from '../../gateway/rbacproxy/args.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { freePort } from '../helpers/ports.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';
import { startIdp, type TestIdp } from '../authn/oidc-idp.js';

describe("kube-rbac-proxy's --oidc-* flags in sidecar mode", { timeout: 60_000 }, () => {
  let dir: string;
  let idp: TestIdp;
  let peer: WebhookPeer;
  let upstream: Server;
  let sidecar: RunningSidecar;
  let client: HttpsClient;
  const seen: IncomingHttpHeaders[] = [];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-krp-oidc-'));
    idp = await startIdp(dir);
    peer = await startWebhookPeer();
    upstream = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200).end('ok');
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const krp = translateArgs(
      [
        `--secure-listen-address=127.0.0.1:${await freePort()}`,
        `--upstream=http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`,
        `--oidc-issuer=${idp.url}`,
        '--oidc-clientID=gatehouse',
        `--oidc-ca-file=${idp.caFile}`,
        '--oidc-groups-prefix=oidc:',
        '--auth-header-fields-enabled',
      ],
      dir,
    );
    if ('error' in krp) throw new Error(krp.error);
    // The cluster: the webhook peer (kube-rbac-proxy would find it in-cluster).
    const parsed = parseServeFlags([
      ...krp.args,
      `--authentication-token-webhook-config-file=${await peer.kubeconfig(dir, 'authn')}`,
      `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'authz')}`,
      '--authorization-webhook-version=v1',
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    sidecar = await startSidecar(parsed.options, { log: () => undefined, env: {} });
    client = new HttpsClient(sidecar.url, { ca: await readFile(devPkiPaths(dir).caCert, 'utf8') });
  });

  after(async () => {
    client?.close();
    await sidecar?.shutdown('test');
    await closeServer(upstream);
    await peer?.close();
    await idp?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('authenticates an OIDC token by its email and groups claims, and the cluster authorizes that user', async () => {
    seen.length = 0;
    const token = await idp.sign({ sub: 's-1', email: 'allow-olga@example.com', email_verified: true, groups: ['dev'] });
    const r = await client.request('GET', '/metrics', undefined, { authorization: `Bearer ${token}` });
    assert.equal(r.status, 200, r.text);
    assert.equal(seen[0]!['x-remote-user'], 'allow-olga@example.com');
    assert.deepEqual(seen[0]!['x-remote-groups']!.toString().split('|').sort(), ['oidc:dev', 'system:authenticated']);
    const asked = peer.received.at(-1)!.spec;
    assert.equal(asked['user'], 'allow-olga@example.com');
  });

  it('the cluster still decides: a verified user it denies is 403', async () => {
    const token = await idp.sign({ sub: 's-2', email: 'deny-dora@example.com', email_verified: true });
    assert.equal((await client.request('GET', '/metrics', undefined, { authorization: `Bearer ${token}` })).status, 403);
  });

  it('a token with an unverified email, or signed by someone else, is 401', async () => {
    const unverified = await idp.sign({ sub: 's-3', email: 'allow-ursula@example.com', email_verified: false });
    assert.equal((await client.request('GET', '/metrics', undefined, { authorization: `Bearer ${unverified}` })).status, 401);
    const forged = `${(await idp.sign({ sub: 's-4', email: 'allow-x@example.com', email_verified: true })).slice(0, -4)}AAAA`;
    assert.equal((await client.request('GET', '/metrics', undefined, { authorization: `Bearer ${forged}` })).status, 401);
  });
});
