// Responses ended at the end of their event-loop turn (lib/http/turnend.ts):
// fixed at once, sent together after the turn, in order, and never twice.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { newExchange } from '../../lib/http/exchange.js';
import { endThisTurn } from '../../lib/http/turnend.js';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    request({ port, path, host: '127.0.0.1', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('endThisTurn', () => {
  it('fixes the head at once and ends the response after the turn', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      endThisTurn(newExchange(req, res), 201, { 'Content-Type': 'text/plain', 'Content-Length': 2 }, 'ok');
      seen.push(`headersSent=${res.headersSent} ended=${res.writableEnded}`);
      setImmediate(() => seen.push(`after turn ended=${res.writableEnded}`));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const r = await get((server.address() as AddressInfo).port, '/');
      assert.deepEqual(r, { status: 201, body: 'ok' });
      assert.deepEqual(seen, ['headersSent=true ended=false', 'after turn ended=true']);
    } finally {
      server.close();
    }
  });

  it('ends every response of one turn, in the order they were queued, and skips destroyed ones', async () => {
    const ends: string[] = [];
    const fake = (name: string, destroyed = false) =>
      ({
        destroyed,
        writeHead() {
          return this;
        },
        end(body: string) {
          ends.push(`${name}:${body}`);
        },
      }) as unknown as ServerResponse;
    endThisTurn(newExchange({} as IncomingMessage, fake('a')), 200, {}, '1');
    endThisTurn(newExchange({} as IncomingMessage, fake('b', true)), 200, {}, '2');
    endThisTurn(newExchange({} as IncomingMessage, fake('c')), 200, {}, '3');
    assert.deepEqual(ends, []);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(ends, ['a:1', 'c:3']);
  });

  it('sends HEAD answers without a body', async () => {
    const server = createServer((req, res) => endThisTurn(newExchange(req, res), 200, { 'Content-Length': 5 }, req.method === 'HEAD' ? undefined : 'hello'));
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const port = (server.address() as AddressInfo).port;
      const head = await new Promise<number>((resolve, reject) => {
        request({ port, host: '127.0.0.1', method: 'HEAD', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
          .on('error', reject)
          .end();
      });
      assert.equal(head, 200);
      assert.deepEqual(await get(port, '/'), { status: 200, body: 'hello' });
    } finally {
      server.close();
    }
  });
});
