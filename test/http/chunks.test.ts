// A long-running answer's chunks written straight to its socket
// (lib/http/chunks.ts): the bytes on the wire are the chunked framing Node
// would write (lengths in bytes, not characters), the response still ends the
// body, the connection serves its next request, and an answer that does not
// hold its socket yet (pipelined) goes through the response instead.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { once } from 'node:events';
import { chunkFrame, chunkSink } from '../../lib/http/chunks.js';

/** Sends `raw` on one connection and collects what comes back until `done` says the bytes are complete. */
async function exchange(port: number, raw: string, done: (text: string) => boolean): Promise<string> {
  const s = connect(port, '127.0.0.1');
  await once(s, 'connect');
  let text = '';
  s.setEncoding('latin1');
  const complete = new Promise<void>((resolve, reject) => {
    s.on('data', (c: string) => {
      text += c;
      if (done(text)) resolve();
    });
    s.on('error', reject);
    s.on('close', () => resolve());
  });
  s.write(raw);
  await complete;
  s.destroy();
  return Buffer.from(text, 'latin1').toString('utf8');
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ port: number; close: () => void }> {
  const server = createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const body = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

describe('chunkSink', () => {
  it('frames each chunk by its bytes, skips empty ones, and leaves the end and the next request to the response', async () => {
    const line = Buffer.from('{"é":"😀"}\n', 'utf8');
    let viaResponse = 0;
    const srv = await serve((req, res) => {
      if (req.url === '/next') {
        res.end('next');
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.flushHeaders();
      const write = res.write;
      res.write = function (this: ServerResponse, ...a: unknown[]) {
        viaResponse++;
        return (write as (...x: unknown[]) => boolean).apply(this, a);
      } as typeof res.write;
      const sink = chunkSink(req, res);
      sink.write(line);
      sink.write('');
      sink.write(line);
      sink.write('ünï\n');
      setTimeout(() => res.end(), 5);
    });
    try {
      const text = await exchange(srv.port, 'GET /watch HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n', (t) => t.endsWith('next'));
      const [first, second] = text.split('HTTP/1.1 200 OK').slice(1);
      assert.equal(viaResponse, 0, 'the chunks went straight to the socket');
      assert.equal(body(first!), `e\r\n{"é":"😀"}\n\r\ne\r\n{"é":"😀"}\n\r\n6\r\nünï\n\r\n0\r\n\r\n`);
      assert.match(second!, /\r\n\r\nnext$/);
    } finally {
      srv.close();
    }
  });

  it('goes through the response while an earlier answer holds the socket (pipelined)', async () => {
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.flushHeaders();
      const sink = chunkSink(req, res);
      if (req.url === '/first') {
        sink.write('one\n');
        setTimeout(() => {
          sink.write('two\n');
          res.end();
        }, 20);
      } else {
        sink.write('second\n');
        res.end();
      }
    });
    try {
      const text = await exchange(
        srv.port,
        'GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n',
        (t) => t.split('0\r\n\r\n').length === 3,
      );
      const [first, second] = text.split('HTTP/1.1 200 OK').slice(1);
      assert.equal(body(first!), '4\r\none\n\r\n4\r\ntwo\n\r\n0\r\n\r\n');
      assert.equal(body(second!), '7\r\nsecond\n\r\n0\r\n\r\n');
    } finally {
      srv.close();
    }
  });

  it('writes nothing once the answer ended or its connection is gone', async () => {
    let sink: ReturnType<typeof chunkSink> | undefined;
    const srv = await serve((req, res) => {
      res.writeHead(200);
      res.flushHeaders();
      sink = chunkSink(req, res);
      sink.write('a\n');
      res.end();
      sink.write('late\n');
    });
    try {
      const text = await exchange(srv.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', () => false);
      assert.equal(body(text), '2\r\na\n\r\n0\r\n\r\n');
      assert.doesNotThrow(() => sink!.write('after close\n'));
    } finally {
      srv.close();
    }
  });

  it("sends a turn's chunks to the socket in one write, when the turn ends", async () => {
    const writes: number[] = []; // chunks per call of the socket's write or writev
    let sink: ReturnType<typeof chunkSink> | undefined;
    const srv = await serve((req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.flushHeaders();
      const socket = res.socket as unknown as { _write: (...a: unknown[]) => void; _writev: (chunks: unknown[], cb: unknown) => void };
      const one = socket._write.bind(socket);
      const many = socket._writev.bind(socket);
      socket._write = (...a: unknown[]) => {
        writes.push(1);
        one(...a);
      };
      socket._writev = (chunks: unknown[], cb: unknown) => {
        writes.push(chunks.length);
        many(chunks, cb);
      };
      sink = chunkSink(req, res);
      sink.write('a\n');
      sink.write('b\n');
      sink.write('c\n');
      assert.deepEqual(writes, [], 'nothing leaves before the turn ends');
      setImmediate(() => {
        assert.equal(writes.length, 1, 'one write for the whole turn');
        sink!.write('d\n');
        setTimeout(() => res.end(), 5);
      });
    });
    try {
      const text = await exchange(srv.port, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', () => false);
      assert.equal(body(text), '2\r\na\n\r\n2\r\nb\n\r\n2\r\nc\n\r\n2\r\nd\n\r\n0\r\n\r\n');
      assert.ok(writes[0]! >= 3, `the first write carried the turn's three chunks (${writes[0]})`);
      assert.equal(writes[1], 1, 'the next turn: its own write');
    } finally {
      srv.close();
    }
  });

  it('frames a shared line once', () => {
    const b = Buffer.from('x\n');
    assert.equal(chunkFrame(b), chunkFrame(b));
    assert.equal(chunkFrame(b).toString(), '2\r\nx\n\r\n');
  });
});
