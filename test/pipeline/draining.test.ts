// The chain while shutdown drains (after --shutdown-delay-duration): a
// request that still arrives is turned away with kube-apiserver's 429, so the
// client goes to another replica; health checks are still answered. (In a
// real process the window is short: idle connections are closed within 50 ms.)
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHandlerChain } from '../../gateway/pipeline/chain.js';
import { InflightLimiter } from '../../gateway/pipeline/inflight.js';
import { identityHeaderNames } from '../../gateway/authn/requestheader.js';

describe('a draining chain', () => {
  let server: Server;
  let draining = false;
  const served: string[] = [];
  before(async () => {
    const handler = buildHandlerChain({
      authenticator: { authenticate: async () => ({ user: { username: 'alice', groups: ['system:authenticated'] } }) },
      identityHeaders: identityHeaderNames(undefined),
      impersonation: false,
      authorizer: { name: 'allow', authorize: async () => ({ kind: 'allow', reason: '' }) },
      inflight: new InflightLimiter(10, 10),
      requestTimeoutMs: 5000,
      draining: () => draining,
      dispatch: async (ctx) => {
        served.push(ctx.info.path);
        ctx.res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      },
      log: () => undefined,
      clock: Date.now,
    });
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  });
  after(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );

  const get = (path: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      request({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
        .on('error', reject)
        .end();
    });

  it('serves before draining, then answers 429 with Retry-After and Connection: close, health checks excepted', async () => {
    assert.equal((await get('/api/v1/namespaces')).status, 200);
    draining = true;
    const late = await get('/api/v1/namespaces/default/configmaps');
    assert.equal(late.status, 429);
    assert.equal(late.headers['retry-after'], '5');
    assert.equal(late.headers['connection'], 'close');
    const status = JSON.parse(late.body);
    assert.equal(status.kind, 'Status');
    assert.equal(status.reason, 'TooManyRequests');
    assert.equal(status.message, 'The apiserver is shutting down, please try again later.');
    assert.deepEqual(status.details, { retryAfterSeconds: 5 });
    for (const p of ['/livez', '/readyz', '/healthz/ping']) assert.equal((await get(p)).status, 200, p);
    assert.deepEqual(served, ['/api/v1/namespaces', '/livez', '/readyz', '/healthz/ping']);
  });
});
