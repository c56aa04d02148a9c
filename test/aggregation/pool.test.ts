// The pooled aggregation proxy through a real gateway process to
// backends this test runs (real TLS, front-proxy client certificate
// required): bodies stream both ways under concurrency, with backpressure;
// upgrades and watches pass beside pooled requests; a backend that resets,
// closes, answers garbage, half a body or stalls gets the client a 502/504
// naming the APIService (or, once the answer started, a cut connection),
// and afterwards the same APIService answers again while another backend
// never noticed.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, request, Agent, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { sleep, startGatehouse, stopAll, tempDir, type Gatehouse } from '../e2e/helpers.js';
import { rawExchange } from '../helpers/raw.js';
import { register, servingPki, startEcho, waitAvailable, type EchoBackend, type Pem } from './fixture.js';
import { eventually } from '../helpers/eventually.js';

const GROUP = 'pool.gatehouse.dev';
const THINGS = `/apis/${GROUP}/v1/namespaces/x/things`;
const ECHOES = `/apis/echo.gatehouse.dev/v1/namespaces/x/echoes`;

/** Deterministic bytes: chunk `i` of stream `id`. */
function chunkOf(id: string, i: number, size: number): Buffer {
  const seed = createHash('sha256').update(`${id}/${i}`).digest();
  const b = Buffer.allocUnsafe(size);
  for (let o = 0; o < size; o += seed.length) seed.copy(b, o, 0, Math.min(seed.length, size - o));
  return b;
}

interface Misbehaving {
  server: Server;
  port: number;
  /** Request-body bytes received so far, by id. */
  received: Map<string, number>;
  /** Releases the next chunk of a gated response, by id. */
  release: Map<string, () => void>;
  /** Response bytes the backend's writes were accepted for, by id. */
  written: Map<string, number>;
  /** Open watch responses, by id. */
  watches: Map<string, ServerResponse>;
  requests: number;
  close(): Promise<void>;
}

/**
 * The backend: discovery for pool.gatehouse.dev/v1, and by the last path
 * segment — `upload` (reads the body, counting, answers its sha256),
 * `gated` (writes chunk i only once the test released it), `reset`, `close`, `garbage`, `half`,
 * `halfchunked`, `hang`, a watch (`?watch=1`: headers at once, never with `id=hang`, `bytes` with
 * backpressure with `id=big…`, lines when
 * the test writes them), upgrades echoed; anything else echoes the path.
 */
async function startMisbehaving(pem: Pem, frontProxyCa: string): Promise<Misbehaving> {
  const received = new Map<string, number>();
  const release = new Map<string, () => void>();
  const written = new Map<string, number>();
  const watches = new Map<string, ServerResponse>();
  const m = { requests: 0 } as Misbehaving;
  const raw = new Map<number, Socket>();
  /** Writes `total` bytes, waiting for 'drain' whenever a write is refused; counts what was accepted. */
  const pumpBig = (id: string, total: number, res: ServerResponse): void => {
    const size = 64 * 1024;
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(total) });
    let sent = 0,
      i = 0;
    const pump = (): void => {
      while (sent < total) {
        const c = chunkOf(id, i++, Math.min(size, total - sent));
        sent += c.length;
        written.set(id, sent);
        if (!res.write(c)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    pump();
  };
  const server = createServer(
    { cert: pem.cert, key: pem.key, ca: frontProxyCa, requestCert: true, rejectUnauthorized: true },
    (req: IncomingMessage, res: ServerResponse) => {
      m.requests++;
      const url = new URL(req.url ?? '/', 'https://x');
      const last = url.pathname.split('/').at(-1)!;
      const id = url.searchParams.get('id') ?? '';
      if (url.pathname === `/apis/${GROUP}/v1`) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            kind: 'APIResourceList',
            apiVersion: 'v1',
            groupVersion: `${GROUP}/v1`,
            resources: [{ name: 'things', singularName: 'thing', namespaced: true, kind: 'Thing', verbs: ['get', 'list', 'create', 'watch'] }],
          }),
        );
        return;
      }
      if (url.pathname === '/apis') {
        res.writeHead(404).end();
        return;
      }
      if (url.searchParams.get('watch') === '1') {
        if (id === 'hang') return;
        if (id.startsWith('big')) {
          pumpBig(id, Number(url.searchParams.get('bytes')), res);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        watches.set(id, res);
        return;
      }
      switch (last) {
        case 'upload': {
          const h = createHash('sha256');
          let n = 0;
          req.on('data', (c: Buffer) => {
            h.update(c);
            n += c.length;
            received.set(id, n);
          });
          req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ bytes: n, sha256: h.digest('hex') })));
          return;
        }
        case 'gated': {
          const chunks = Number(url.searchParams.get('chunks'));
          const size = Number(url.searchParams.get('size'));
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.flushHeaders();
          let i = 0;
          release.set(id, () => {
            res.write(chunkOf(id, i, size));
            if (++i === chunks) {
              release.delete(id);
              res.end();
            }
          });
          return;
        }
        // TLS sockets cannot reset; the TCP socket under this one can.
        case 'reset':
          raw.get(req.socket.remotePort ?? 0)?.resetAndDestroy();
          return;
        case 'close':
          req.socket.destroy();
          return;
        case 'garbage':
          req.socket.end('NOT HTTP AT ALL\r\n\r\n');
          return;
        case 'half':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
          res.write('x'.repeat(500), () => req.socket.destroy());
          return;
        case 'halfchunked':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"partial":', () => req.socket.destroy());
          return;
        case 'hang':
          return;
        default:
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: url.pathname, user: req.headers['x-remote-user'] }));
      }
    },
  );
  server.on('connection', (s: Socket) => {
    const port = s.remotePort ?? 0;
    raw.set(port, s);
    s.on('close', () => raw.delete(port));
  });
  server.on('upgrade', (req, socket) => {
    socket.on('error', () => undefined);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${req.headers['upgrade']}\r\nConnection: Upgrade\r\n\r\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return Object.assign(m, {
    server,
    port: (server.address() as AddressInfo).port,
    received,
    release,
    written,
    watches,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  });
}

interface Answer {
  status: number;
  body: Buffer;
  complete: boolean;
  error?: string;
}

/**
 * A gateway with `flags`, the misbehaving backend and an echo backend
 * registered, inside the current describe; `tests` get the fixtures.
 */
function withGateway(flags: string[], tests: (f: Fixtures) => void): void {
  let gh!: Gatehouse;
  let bad!: Misbehaving;
  let echo!: EchoBackend;
  let agent!: Agent;
  let tls!: { ca: string; cert: string; key: string };

  /** One request through the gateway; `body` is written by `write` (streamed) when given. */
  const call = (
    method: string,
    path: string,
    o: { write?: (req: ReturnType<typeof request>) => void; onResponse?: (res: IncomingMessage) => void; headers?: Record<string, string> } = {},
  ): Promise<Answer> =>
    new Promise((resolve) => {
      const req = request({ host: '127.0.0.1', port: gh.port, method, path, agent, servername: 'localhost', headers: o.headers ?? {} }, (res) => {
        o.onResponse?.(res);
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: res.complete }));
        res.on('error', (err) => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), complete: false, error: err.message }));
      });
      req.on('error', (err) => resolve({ status: 0, body: Buffer.alloc(0), complete: false, error: err.message }));
      if (o.write) o.write(req);
      else req.end();
    });

  before(async () => {
    gh = await startGatehouse({ flags });
    const pki = join(gh.dataDir, 'pki');
    const frontProxyCa = readFileSync(join(pki, 'front-proxy-ca.crt'), 'utf8');
    tls = {
      ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
      cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
      key: readFileSync(join(pki, 'admin.key'), 'utf8'),
    };
    agent = new Agent({ keepAlive: true, maxSockets: 64, ...tls });
    const dir = tempDir('pool-certs');
    const pem = servingPki(dir, 'pool');
    bad = await startMisbehaving(pem, frontProxyCa);
    const echoPem = servingPki(dir, 'echo');
    echo = await startEcho(echoPem, frontProxyCa);
    await register(gh.admin, { service: 'pool', port: bad.port, group: GROUP, caPem: pem.ca });
    await register(gh.admin, { service: 'echo', port: echo.port, group: 'echo.gatehouse.dev', caPem: echoPem.ca });
    await waitAvailable(gh.admin, `v1.${GROUP}`, 'True');
    await waitAvailable(gh.admin, 'v1.echo.gatehouse.dev', 'True');
  });
  after(async () => {
    if (process.env.AGG_DEBUG) process.stderr.write(`gateway stderr:\n${gh?.proc.stderr}\n`);
    agent?.destroy();
    await bad?.close();
    await echo?.close();
    await stopAll();
  });

  tests({
    get gh() {
      return gh;
    },
    get bad() {
      return bad;
    },
    get tls() {
      return tls;
    },
    call,
  });
}

interface Fixtures {
  readonly gh: Gatehouse;
  readonly bad: Misbehaving;
  readonly tls: { ca: string; cert: string; key: string };
  call(
    method: string,
    path: string,
    o?: { write?: (req: ReturnType<typeof request>) => void; onResponse?: (res: IncomingMessage) => void; headers?: Record<string, string> },
  ): Promise<Answer>;
}

// The default --request-timeout (60 s): streaming on a loaded machine must not meet a deadline.
describe('the pooled aggregation proxy streams', { timeout: 240_000 }, () => {
  withGateway([], (f) => {
    const { call } = f;
    it('streams 16 concurrent request bodies: each chunk reaches the backend before the client sends the next', async () => {
      const CHUNKS = 8,
        SIZE = 48 * 1024;
      const one = (n: number): Promise<Answer> =>
        call('POST', `${THINGS}/upload?id=up${n}`, {
          headers: { 'content-type': 'application/octet-stream' },
          write: (req) => {
            void (async () => {
              for (let i = 0; i < CHUNKS; i++) {
                req.write(chunkOf(`up${n}`, i, SIZE));
                // Only a streamed body gets here: a proxy that waited for the whole body would never pass this.
                await eventually(`chunk ${i} of upload ${n} reached the backend`, () => (f.bad.received.get(`up${n}`) ?? 0) >= (i + 1) * SIZE);
              }
              req.end();
            })();
          },
        });
      const answers = await Promise.all(Array.from({ length: 16 }, (_, n) => one(n)));
      answers.forEach((a, n) => {
        assert.equal(a.status, 200, a.body.toString());
        const want = createHash('sha256');
        for (let i = 0; i < CHUNKS; i++) want.update(chunkOf(`up${n}`, i, SIZE));
        assert.deepEqual(JSON.parse(a.body.toString()), { bytes: CHUNKS * SIZE, sha256: want.digest('hex') });
      });
    });

    it('streams 16 concurrent answers: each chunk reaches the client before the backend writes the next', async () => {
      const CHUNKS = 6,
        SIZE = 32 * 1024;
      const one = (n: number): Promise<Answer> => {
        const id = `down${n}`;
        let got = 0;
        return call('GET', `${THINGS}/gated?id=${id}&chunks=${CHUNKS}&size=${SIZE}`, {
          onResponse: (res) => {
            res.on('data', (c: Buffer) => {
              const before = Math.floor(got / SIZE);
              got += c.length;
              // A whole chunk arrived: the backend may write the next one (a proxy that buffered the answer would stall here).
              if (Math.floor(got / SIZE) > before && got < CHUNKS * SIZE) f.bad.release.get(id)?.();
            });
          },
        });
      };
      const pending = Array.from({ length: 16 }, (_, n) => one(n));
      await eventually('every gated answer started', () => Array.from({ length: 16 }, (_, n) => f.bad.release.has(`down${n}`)).every(Boolean));
      for (let n = 0; n < 16; n++) f.bad.release.get(`down${n}`)!();
      const answers = await Promise.all(pending);
      answers.forEach((a, n) => {
        assert.equal(a.status, 200);
        assert.ok(a.complete);
        assert.ok(a.body.equals(Buffer.concat(Array.from({ length: CHUNKS }, (_, i) => chunkOf(`down${n}`, i, SIZE)))), `answer ${n} intact`);
      });
    });

    it('a client that stops reading holds the backend back (backpressure through the pool), and gets every byte when it reads again', async () => {
      const TOTAL = 64 * 1024 * 1024;
      let res!: IncomingMessage;
      // As a watch (long-running): no deadline cuts it, however slow the machine.
      const done = call('GET', `${THINGS}?watch=1&id=big1&bytes=${TOTAL}`, {
        onResponse: (r) => {
          res = r;
          r.pause();
        },
      });
      await eventually('the answer started', () => res !== undefined);
      // Wait until the backend can write no more (its count stops moving).
      let last = -1;
      for (let i = 0; i < 100; i++) {
        const now = f.bad.written.get('big1') ?? 0;
        if (now === last && now > 0) break;
        last = now;
        await sleep(200);
      }
      const held = f.bad.written.get('big1') ?? 0;
      assert.ok(held < TOTAL / 2, `the backend wrote ${held} of ${TOTAL} bytes while the client read none`);
      res.resume();
      const a = await done;
      assert.equal(a.status, 200);
      assert.equal(a.body.length, TOTAL);
      const want = createHash('sha256');
      for (let sent = 0, i = 0; sent < TOTAL; i++) {
        const c = chunkOf('big1', i, Math.min(64 * 1024, TOTAL - sent));
        want.update(c);
        sent += c.length;
      }
      assert.equal(createHash('sha256').update(a.body).digest('hex'), want.digest('hex'));
    });

    it('upgrades (SPDY and websocket) and watches pass while pooled requests run', async () => {
      const up = (proto: string, n: number) =>
        rawExchange({ port: f.gh.port, ...f.tls }, `GET ${THINGS}/t${n}/exec HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: ${proto}\r\n\r\n`, {
          done: (text, write) => {
            if (text.includes(`hello-${n}`)) return true;
            if (text.startsWith('HTTP/1.1 101') && text.includes('\r\n\r\n')) write(`hello-${n}`);
            return false;
          },
        });
      const w = await f.gh.admin.watch(`${THINGS}?watch=1&id=w1`);
      assert.equal(w.status, 200);
      await eventually('the watch reached the backend', () => f.bad.watches.has('w1'));
      const [ups, gets] = await Promise.all([
        Promise.all(Array.from({ length: 8 }, (_, n) => up(n % 2 ? 'SPDY/3.1' : 'websocket', n))),
        Promise.all(Array.from({ length: 32 }, (_, n) => call('GET', `${THINGS}/g${n}`))),
      ]);
      ups.forEach((u, n) => {
        assert.match(u.text, /^HTTP\/1\.1 101/, u.text);
        assert.ok(u.text.endsWith(`hello-${n}`), u.text);
      });
      for (const [n, g] of gets.entries()) {
        assert.equal(g.status, 200);
        assert.equal(JSON.parse(g.body.toString()).path, `${THINGS}/g${n}`);
      }
      // The watch still carries events.
      f.bad.watches.get('w1')!.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Thing', metadata: { name: 'e0' } } })}\n`);
      assert.equal((await w.next(10_000))?.object.metadata.name, 'e0');
      w.stop();
    });

    it("a client that closes its watch ends the backend's request: no backend is left writing to an abandoned watch", async () => {
      const w = await f.gh.admin.watch(`${THINGS}?watch=1&id=w3`);
      assert.equal(w.status, 200);
      await eventually('the watch reached the backend', () => f.bad.watches.has('w3'));
      const backendSide = f.bad.watches.get('w3')!;
      let closed = false;
      backendSide.once('close', () => {
        closed = true;
      });
      w.stop();
      await eventually("the backend's side of the watch closed", () => closed);
    });
  });
});

// A short --request-timeout (3 s), so a stall is seen soon.
describe('the pooled aggregation proxy with a misbehaving backend', { timeout: 240_000 }, () => {
  withGateway(['--request-timeout=3s'], (f) => {
    const { call } = f;
    it("a backend that resets, closes or answers garbage: 502 naming the APIService; half an answer: the client's connection is cut; the pool recovers and the other backend never notices", async () => {
      let otherOk = 0,
        otherBad = 0,
        stop = false;
      const other = (async () => {
        while (!stop) {
          const r = await call('GET', `${ECHOES}/steady`);
          if (r.status === 200) otherOk++;
          else otherBad++;
        }
      })();
      try {
        for (const what of ['reset', 'close', 'garbage']) {
          for (let i = 0; i < 3; i++) {
            const r = await call('GET', `${THINGS}/${what}`);
            assert.equal(r.status, 502, `${what}: ${r.status} ${r.body.toString()}`);
            const s = JSON.parse(r.body.toString());
            assert.equal(s.kind, 'Status');
            assert.equal(s.code, 502);
            assert.match(s.message, /APIService "v1\.pool\.gatehouse\.dev" \(gatehouse-samples\/pool\)/);
            const next = await call('GET', `${THINGS}/after-${what}`);
            assert.equal(next.status, 200, `after ${what}: ${next.body.toString()}`);
          }
        }
        for (const what of ['half', 'halfchunked']) {
          const r = await call('GET', `${THINGS}/${what}`);
          assert.equal(r.status, 200);
          assert.equal(r.complete, false, `${what}: a cut answer must not look complete`);
          const next = await call('GET', `${THINGS}/after-${what}`);
          assert.equal(next.status, 200);
        }
        // Concurrent failures and successes on the same pool.
        const mixed = await Promise.all(Array.from({ length: 24 }, (_, n) => call('GET', `${THINGS}/${n % 3 === 0 ? 'reset' : `ok${n}`}`)));
        mixed.forEach((r, n) => assert.equal(r.status, n % 3 === 0 ? 502 : 200, `mixed ${n}`));
      } finally {
        stop = true;
        await other;
      }
      assert.ok(otherOk > 0);
      assert.equal(otherBad, 0, 'the other backend answered every request');
      // The probes saw a healthy backend: still Available.
      const c = await waitAvailable(f.gh.admin, `v1.${GROUP}`, 'True');
      assert.equal(c.reason, 'Passed');
    });

    it('a watch outlives --request-timeout: its events may be far apart (no body timeout)', async () => {
      const w = await f.gh.admin.watch(`${THINGS}?watch=1&id=w2`);
      assert.equal(w.status, 200);
      await eventually('the watch reached the backend', () => f.bad.watches.has('w2'));
      await sleep(3500);
      f.bad.watches.get('w2')!.write(`${JSON.stringify({ type: 'ADDED', object: { kind: 'Thing', metadata: { name: 'late' } } })}\n`);
      assert.equal((await w.next(10_000))?.object.metadata.name, 'late');
      w.stop();
    });

    it('a stalled backend: 504 naming the APIService at --request-timeout, also for a watch whose headers never come; the next request is served', async () => {
      const r = await call('GET', `${THINGS}/hang`);
      assert.equal(r.status, 504);
      assert.match(JSON.parse(r.body.toString()).message, /no answer from APIService "v1\.pool\.gatehouse\.dev" \(gatehouse-samples\/pool\) within 3s/);
      // A watch has no deadline: the pool's headers timeout (--request-timeout) is what ends it.
      const w = await call('GET', `${THINGS}?watch=1&id=hang`);
      assert.equal(w.status, 504, w.body.toString());
      assert.match(JSON.parse(w.body.toString()).message, /no answer from APIService "v1\.pool\.gatehouse\.dev" \(gatehouse-samples\/pool\) within 3s/);
      const next = await call('GET', `${THINGS}/after-hang`);
      assert.equal(next.status, 200);
    });
  });
});
