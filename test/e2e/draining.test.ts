// SIGTERM on the other serving processes — a sidecar (`gatehouse serve
// --upstream`) and a backend process (`gatehouse core-backend`) — drains them
// as it drains the gateway (their one front door, gateway/server/frontdoor.ts):
// after --shutdown-delay-duration, a request that still arrives on an open
// connection is turned away with kube-apiserver's 429, `Retry-After: 5` and
// `Connection: close` (the chain's step: test/pipeline/draining.test.ts), while
// the request in flight when draining began finishes, and the process exits 0.
// The late request is pipelined behind an upload whose body is completed only
// once the process logs that it drains: the only way a request reaches a
// draining server (the listener is closed, idle connections are cut).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { connect, type TLSSocket } from 'node:tls';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { GATEHOUSE_BIN, freePort, pkiPaths, spawnTracked, startGatehouse, stopAll, tempDir, type Proc } from './helpers.js';
import { NS, servingPki } from '../aggregation/fixture.js';
import { closeServer } from '../helpers/closeserver.js';

after(stopAll);

const BODY = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'in-flight' }, data: { k: 'v' } });
const DRAINING = /draining: new requests are answered 429/;

/** Everything the server writes on `sock` until it closes the connection. */
function readAll(sock: TLSSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => {
      text += d;
    });
    sock.on('error', reject);
    sock.on('close', () => resolve(text));
  });
}

/**
 * Starts an upload to `path` on a fresh connection (half its body sent), sends SIGTERM, completes
 * the body once the process drains and pipelines a GET of `late` behind it; returns the two answers' heads.
 */
async function drainWithLateRequest(proc: Proc, port: number, ca: string, path: string, late: string): Promise<{ first: string; second: string }> {
  const sock = connect({ host: '127.0.0.1', port, ca, ALPNProtocols: ['http/1.1'], checkServerIdentity: () => undefined });
  await new Promise<void>((resolve, reject) => sock.once('secureConnect', resolve).once('error', reject));
  const all = readAll(sock);
  const half = BODY.length >> 1;
  sock.write(`POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY.slice(0, half)}`);
  proc.kill('SIGTERM');
  await proc.waitFor('the draining log line', (p) => DRAINING.test(p.stderr) || !p.running, 30_000);
  assert.ok(proc.running, proc.stderr);
  sock.write(`${BODY.slice(half)}GET ${late} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  const text = await all;
  const heads = text.split(/(?=HTTP\/1\.1 \d{3} )/);
  assert.equal(heads.length, 2, `two answers on the connection:\n${text}`);
  return { first: heads[0]!, second: heads[1]! };
}

function assertTurnedAway(head: string): void {
  assert.match(head, /^HTTP\/1\.1 429 /);
  assert.match(head, /\r\nretry-after: 5\r\n/i);
  assert.match(head, /\r\nconnection: close\r\n/i);
  assert.match(head, /The apiserver is shutting down, please try again later\./);
}

describe('draining on SIGTERM, beside the gateway', { timeout: 180_000 }, () => {
  it('a sidecar answers a late request 429 with Retry-After, finishes the one in flight and exits 0', async () => {
    let upstream: Server | undefined;
    try {
      const uploads: string[] = [];
      upstream = createServer((req, res) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (d: string) => {
          body += d;
        });
        req.on('end', () => {
          uploads.push(body);
          res.writeHead(200, { 'content-type': 'text/plain' }).end('stored');
        });
      });
      await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', r));
      // The sidecar's own cluster (for tokens and SubjectAccessReview) is never asked: the paths here skip both.
      const sa = tempDir('drain-sa');
      const pem = servingPki(sa, 'cluster');
      writeFileSync(join(sa, 'token'), 'unused');
      writeFileSync(join(sa, 'ca.crt'), pem.ca);
      const port = await freePort();
      const dataDir = tempDir('drain-sidecar');
      const proc = spawnTracked(
        process.execPath,
        [
          GATEHOUSE_BIN,
          'serve',
          `--secure-port=${port}`,
          `--data-dir=${dataDir}`,
          `--upstream=http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`,
          '--ignore-paths=/upload,/late',
          '--shutdown-delay-duration=1s',
        ],
        { env: { ...process.env, KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: '1', GATEHOUSE_SERVICEACCOUNT_DIR: sa } },
      );
      proc.child.stdin?.end();
      await proc.waitFor('the sidecar serving', (p) => p.stdout.includes('sidecar is serving on') || !p.running, 60_000);
      assert.ok(proc.running, proc.stderr);
      const ca = readFileSync(join(dataDir, 'pki', 'ca.crt'), 'utf8');

      const { first, second } = await drainWithLateRequest(proc, port, ca, '/upload', '/late');
      assert.match(first, /^HTTP\/1\.1 200 /);
      assert.deepEqual(uploads, [BODY], 'the request in flight reached the upstream whole; the late one did not');
      assertTurnedAway(second);
      assert.deepEqual(await proc.waitExit(30_000), { code: 0, signal: null }, proc.stderr);
    } finally {
      await closeServer(upstream);
    }
  });

  it('a core-backend answers a late request 429 with Retry-After, finishes the one in flight and exits 0', async () => {
    const certs = tempDir('drain-core-certs');
    const pem = servingPki(certs, 'core-api');
    // The SubjectAccessReview webhook a core-backend must have (the gateway's, in a deployment): it allows everything.
    const hook = servingPki(certs, 'authz-hook');
    const reviews = createHttpsServer({ cert: hook.cert, key: hook.key }, (req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', status: { allowed: true } })),
      );
    });
    try {
      await new Promise<void>((r) => reviews.listen(0, '127.0.0.1', r));
      const kubeconfig = join(certs, 'sar.kubeconfig');
      writeFileSync(
        kubeconfig,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: hook',
          '  cluster:',
          `    server: https://127.0.0.1:${(reviews.address() as AddressInfo).port}/review`,
          `    certificate-authority-data: ${Buffer.from(hook.ca).toString('base64')}`,
          `    tls-server-name: authz-hook.${NS}.svc`,
          'users:',
          '- name: core',
          '  user: {}',
          'contexts:',
          '- name: hook',
          '  context: {cluster: hook, user: core}',
          'current-context: hook',
          '',
        ].join('\n'),
      );
      const port = await freePort();
      const proc = spawnTracked(process.execPath, [
        GATEHOUSE_BIN,
        'core-backend',
        `--secure-port=${port}`,
        `--data-dir=${tempDir('drain-core')}`,
        `--tls-cert-file=${pem.certFile}`,
        `--tls-private-key-file=${pem.keyFile}`,
        `--requestheader-client-ca-file=${pem.caFile}`,
        '--requestheader-username-headers=X-Remote-User',
        '--anonymous-auth=true',
        `--authorization-webhook-config-file=${kubeconfig}`,
        '--authorization-mode=Webhook',
        '--authorization-webhook-version=v1',
        '--shutdown-delay-duration=1s',
      ]);
      proc.child.stdin?.end();
      await proc.waitFor('core-backend serving', (p) => p.stdout.includes('is serving on') || !p.running, 60_000);
      assert.ok(proc.running, proc.stderr);

      const { first, second } = await drainWithLateRequest(proc, port, pem.ca, '/api/v1/namespaces/default/configmaps', '/api/v1/namespaces');
      assert.match(first, /^HTTP\/1\.1 201 /);
      assertTurnedAway(second);
      assert.deepEqual(await proc.waitExit(30_000), { code: 0, signal: null }, proc.stderr);
    } finally {
      await closeServer(reviews);
    }
  });
});

/** One request on a fresh connection (the listener must still accept): the answer's whole text. */
async function onNewConnection(port: number, tls: { ca: string; cert: string; key: string }, path: string): Promise<string> {
  const sock = connect({ host: '127.0.0.1', port, ...tls, ALPNProtocols: ['http/1.1'], checkServerIdentity: () => undefined });
  await new Promise<void>((resolve, reject) => sock.once('secureConnect', resolve).once('error', reject));
  const all = readAll(sock);
  sock.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  return all;
}

describe('draining with --shutdown-send-retry-after, as kube-apiserver', { timeout: 180_000 }, () => {
  it('keeps the listener open answering 429 with Retry-After until the request in flight finishes, then exits 0', async () => {
    const gh = await startGatehouse({ flags: ['--shutdown-delay-duration=1s', '--shutdown-send-retry-after=true'] });
    const paths = pkiPaths(gh.dataDir);
    const tls = { ca: readFileSync(paths.ca, 'utf8'), cert: readFileSync(paths.cert, 'utf8'), key: readFileSync(paths.key, 'utf8') };
    // The request in flight: an upload whose body is completed only after the late clients were answered.
    const inFlight = connect({ host: '127.0.0.1', port: gh.port, ...tls, ALPNProtocols: ['http/1.1'], checkServerIdentity: () => undefined });
    await new Promise<void>((resolve, reject) => inFlight.once('secureConnect', resolve).once('error', reject));
    const answer = readAll(inFlight);
    const half = BODY.length >> 1;
    inFlight.write(
      `POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${BODY.length}\r\nConnection: close\r\n\r\n${BODY.slice(0, half)}`,
    );
    gh.proc.kill('SIGTERM');
    await gh.proc.waitFor('the draining log line', (p) => DRAINING.test(p.stderr) || !p.running, 30_000);
    assert.ok(gh.proc.running, gh.proc.stderr);
    // A client that connects now still reaches the server and is told to come back.
    for (let i = 0; i < 2; i++) {
      const late = await onNewConnection(gh.port, tls, '/api/v1/namespaces');
      assertTurnedAway(late);
    }
    // Health checks are still answered: /readyz fails as the process shuts down, it is not turned away.
    assert.match(await onNewConnection(gh.port, tls, '/readyz'), /^HTTP\/1\.1 500 /);
    assert.ok(gh.proc.running, 'the request in flight holds the shutdown');
    inFlight.write(BODY.slice(half));
    assert.match(await answer, /^HTTP\/1\.1 201 /);
    assert.deepEqual(await gh.proc.waitExit(30_000), { code: 0, signal: null }, gh.proc.stderr);
    assert.match(gh.proc.stderr, /in-flight requests drained: closing the listener/);
    gh.admin.close();
    gh.anonymous.close();
  });
});
