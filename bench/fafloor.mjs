// The floors under a forward-auth answer (bench/forwardauth.ts): one server
// per process, so each one's CPU per request is read from /proc. Each answers
// GET /gatehouse/forward-auth with the same 200 and headers as the bare
// server of sidecarrig.ts, over TLS with `requestCert` against the same CA:
//   https        node:https, the answer written in the request's own callback (the bare baseline)
//   h2compat     the front door's server: node:http2 createSecureServer with allowHTTP1 and
//                the front door's HTTP/1.1 settings (gateway/server/serving.ts), same answer
//   h2compat-async  the same, the answer written after the awaits a cached decision goes
//                through (an async chain of DEPTH awaits on resolved promises), the headers
//                read through req.headers and a Map lookup for the decision
// Started by bench/forwardauth.ts: `node bench/fafloor.mjs <variant> <port>` with the PEMs in
// CERT, KEY and CA; prints "up" when listening.
import { createServer as createHttps } from 'node:https';
import { createSecureServer } from 'node:http2';
import { fileURLToPath } from 'node:url';

const DEPTH = Number(process.env.DEPTH ?? 6);
const allowed = [
  'X-Remote-User',
  'bench-user',
  'X-Remote-Group',
  'bench',
  'X-Remote-Group',
  'system:authenticated',
  'X-Auth-Request-User',
  'bench-user',
  'X-Auth-Request-Groups',
  'bench,system:authenticated',
  'Cache-Control',
  'no-cache, private',
  'Content-Length',
  '0',
];
const sync = (req, res) => {
  req.resume();
  res.writeHead(200, allowed);
  res.end();
};
// bench-token: forwardauth.ts's client; cg-token: cg-sidecar.mjs's.
const decisions = new Map([
  ['bench-token-0123456789abcdef\0GET\0/api/v1/items', allowed],
  ['cg-token-0123456789abcdef\0GET\0/api/v1/items', allowed],
]);
async function step(n, req) {
  if (n === 0) {
    const h = req.headers;
    const token = (h.authorization ?? '').slice(7);
    return decisions.get(`${token}\0${h['x-original-method']}\0${(h['x-original-uri'] ?? '').split('?')[0]}`);
  }
  return await step(n - 1, req);
}
const later = (req, res) => {
  step(DEPTH, req).then((headers) => res.writeHead(headers ? 200 : 403, headers ?? []).end());
  req.resume();
};
/** The floor server of `variant`, not yet listening (bench/cg-sidecar.mjs FLOOR=<variant> runs one in its own process). */
export function floorServer(variant, { cert, key, ca }) {
  let server;
  if (variant === 'https') server = createHttps({ cert, key, ca, requestCert: true, rejectUnauthorized: true }, sync);
  else {
    server = createSecureServer(
      {
        cert,
        key,
        ca,
        allowHTTP1: true,
        requestCert: true,
        rejectUnauthorized: false,
        maxSessionMemory: 64,
        settings: { maxConcurrentStreams: 1000, maxHeaderListSize: (1 << 20) + 4096 },
      },
      variant === 'h2compat' ? sync : later,
    );
    Object.assign(server, { maxHeaderSize: (1 << 20) + 4096, keepAliveTimeout: 65_000, headersTimeout: 60_000, requestTimeout: 0 });
  }
  return server;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [variant, port] = [process.argv[2], Number(process.argv[3])];
  const { CERT: cert, KEY: key, CA: ca } = process.env;
  // SIGINT ends the process normally, so that `node --cpu-prof` writes its profile.
  process.on('SIGINT', () => process.exit(0));
  floorServer(variant, { cert, key, ca }).listen(port, '127.0.0.1', () => console.log('up'));
}
