// Sidecar mode answers through the gateway's own chain: an Audit-Id on every
// authenticated answer, Status errors in the client's encoding, the request
// timeout's 504 and the in-flight limit's 429 — with the same shapes the
// gateway sends. The sidecar runs in-process (its limits are test knobs),
// client certificates authenticate, and a real SubjectAccessReview webhook
// decides by the user name.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { parse as parseYaml } from 'yaml';
import { generateCa, generateClientCert } from '../../certs/pki.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startSidecar, type RunningSidecar } from '../../gateway/sidecar/index.js';
import { HttpsClient } from '../helpers/client.js';
import { closeServer } from '../helpers/closeserver.js';
import { freePort } from '../helpers/ports.js';
import { upgradeRoundTrip } from '../helpers/raw.js';
import { startWebhookPeer, type WebhookPeer } from '../authz/webhookpeer.js';
import { eventually } from '../helpers/eventually.js';

const TIMEOUT_MS = 1_500;

describe('sidecar answers come from the shared chain', { timeout: 60_000 }, () => {
  let dir: string;
  let peer: WebhookPeer;
  let upstream: Server;
  const hanging = new Set<ServerResponse>();
  let sidecar: RunningSidecar;
  let client: (user: string) => HttpsClient;
  let raw: (user: string) => Promise<{ text: string; closed: boolean }>;
  const upgraded: string[] = [];
  let anonymous: HttpsClient;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-sidecar-chain-'));
    peer = await startWebhookPeer();
    upstream = createServer((req, res) => {
      if (req.url?.startsWith('/slow')) {
        hanging.add(res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ user: req.headers['x-remote-user'] }));
    });
    upstream.on('upgrade', (req, socket) => {
      upgraded.push(String(req.headers['x-remote-user']));
      socket.write('HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n');
      socket.pipe(socket);
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    const clientCa = generateCa('sidecar-clients');
    await writeFile(join(dir, 'clients.crt'), clientCa.certPem);
    const parsed = parseServeFlags([
      `--secure-port=${await freePort()}`,
      `--data-dir=${dir}`,
      `--upstream=http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
      `--client-ca-file=${join(dir, 'clients.crt')}`,
      `--authentication-token-webhook-config-file=${await peer.kubeconfig(dir, 'authn')}`,
      '--authentication-token-webhook-version=v1',
      `--authorization-webhook-config-file=${await peer.kubeconfig(dir, 'authz')}`,
      '--authorization-webhook-version=v1',
    ]);
    if ('error' in parsed) throw new Error(parsed.error);
    sidecar = await startSidecar(parsed.options, { log: () => undefined, env: {}, requestTimeoutMs: TIMEOUT_MS, maxRequestsInflight: 1 });
    const ca = await readFile(devPkiPaths(dir).caCert, 'utf8');
    client = (user) => {
      const c = generateClientCert(clientCa, { user });
      return new HttpsClient(sidecar.url, { ca, cert: c.certPem, key: c.keyPem });
    };
    anonymous = new HttpsClient(sidecar.url, { ca });
    // An upgrade request on its own TLS connection: answers until the echo of "ping", or the connection closing.
    raw = (user) => {
      const c = generateClientCert(clientCa, { user });
      return upgradeRoundTrip({ port: Number(new URL(sidecar.url).port), ca, cert: c.certPem, key: c.keyPem }, '/ws');
    };
  });

  after(async () => {
    anonymous?.close();
    for (const r of hanging) r.destroy();
    await sidecar?.shutdown('test');
    await closeServer(upstream);
    await peer?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('carries an Audit-Id on a proxied answer and on a denial', async () => {
    const allowed = client('allow-alice');
    const r = await allowed.request('GET', '/things');
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.user, 'allow-alice');
    assert.match(String(r.headers['audit-id']), /^[0-9a-f-]{36}$/);
    allowed.close();
    const denied = client('deny-bob');
    const d = await denied.request('GET', '/things');
    assert.equal(d.status, 403);
    assert.ok(d.headers['audit-id']);
    denied.close();
  });

  it('writes Status errors as the gateway does, in the encoding the client accepts', async () => {
    const r = await anonymous.request('GET', '/things');
    assert.equal(r.status, 401);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.deepEqual(r.json, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
    const y = await anonymous.request('GET', '/things', undefined, { accept: 'application/yaml' });
    assert.equal(y.status, 401);
    assert.equal(y.headers['content-type'], 'application/yaml');
    assert.equal(parseYaml(y.text).reason, 'Unauthorized');
    const denied = client('deny-bob');
    const d = await denied.request('GET', '/things');
    assert.equal(d.json.kind, 'Status');
    assert.equal(d.json.reason, 'Forbidden');
    assert.equal(d.json.code, 403);
    assert.match(d.json.message, /^Forbidden \(user=deny-bob, verb=get, path=\/things\)$/);
    denied.close();
  });

  it('answers 429 beyond the in-flight limit and 504 when the upstream does not answer in time', async () => {
    const c = client('allow-carol');
    const slow = c.request('GET', '/slow');
    // The slow request holds the only read-only slot once the upstream has it.
    await eventually('the slow request upstream', () => hanging.size > 0, { timeoutMs: 2000, intervalMs: 20 });
    assert.equal(hanging.size, 1);
    const busy = await c.request('GET', '/things');
    assert.equal(busy.status, 429);
    assert.equal(busy.headers['retry-after'], '1');
    assert.equal(busy.json.reason, 'TooManyRequests');
    assert.deepEqual(busy.json.details, { retryAfterSeconds: 1 });
    const late = await slow;
    assert.equal(late.status, 504);
    assert.equal(late.json.kind, 'Status');
    assert.equal(late.json.reason, 'Timeout');
    assert.equal(
      late.json.message,
      'Timeout: request did not complete within requested timeout - context deadline exceeded: no answer from the upstream within 1.5s',
    );
    // The slot is free again.
    assert.equal((await c.request('GET', '/things')).status, 200);
    c.close();
  });

  it('passes an upgrade only after the same checks, and closes a refused one after its Status', async () => {
    const denied = await raw('deny-dave');
    assert.match(denied.text, /^HTTP\/1\.1 403/);
    assert.match(denied.text, /"reason":"Forbidden"/);
    assert.equal(denied.closed, true);
    assert.deepEqual(upgraded, []);
    const ok = await raw('allow-erin');
    assert.match(ok.text, /^HTTP\/1\.1 101/);
    assert.match(ok.text, /ping$/);
    assert.deepEqual(upgraded, ['allow-erin']);
  });
});
