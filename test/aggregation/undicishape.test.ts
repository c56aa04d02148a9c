// undicishape.ts: this undici still has the symbols the shaping needs (an
// upgrade that renames them fails here instead of silently costing the
// proxy), Clients made through `uniformClients` end with the properties
// they started with, in the same order, whatever connected or drained them
// first, and requests through such an Agent are answered as through a plain one.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientShape, uniformClients } from '../../gateway/aggregation/undicishape.js';
import { loadUndici } from '../../gateway/aggregation/undici.js';

/** The own symbol of `o` undici describes as `description`. */
function ownSymbol(o: object, description: string): symbol {
  const s = Object.getOwnPropertySymbols(o).find((x) => x.description === description);
  assert.ok(s, `no own symbol ${description}`);
  return s;
}

describe('uniformClients', () => {
  let server: Server;
  let origin: string;
  before(async () => {
    // Answers after a tick, so requests overlap and the pool opens several connections.
    server = createServer((req, res) => setTimeout(() => res.end(`${req.method} ${req.url}`), 5));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('finds undici’s symbols', () => {
    const s = clientShape();
    assert.ok(s, 'this undici no longer has kConnecting, kSocket or a Pool’s needDrain: undicishape.ts needs updating');
    assert.equal(s.connecting.description, 'connecting');
    assert.equal(s.socket.description, 'socket');
    assert.equal(s.poolNeedDrain.description, 'needDrain');
  });

  it('makes Pools whose Clients keep one property order through connecting, busy and idle', async () => {
    const pool = uniformClients(origin, {}) as InstanceType<ReturnType<typeof loadUndici>['Pool']>;
    try {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => pool.request({ path: `/p${i}`, method: 'GET' }).then(async (r) => `${r.statusCode} ${await r.body.text()}`)),
      );
      assert.deepEqual(
        answers,
        Array.from({ length: 12 }, (_, i) => `200 GET /p${i}`),
      );
      const clients = (pool as unknown as Record<symbol, object[]>)[ownSymbol(pool, 'clients')]!;
      assert.ok(clients.length > 1, `one connection only (${clients.length}): nothing tested`);
      const fresh = uniformClients(origin, { connections: 1 });
      const keys = Reflect.ownKeys(fresh);
      for (const c of clients) assert.deepEqual(Reflect.ownKeys(c), keys);
      await fresh.close();
    } finally {
      await pool.close();
    }
  });

  it('answers through an Agent as a plain one does', async () => {
    const { Agent } = loadUndici();
    const shaped = new Agent({ factory: uniformClients });
    const plain = new Agent();
    try {
      for (const a of [shaped, plain]) {
        const r = await a.request({ origin, path: '/x?y=1', method: 'GET' });
        assert.equal(r.statusCode, 200);
        assert.equal(await r.body.text(), 'GET /x?y=1');
      }
      const one = new Agent({ factory: uniformClients, connections: 1 });
      const r = await one.request({ origin, path: '/one', method: 'GET' });
      assert.equal(await r.body.text(), 'GET /one');
      await one.close();
    } finally {
      await Promise.all([shaped.close(), plain.close()]);
    }
  });
});
