// What a request carries travels on its RequestContext, which is also the
// BackendRequest a backend gets and the Exchange the lib/http writers take:
// warnings added by the chain and by the backend, the headers the chain
// carries (Audit-Id) and the compression gate all reach the one answer,
// with nothing kept on the request or the response.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildHandlerChain, type ChainConfig } from '../../gateway/pipeline/chain.js';
import { InflightLimiter } from '../../gateway/pipeline/inflight.js';
import { identityHeaderNames } from '../../gateway/authn/requestheader.js';
import type { BackendRequest } from '../../lib/api/backend.js';
import { addWarnings } from '../../lib/http/warnings.js';
import { sendBody } from '../../lib/http/respond.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BIG = JSON.stringify({ kind: 'Status', message: 'x'.repeat(4096) });

/** A backend as the core backend is called: with the BackendRequest only. */
function backend(r: BackendRequest): Promise<void> {
  addWarnings(r, ['from the backend']);
  sendBody(r, 200, 'application/json', BIG);
  return Promise.resolve();
}

function chainServer(extra: Partial<ChainConfig>): { start(): Promise<number>; stop(): Promise<void> } {
  let server: Server;
  return {
    async start() {
      const handler = buildHandlerChain({
        authenticator: { authenticate: () => Promise.resolve({ user: { username: 'alice', groups: ['system:authenticated'] } }) },
        identityHeaders: identityHeaderNames(undefined),
        impersonation: false,
        authorizer: { name: 'all', authorize: () => ({ kind: 'allow', reason: '' }) },
        inflight: new InflightLimiter(10, 10),
        requestTimeoutMs: 60_000,
        dispatch: (ctx) => {
          addWarnings(ctx, ['from the chain']);
          return backend(ctx);
        },
        log: () => undefined,
        clock: Date.now,
        ...extra,
      });
      server = createServer((req, res) => handler(req, res));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      return (server.address() as AddressInfo).port;
    },
    stop() {
      return new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      });
    },
  };
}

function get(port: number): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/api/v1/namespaces/default/configmaps/c', agent: false, headers: { 'accept-encoding': 'gzip' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    })
      .on('error', reject)
      .end();
  });
}

describe('the request context carries the answer side', () => {
  describe('with compression on (the default)', () => {
    const s = chainServer({});
    let port = 0;
    before(async () => {
      port = await s.start();
    });
    after(() => s.stop());

    it("puts the chain's and the backend's warnings and the carried Audit-Id on the backend's answer, gzipped", async () => {
      const r = await get(port);
      assert.equal(r.status, 200);
      assert.equal(r.headers['warning'], '299 - "from the chain", 299 - "from the backend"');
      assert.match(String(r.headers['audit-id']), UUID);
      assert.equal(r.headers['content-encoding'], 'gzip');
    });
  });

  describe('with the APIResponseCompression gate off', () => {
    const s = chainServer({ compression: false });
    let port = 0;
    before(async () => {
      port = await s.start();
    });
    after(() => s.stop());

    it('never gzips, though the client asks', async () => {
      const r = await get(port);
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-encoding'], undefined);
      assert.equal(r.headers['warning'], '299 - "from the chain", 299 - "from the backend"');
    });
  });
});
