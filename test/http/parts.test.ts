// sendParts on a real node:http server: a body above STREAM_MIN goes out in
// several writes that wait for the socket to drain (the client stops reading
// for a while), arrives whole and in order; a small one is one write.
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newExchange } from '../../lib/http/exchange.js';
import { CHUNK, SCRATCH_MIN, STREAM_MIN, pagePool, sendParts } from '../../lib/http/parts.js';

function partsOf(total: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0, n = 0; n < total; i++) {
    const b = Buffer.from(`{"i":${i},"pad":"${'ü'.repeat(i % 300)}"},`);
    parts.push(b);
    n += b.length;
  }
  return parts;
}

const servers: Array<{ close(): void }> = [];
after(() => {
  for (const s of servers) s.close();
});

/** Serves `parts` with sendParts, counting the writes made on the response. */
async function serve(parts: Buffer[]): Promise<{ port: number; writes: () => number; drains: () => number }> {
  let writes = 0;
  let drains = 0;
  const server = createServer((req, res: ServerResponse) => {
    const write = res.write.bind(res);
    const end = res.end.bind(res);
    res.write = ((chunk: Buffer) => {
      writes++;
      return write(chunk);
    }) as typeof res.write;
    res.end = ((chunk?: Buffer) => {
      if (chunk) writes++;
      return end(chunk);
    }) as typeof res.end;
    res.on('drain', () => drains++);
    sendParts(
      newExchange(req, res),
      200,
      'application/json',
      parts,
      parts.reduce((n, p) => n + p.length, 0),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { port: (server.address() as AddressInfo).port, writes: () => writes, drains: () => drains };
}

/** GETs the body; with `until`, stops reading after the first chunk until it is true. */
function get(port: number, until?: () => boolean): Promise<{ body: Buffer; length: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/' }, (res) => {
      const chunks: Buffer[] = [];
      let paused = false;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (until && !paused) {
          paused = true;
          res.pause();
          // Resume when the server wrote more, or after a while if the kernel's buffers are full first.
          let rounds = 0;
          const poll = setInterval(() => {
            if (until() || ++rounds > 40) {
              clearInterval(poll);
              res.resume();
            }
          }, 5);
        }
      });
      res.on('end', () => resolve({ body: Buffer.concat(chunks), length: Number(res.headers['content-length']) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** `count` different pages of about `size` bytes (each tagged with its index), and a server that answers the n-th request of a round with page n. */
async function pagesServer(
  count: number,
  size: number,
  tag: string,
  endLate = false,
): Promise<{ pages: Buffer[][]; wants: Buffer[]; port: number; round: () => void }> {
  const pages = Array.from({ length: count }, (_, k) => partsOf(size + k * 997).map((b) => Buffer.from(b.toString().replace('{"i"', `{"${tag}${k}"`))));
  let next = 0;
  const server = createServer((req, res) => {
    const parts = pages[next++ % pages.length]!;
    if (endLate) {
      const end = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
      res.end = ((...a: unknown[]) => {
        setTimeout(() => end(...a), 20);
        return res;
      }) as typeof res.end;
    }
    sendParts(
      newExchange(req, res),
      200,
      'application/json',
      parts,
      parts.reduce((n, p) => n + p.length, 0),
    );
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    pages,
    wants: pages.map((p) => Buffer.concat(p)),
    port: (server.address() as AddressInfo).port,
    round: () => {
      next = 0;
    },
  };
}

describe('sendParts', () => {
  it('streams a large body in CHUNK-sized writes, waiting for drain, whole and in order', async () => {
    const parts = partsOf(STREAM_MIN * 8);
    const want = Buffer.concat(parts);
    const s = await serve(parts);
    // The reader stops until the server has waited for a drain: the socket's buffer filled.
    const r = await get(s.port, () => s.writes() > 1);
    assert.equal(r.length, want.length);
    assert.ok(r.body.equals(want), 'the body arrives whole and in order');
    assert.ok(s.writes() >= Math.floor(want.length / CHUNK), `${s.writes()} writes for ${want.length} bytes`);
    assert.ok(s.drains() > 0, 'the server waited for the socket to drain');
  });

  it('sends a body below STREAM_MIN as one write', async () => {
    const parts = partsOf(STREAM_MIN / 4);
    const want = Buffer.concat(parts);
    const s = await serve(parts);
    const r = await get(s.port);
    assert.ok(r.body.equals(want));
    assert.equal(r.length, want.length);
    assert.equal(s.writes(), 1);
  });

  it('joins mid-size pages into pooled buffers that no answer in flight shares, and reuses them once answers close', async () => {
    // 24 different pages at once, each answer ended 20 ms late (as a socket that takes its bytes late):
    // were a buffer given back before its answer closed, a later page would overwrite one not yet sent.
    const { pages, wants, port, round: restart } = await pagesServer(24, SCRATCH_MIN * 4, 'p', true);
    const before = { ...pagePool.stats };
    const round = async () => {
      restart();
      const got = await Promise.all(pages.map(() => get(port)));
      got.forEach((r, k) => assert.ok(r.body.equals(wants[k]!), `page ${k} arrived as it was sent`));
    };
    await round();
    const first = { made: pagePool.stats.made - before.made, reused: pagePool.stats.reused - before.reused };
    assert.equal(first.made + first.reused, pages.length, 'each page joined in a pooled buffer');
    await new Promise((r) => setImmediate(r));
    await round();
    assert.ok(pagePool.stats.reused - before.reused - first.reused > 0, 'the second round reused buffers given back');
  });

  it('streams pages past STREAM_MIN in pooled chunks that stay whole while slow readers hold them', async () => {
    // 6 large pages at once, each reader pausing: a chunk's buffer given back before the socket wrote it
    // (at write() rather than its callback) would be overwritten by another page's chunk while queued.
    // Pages larger than loopback's socket buffers, so written chunks wait in the socket for the reader.
    const { pages, wants, port, round: restart } = await pagesServer(6, STREAM_MIN * 16, 'q');
    const before = { ...pagePool.stats };
    for (let round = 0; round < 2; round++) {
      restart();
      const got = await Promise.all(pages.map(() => get(port, () => false)));
      got.forEach((r, k) => assert.ok(r.body.equals(wants[k]!), `round ${round}: page ${k} arrived as it was sent`));
    }
    assert.ok(pagePool.stats.reused - before.reused > 0, 'chunks reused buffers given back');
  });
});
