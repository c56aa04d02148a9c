// The baseline: a bare node:https server with Gatehouse's TLS settings
// (same certificate, requestCert against the same CA) that answers every
// request with a fixed small JSON body, and for watch, a raw fan-out loop:
// GET /watch holds a chunked response open; POST /fire writes one event line
// (built once) to every open response, then answers.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { memoryNow, serveCommands } from './procs.js';
import { readBody } from './body.js';

const [port, certFile, keyFile, caFile] = process.argv.slice(2);
const BODY = Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c1', namespace: 'bench' }, data: { a: 'b' } }));
const watchers = new Set<ServerResponse>();

function fixed(res: ServerResponse, code: number): void {
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': BODY.length }).end(BODY);
}

let rev = 0;
const server = createHttpsServer({
  cert: readFileSync(certFile!), key: readFileSync(keyFile!), ca: readFileSync(caFile!),
  requestCert: true, rejectUnauthorized: false, keepAliveTimeout: 65_000, minVersion: 'TLSv1.2',
}, (req, res) => {
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
      fixed(res, 201);
    });
    return;
  }
  if (req.method === 'POST') { void readBody(req).then(() => fixed(res, 201)); return; }
  fixed(res, 200);
});
server.on('tlsClientError', () => undefined);
server.listen(Number(port), '127.0.0.1', () => {
  serveCommands({ mem: () => memoryNow(), watchers: () => watchers.size });
});
