// HTTP/2 to aggregated backends that offer it by ALPN, through a real
// gateway process: a node:http2 secure server (ALPN h2 and http/1.1, the
// front-proxy client certificate required) sees HTTP/2 for proxied GETs,
// streamed POST bodies and watches, on few connections; the identity
// headers arrive and spoofed ones do not; a watch held open does not hold
// back a POST (undici's own HTTP/2 client would); error statuses are
// relayed, a redirect refused, a backend that closes is a 502 and the next
// request answered; upgrades stay HTTP/1.1; an http/1.1-only backend keeps
// the HTTP/1.1 pool.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureServer, sensitiveHeaders, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { createServer as createHttpsServer, request, Agent, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { rawExchange } from '../helpers/raw.js';
import { register, servingPki, waitAvailable } from './fixture.js';
import { eventually } from '../helpers/eventually.js';

const H2 = 'h2.gatehouse.dev';
const H1 = 'h1only.gatehouse.dev';
const THINGS = `/apis/${H2}/v1/namespaces/x/things`;

interface Seen {
  method: string;
  path: string;
  httpVersion: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Backend {
  port: number;
  /** Requests as the backend saw them, by path (the last one). */
  seen: Map<string, Seen>;
  /** Open watch answers, by id. */
  watches: Map<string, { write(s: string): boolean; end(): void; destroy?(): void }>;
  /** Watch ids whose answer closed (the client went, the stream was cancelled). */
  closed: Set<string>;
  /** TLS connections that negotiated h2. */
  h2Sessions: number;
  close(): Promise<void>;
}

type Req = Http2ServerRequest | IncomingMessage;
type Res = Http2ServerResponse | ServerResponse;

/** The backend's handler: discovery, `upload` (sha256 of the body), `missing` (404 Status), `redirect`, `close`, watches, echo. */
function handler(group: string, b: Backend) {
  return (req: Req, res: Res): void => {
    const url = new URL(req.url ?? '/', 'https://x');
    b.seen.set(url.pathname, { method: req.method ?? '', path: url.pathname, httpVersion: req.httpVersion, headers: { ...req.headers } });
    const last = url.pathname.split('/').at(-1)!;
    if (url.pathname === `/apis/${group}/v1`) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          kind: 'APIResourceList',
          apiVersion: 'v1',
          groupVersion: `${group}/v1`,
          resources: [{ name: 'things', singularName: 'thing', namespaced: true, kind: 'Thing', verbs: ['get', 'list', 'create', 'watch'] }],
        }),
      );
      return;
    }
    if (url.searchParams.get('watch') === '1') {
      res.writeHead(200, { 'content-type': 'application/json' });
      (res as ServerResponse).flushHeaders?.();
      const id = url.searchParams.get('id') ?? '';
      res.on('close', () => b.closed.add(id));
      b.watches.set(id, { write: (s) => (res as ServerResponse).write(s), end: () => (res as ServerResponse).end(), destroy: () => req.socket.destroy() });
      return;
    }
    switch (last) {
      case 'upload': {
        const h = createHash('sha256');
        let n = 0;
        req.on('data', (c: Buffer) => {
          h.update(c);
          n += c.length;
        });
        req.on('end', () =>
          res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes: n, sha256: h.digest('hex'), httpVersion: req.httpVersion })),
        );
        return;
      }
      case 'missing':
        res
          .writeHead(404, { 'content-type': 'application/json', 'x-backend': 'h2' })
          .end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: 'things "missing" not found' }));
        return;
      case 'hang':
        return;
      case 'early':
        // Answered before the body is read (a backend's size limit).
        res.writeHead(413, { 'content-type': 'application/json' }).end(JSON.stringify({ kind: 'Status', code: 413, message: 'too large' }));
        return;
      case 'stall':
        // Headers, half a body, then silence.
        res.writeHead(200, { 'content-type': 'application/json' });
        (res as ServerResponse).write('{"partial":');
        return;
      case 'redirect':
        res.writeHead(302, { location: 'https://elsewhere.example/' }).end();
        return;
      case 'close':
        // The whole connection goes, every stream on it.
        req.socket.destroy();
        return;
      default:
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: url.pathname, httpVersion: req.httpVersion }));
    }
  };
}

function listening(server: Http2SecureServer | Server): Promise<number> {
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r((server.address() as AddressInfo).port)));
}

async function startH2(pem: { cert: string; key: string }, frontProxyCa: string): Promise<Backend> {
  const b = { seen: new Map(), watches: new Map(), closed: new Set(), h2Sessions: 0 } as unknown as Backend;
  const server = createSecureServer(
    { cert: pem.cert, key: pem.key, ca: frontProxyCa, requestCert: true, rejectUnauthorized: true, allowHTTP1: true },
    handler(H2, b) as (req: Http2ServerRequest, res: Http2ServerResponse) => void,
  );
  server.on('session', () => b.h2Sessions++);
  // Upgrades come over HTTP/1.1 (allowHTTP1): echoed after the 101.
  server.on('upgrade', (req: IncomingMessage, socket) => {
    b.seen.set(new URL(req.url ?? '/', 'https://x').pathname, {
      method: req.method ?? '',
      path: req.url ?? '',
      httpVersion: req.httpVersion,
      headers: { ...req.headers },
    });
    socket.on('error', () => undefined);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers['upgrade']}\r\nConnection: Upgrade\r\n\r\n`);
    socket.pipe(socket);
  });
  b.port = await listening(server);
  b.close = () =>
    new Promise<void>((r) => {
      for (const w of b.watches.values()) w.destroy?.();
      server.close(() => r());
      // Open sessions would hold close() back.
      setTimeout(r, 500).unref();
    });
  return b;
}

async function startH1(pem: { cert: string; key: string }, frontProxyCa: string): Promise<Backend> {
  const b = { seen: new Map(), watches: new Map(), closed: new Set(), h2Sessions: 0 } as unknown as Backend;
  const server = createHttpsServer({ cert: pem.cert, key: pem.key, ca: frontProxyCa, requestCert: true, rejectUnauthorized: true }, handler(H1, b));
  b.port = await listening(server);
  b.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return b;
}

describe('HTTP/2 to aggregated backends that offer it', { timeout: 180_000 }, () => {
  let gh!: Gatehouse;
  let h2!: Backend;
  let h1!: Backend;
  let agent!: Agent;
  let tls!: { ca: string; cert: string; key: string };

  const call = (method: string, path: string, o: { body?: Buffer[]; headers?: Record<string, string> } = {}) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: string; error?: string }>((resolve) => {
      const req = request({ host: '127.0.0.1', port: gh.port, method, path, agent, servername: 'localhost', headers: o.headers ?? {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }));
        res.on('error', (err) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', error: err.message }));
      });
      req.on('error', (err) => resolve({ status: 0, headers: {}, body: '', error: err.message }));
      if (o.body) {
        void (async () => {
          for (const c of o.body!) {
            req.write(c);
            await new Promise((r) => setTimeout(r, 5));
          }
          req.end();
        })();
      } else req.end();
    });

  before(async () => {
    // A short --request-timeout, so a stall is seen soon.
    gh = await startGatehouse({ flags: ['--request-timeout=4s'] });
    const pki = join(gh.dataDir, 'pki');
    const frontProxyCa = readFileSync(join(pki, 'front-proxy-ca.crt'), 'utf8');
    tls = {
      ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
      cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
      key: readFileSync(join(pki, 'admin.key'), 'utf8'),
    };
    agent = new Agent({ keepAlive: true, maxSockets: 64, ...tls });
    const dir = tempDir('h2-certs');
    const h2Pem = servingPki(dir, 'h2');
    const h1Pem = servingPki(dir, 'h1only');
    h2 = await startH2(h2Pem, frontProxyCa);
    h1 = await startH1(h1Pem, frontProxyCa);
    await register(gh.admin, { service: 'h2', port: h2.port, group: H2, caPem: h2Pem.ca });
    await register(gh.admin, { service: 'h1only', port: h1.port, group: H1, caPem: h1Pem.ca });
    await waitAvailable(gh.admin, `v1.${H2}`, 'True');
    await waitAvailable(gh.admin, `v1.${H1}`, 'True');
  });
  after(async () => {
    if (process.env.AGG_DEBUG) process.stderr.write(`gateway stderr:\n${gh?.proc.stderr}\n`);
    agent?.destroy();
    await h2?.close();
    await h1?.close();
    await stopAll();
  });

  it('a GET reaches the backend over HTTP/2 with the identity headers, and none the client spoofed', async () => {
    const r = await call('GET', `${THINGS}/one`, {
      headers: {
        'X-Remote-User': 'mallory',
        'X-Remote-Group': 'evil',
        Authorization: 'Bearer not-a-token',
        Connection: 'keep-alive',
        'Keep-Alive': 'timeout=5',
      },
    });
    assert.equal(r.status, 200, r.body);
    const seen = h2.seen.get(`${THINGS}/one`)!;
    assert.equal(seen.httpVersion, '2.0');
    assert.equal(seen.headers['x-remote-user'], 'admin');
    assert.match(String(seen.headers['x-remote-group']), /system:masters/);
    assert.match(String(seen.headers['x-remote-group']), /system:authenticated/);
    assert.doesNotMatch(String(seen.headers['x-remote-group']), /evil/);
    assert.equal(seen.headers['authorization'], undefined);
    assert.equal(seen.headers['keep-alive'], undefined);
    assert.equal(seen.headers[':authority'], `127.0.0.1:${gh.port}`);
  });

  it('header names a prototype knows are data; the Audit-ID goes HPACK-never-indexed, the identity indexed', async () => {
    const u = await rawExchange(
      { port: gh.port, ...tls },
      `GET ${THINGS}/names HTTP/1.1\r\nHost: x\r\n__proto__: p\r\nconstructor: c\r\nhasOwnProperty: h\r\nConnection: close\r\n\r\n`,
    );
    assert.match(u.text, /^HTTP\/1\.1 200/, u.text);
    const seen = h2.seen.get(`${THINGS}/names`)!;
    assert.equal(seen.httpVersion, '2.0');
    assert.equal(Object.getOwnPropertyDescriptor(seen.headers, '__proto__')?.value, 'p');
    assert.equal(seen.headers['constructor'], 'c');
    assert.equal(seen.headers['hasownproperty'], 'h');
    // The same Audit-ID the client was answered with; a fresh value each request, so never in the HPACK table.
    assert.equal(seen.headers['audit-id'], /\r\naudit-id: ([^\r]+)\r\n/i.exec(u.text)?.[1]);
    const neverIndexed = (seen.headers as Record<symbol, string[] | undefined>)[sensitiveHeaders] ?? [];
    assert.deepEqual(neverIndexed, ['audit-id']);
  });

  it('many concurrent GETs share few HTTP/2 connections', async () => {
    const before = h2.h2Sessions;
    const rs = await Promise.all(Array.from({ length: 40 }, (_, n) => call('GET', `${THINGS}/c${n}`)));
    for (const [n, r] of rs.entries()) {
      assert.equal(r.status, 200, r.body);
      assert.deepEqual(JSON.parse(r.body), { path: `${THINGS}/c${n}`, httpVersion: '2.0' });
    }
    assert.ok(h2.h2Sessions - before <= 1, `${h2.h2Sessions - before} new HTTP/2 connections for 40 requests`);
  });

  it('a watch streams over HTTP/2, and a POST with a streamed body passes beside it', async () => {
    const w = await gh.admin.watch(`${THINGS}?watch=1&id=w1`);
    assert.equal(w.status, 200);
    await eventually('the watch reached the backend', () => h2.watches.has('w1'));
    assert.equal(h2.seen.get(THINGS)!.httpVersion, '2.0');
    const backendSide = h2.watches.get('w1')!;
    backendSide.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Thing', metadata: { name: 'e0' } } })}\n`);
    assert.equal((await w.next(10_000))?.object.metadata.name, 'e0');
    // A POST while the watch holds a stream of the same connection.
    const chunks = Array.from({ length: 6 }, (_, i) => Buffer.alloc(40_000, i));
    const up = await call('POST', `${THINGS}/upload`, { body: chunks, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(up.status, 201, up.body);
    const want = createHash('sha256');
    for (const c of chunks) want.update(c);
    assert.deepEqual(JSON.parse(up.body), { bytes: 240_000, sha256: want.digest('hex'), httpVersion: '2.0' });
    backendSide.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Thing', metadata: { name: 'e1' } } })}\n`);
    assert.equal((await w.next(10_000))?.object.metadata.name, 'e1');
    backendSide.end();
    assert.equal(await w.next(10_000), undefined);
    assert.ok(w.ended);
  });

  it('a client that leaves a watch cancels its HTTP/2 stream; the connection serves on', async () => {
    const sessions = h2.h2Sessions;
    const w = await gh.admin.watch(`${THINGS}?watch=1&id=w2`);
    await eventually('the watch reached the backend', () => h2.watches.has('w2'));
    w.stop();
    await eventually('the backend saw the stream close', () => h2.closed.has('w2'));
    const r = await call('GET', `${THINGS}/after-cancel`);
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).httpVersion, '2.0');
    assert.equal(h2.h2Sessions, sessions);
  });

  it('an error status is relayed with its body; a redirect is refused with a 502', async () => {
    const r = await call('GET', `${THINGS}/missing`);
    assert.equal(r.status, 404);
    assert.equal(r.headers['x-backend'], 'h2');
    assert.equal(JSON.parse(r.body).message, 'things "missing" not found');
    const red = await call('GET', `${THINGS}/redirect`);
    assert.equal(red.status, 502, red.body);
    assert.match(JSON.parse(red.body).message, /redirect/);
    assert.equal(red.headers['location'], undefined);
  });

  it('a backend that closes the connection is a 502 naming the APIService; the next request is answered', async () => {
    const r = await call('GET', `${THINGS}/close`);
    assert.equal(r.status, 502, r.body);
    assert.match(JSON.parse(r.body).message, new RegExp(`APIService "v1\\.${H2.replace(/\./g, '\\.')}"`));
    const again = await call('GET', `${THINGS}/after`);
    assert.equal(again.status, 200, again.body);
    assert.equal(JSON.parse(again.body).httpVersion, '2.0');
  });

  it('a backend that never answers is a 504 at --request-timeout; one that stalls mid-answer has the client cut', async () => {
    const r = await call('GET', `${THINGS}/hang`);
    assert.equal(r.status, 504, r.body);
    assert.match(JSON.parse(r.body).message, /within 4s/);
    const cut = await call('GET', `${THINGS}/stall`);
    assert.equal(cut.status, 200);
    assert.ok(cut.error !== undefined || !cut.body.endsWith('}'), `a stalled answer must not look complete: ${JSON.stringify(cut)}`);
    const again = await call('GET', `${THINGS}/after-stall`);
    assert.equal(again.status, 200, again.body);
  });

  it('an answer before the whole body was sent is relayed; the HTTP/2 connection serves on', async () => {
    const sessions = h2.h2Sessions;
    const chunks = Array.from({ length: 20 }, (_, i) => Buffer.alloc(64 * 1024, i));
    const r = await call('POST', `${THINGS}/early`, { body: chunks, headers: { 'content-type': 'application/octet-stream' } });
    assert.equal(r.status, 413, JSON.stringify(r));
    assert.equal(JSON.parse(r.body).message, 'too large');
    const again = await call('GET', `${THINGS}/after-early`);
    assert.equal(again.status, 200, again.body);
    assert.equal(JSON.parse(again.body).httpVersion, '2.0');
    assert.equal(h2.h2Sessions, sessions);
  });

  it('an upgrade to an HTTP/2 backend stays HTTP/1.1', async () => {
    const u = await rawExchange({ port: gh.port, ...tls }, `GET ${THINGS}/t1/exec HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`, {
      done: (text, write) => {
        if (text.includes('hello-up')) return true;
        if (text.startsWith('HTTP/1.1 101') && text.includes('\r\n\r\n')) write('hello-up');
        return false;
      },
    });
    assert.match(u.text, /^HTTP\/1\.1 101/, u.text);
    assert.ok(u.text.endsWith('hello-up'), u.text);
    assert.equal(h2.seen.get(`${THINGS}/t1/exec`)!.httpVersion, '1.1');
  });

  it('an http/1.1-only backend keeps HTTP/1.1', async () => {
    const path = `/apis/${H1}/v1/namespaces/x/things`;
    const r = await call('GET', `${path}/one`);
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).httpVersion, '1.1');
    assert.equal(h1.seen.get(`${path}/one`)!.headers['x-remote-user'], 'admin');
    const up = await call('POST', `${path}/upload`, { body: [Buffer.from('abc'), Buffer.from('def')] });
    assert.equal(up.status, 201, up.body);
    assert.equal(JSON.parse(up.body).bytes, 6);
  });
});
