// The floor of the monitoring bench's throughput row: the last scrape's
// exposition served as fixed bytes (gzipped once, when asked) by a process of
// its own, with the server's TLS settings, so Prometheus scraping it costs
// Prometheus what scraping Gatehouse does and costs the machine nothing else.
// Args: port, cert, key, CA, the exposition's file.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { gzipSync } from 'node:zlib';
import { serveCommands } from './procs.js';

const [port, certFile, keyFile, caFile, bodyFile] = process.argv.slice(2);
const PLAIN = readFileSync(bodyFile!);
const ZIPPED = gzipSync(PLAIN, { level: 1 });
const TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const server = createServer(
  {
    cert: readFileSync(certFile!),
    key: readFileSync(keyFile!),
    ca: readFileSync(caFile!),
    requestCert: true,
    rejectUnauthorized: false,
    minVersion: 'TLSv1.2',
  },
  (req, res) => {
    const gzip = String(req.headers['accept-encoding'] ?? '').includes('gzip');
    const body = gzip ? ZIPPED : PLAIN;
    res.writeHead(200, { 'Content-Type': TYPE, 'Content-Length': body.length, ...(gzip ? { 'Content-Encoding': 'gzip' } : {}) }).end(body);
  },
);
server.listen(Number(port), '127.0.0.1', () => serveCommands({}));
