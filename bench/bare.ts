// The baseline: a bare node:https server with Gatehouse's TLS settings
// (same certificate, requestCert against the same CA) that answers every
// request with a fixed small JSON body, and for watch, a raw fan-out loop:
// GET /watch holds a chunked response open; POST /fire writes one event line
// (built once) to every open response, then answers. With a Redis URL and a
// stream key (5th and 6th arguments) the fan-out spans processes, the floor of
// the Redis watch row (bench/redis-stack.ts): POST /fire also appends the line
// to the stream (XADD) before answering, and every such process reads the
// stream (blocking XREAD on its own connection, as the Redis store's feed) and
// writes the lines of the others to its own watchers. With BARE_BODY=<file>
// in its environment every other GET is answered with that file's bytes (the
// floor of the LIST limit=500 row, bench/store-paths.ts: the same page, sent
// with nothing else to do).
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { heapSnapshot, memoryNow, serveCommands } from './procs.js';
import { readBody } from './body.js';
import { baselineServer } from './rig.js';
import { Redis } from 'ioredis';

const [port, certFile, keyFile, caFile, redisUrl, stream] = process.argv.slice(2);
const feed = redisUrl && stream ? { writer: new Redis(redisUrl), reader: new Redis(redisUrl), me: String(process.pid) } : undefined;
const PAGE = process.env['BARE_BODY'] ? readFileSync(process.env['BARE_BODY']) : undefined;
const BODY = Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c1', namespace: 'bench' }, data: { a: 'b' } }));
const watchers = new Set<ServerResponse>();

function fixed(res: ServerResponse, code: number): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': BODY.length }).end(BODY);
}

let rev = 0;
const server = baselineServer(certFile!, keyFile!, caFile!, (req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/watch')) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    watchers.add(res);
    res.on('close', () => watchers.delete(res));
    return;
  }
  if (req.method === 'POST' && req.url?.startsWith('/fire')) {
    void readBody(req).then((text) => {
      // What a store would hand the fan-out: the written object, stamped, serialized once.
      const obj = JSON.parse(text) as { metadata: Record<string, unknown> };
      obj.metadata['resourceVersion'] = String(++rev);
      const line = `{"type":"ADDED","object":${JSON.stringify(obj)}}\n`;
      for (const w of watchers) w.write(line);
      if (!feed) {
        fixed(res, 201);
        return;
      }
      void feed.writer.xadd(stream!, '*', 'o', feed.me, 'l', line).then(
        () => fixed(res, 201),
        () => fixed(res, 500),
      );
    });
    return;
  }
  if (req.method === 'POST') {
    void readBody(req).then(() => fixed(res, 201));
    return;
  }
  if (PAGE) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': PAGE.length }).end(PAGE);
    return;
  }
  fixed(res, 200);
});

/** The lines other processes appended, to this process's watchers, in stream order. */
async function follow(f: NonNullable<typeof feed>): Promise<void> {
  let last = '$';
  for (;;) {
    const reply = (await f.reader.xread('BLOCK', 0, 'STREAMS', stream!, last)) as [string, [string, string[]][]][] | null;
    for (const [, entries] of reply ?? []) {
      for (const [id, fields] of entries) {
        last = id;
        if (fields[1] !== f.me) for (const w of watchers) w.write(fields[3]!);
      }
    }
  }
}
if (feed) void follow(feed).catch(() => undefined);
server.listen(Number(port), '127.0.0.1', () => {
  serveCommands({ mem: () => memoryNow(), watchers: () => watchers.size, snapshot: (a: { file: string }) => heapSnapshot(a.file) });
});
