// readBody (lib/http/body.ts): a body of a declared length sent with its
// headers is taken whole from the stream's buffer after the parse (no 'data'
// listener on the request, which still ends and closes); one still arriving,
// a chunked one, an empty one and one past the limit are read as before.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../../lib/http/body.js';

interface Seen {
  body?: string;
  error?: string;
  dataListeners?: number;
  ended?: boolean;
}

describe('readBody', () => {
  let server: Server;
  let port: number;
  let seen: (s: Seen) => void;
  const LIMIT = 1024;

  before(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let ended = false;
      req.on('end', () => (ended = true));
      readBody(req, LIMIT).then(
        (b) => {
          const dataListeners = req.listenerCount('data');
          res.end('ok', () => setImmediate(() => seen({ body: b.toString('utf8'), dataListeners, ended })));
        },
        (err: Error & { code?: number }) => {
          seen({ error: String(err.code ?? err.message) });
          res.statusCode = 413;
          res.end();
        },
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  /** Sends `parts` as the body (one write each, `gapMs` apart); what the server's readBody gave. */
  const post = (parts: string[], headers: Record<string, string | number>, gapMs = 0): Promise<Seen> =>
    new Promise((resolve, reject) => {
      seen = resolve;
      const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', headers, agent: false }, (res) => res.resume());
      req.on('error', reject);
      let i = 0;
      const next = (): void => {
        if (i === parts.length - 1) {
          req.end(parts[i]);
          return;
        }
        req.write(parts[i++]);
        setTimeout(next, gapMs);
      };
      if (parts.length === 0) req.end();
      else next();
    });

  it('a body sent with its headers is read whole without a data listener, and the request still ends', async () => {
    const body = JSON.stringify({ kind: 'ConfigMap', data: { a: 'x'.repeat(200) } });
    const s = await post([body], { 'content-length': Buffer.byteLength(body) });
    assert.deepEqual(s, { body, dataListeners: 0, ended: true });
  });

  it('a body still arriving after the headers is read by the listeners, whole', async () => {
    const s = await post(['{"a":', '"b"}'], { 'content-length': 9 }, 30);
    assert.equal(s.body, '{"a":"b"}');
    assert.equal(s.ended, true);
  });

  it('an empty body is an empty buffer', async () => {
    assert.equal((await post([], { 'content-length': 0 })).body, '');
  });

  it('a chunked body within the limit is read whole; past it, 413', async () => {
    assert.equal((await post(['ab', 'cd'], { 'transfer-encoding': 'chunked' }, 20)).body, 'abcd');
    assert.equal((await post(['x'.repeat(LIMIT + 1)], { 'transfer-encoding': 'chunked' })).error, '413');
    assert.equal((await post(['x'.repeat(600), 'y'.repeat(600)], { 'transfer-encoding': 'chunked' }, 20)).error, '413');
  });

  it('a declared length over the limit is 413 before any read', async () => {
    const s = await new Promise<Seen>((resolve) => {
      seen = resolve;
      const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', headers: { 'content-length': LIMIT + 1 }, agent: false }, (res) =>
        res.resume(),
      );
      req.on('error', () => undefined);
      req.write('x');
    });
    assert.equal(s.error, '413');
  });
});
