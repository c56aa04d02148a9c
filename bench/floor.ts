// The design's floor for a create (bench/redis-stack.ts prints it beside the
// creates): a bare node:https server, with Gatehouse's TLS settings, that does
// only what any server of this design must do per create: read and parse the
// JSON body, give it a uid and a creation time, serialize it, run the same
// write script with a client made exactly like the store's (redisTarget:
// auto-pipelining, command timeout), answer the stamped JSON; and read the
// change feed back with blocking XREADs, parsing and keeping every entry, as each process
// of the design has to. No authentication, authorization, validation, field
// managers, admission, audit or watch cache: what Gatehouse adds is the gap
// between this row and its own.
//
// argv: port cert key ca redis-url prefix
import { randomUUID } from 'node:crypto';
import { redisTarget } from '../backends/core/store/redis-connect.js';
import { redisKeys } from '../backends/core/store/redis-keys.js';
import { runWrite } from '../backends/core/store/redis-scripts.js';
import { readEntry } from '../backends/core/store/redis-feed.js';
import { rfc3339 } from '../lib/api/meta.js';
import { serveCommands } from './procs.js';
import { readBody } from './body.js';
import { baselineServer } from './rig.js';

const [port, certFile, keyFile, caFile, url, prefix] = process.argv.slice(2);
const target = redisTarget(url!, 5000);
const client = target.make();
const blocking = target.make({ blocking: true });
const keys = redisKeys(prefix!);
const TYPE = 'core/configmaps/';
/** What the feed read keeps: the parsed object by key, as a watch cache would. */
const cache = new Map<string, unknown>();

async function readFeed(): Promise<void> {
  let at = '0-0';
  for (;;) {
    const reply = (await blocking.xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', keys.feed, at)) as [string, [string, string[]][]][] | null;
    for (const [id, raw] of reply?.[0]?.[1] ?? []) {
      at = id;
      const { key, json } = readEntry(id, raw);
      if (json !== undefined) cache.set(key, JSON.parse(json));
    }
  }
}

const server = baselineServer(certFile!, keyFile!, caFile!, (req, res) => {
  void readBody(req)
    .then(async (text) => {
      const obj = JSON.parse(text) as { metadata: Record<string, unknown> };
      const ns = String(obj.metadata['namespace'] ?? 'default');
      obj.metadata['uid'] = randomUUID();
      obj.metadata['creationTimestamp'] = rfc3339(Date.now());
      const reply = await runWrite(client, keys, TYPE, 'c', `${TYPE}${ns}/${String(obj.metadata['name'])}`, JSON.stringify(obj), undefined, Date.now());
      const code = reply[0] === 'ok' ? 201 : 409;
      if (reply[0] === 'ok') obj.metadata['resourceVersion'] = String(reply[1]);
      const out = Buffer.from(JSON.stringify(obj));
      res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': out.length }).end(out);
    })
    .catch((err: unknown) => {
      res.writeHead(503).end(String(err));
    });
});
await Promise.all([client.connect(), blocking.connect()]);
server.listen(Number(port), '127.0.0.1', () => {
  readFeed().catch((err: unknown) => {
    console.error('floor: the feed read failed:', err);
    process.exit(1);
  });
  serveCommands({ cached: () => cache.size });
});
