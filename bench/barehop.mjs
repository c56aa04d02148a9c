// The bare undici hop, the floor of the proxy targets: HTTPS in,
// an undici Agent out to the backend with the gateway's client certificate,
// the client's headers copied (hop-by-hop ones dropped both ways), the body
// streamed with backpressure, the backend request cut when the client goes
// away before the answer's end (as the gateway's), nothing else. bench/aggregation.ts runs it as a
// process (`bare-undici` mode); bench/cg-proxy.mjs runs it in its own process
// (HOP=undici) beside the gateway with the same client. The bare HTTP/2 hop
// (`startBareH2Hop`, node:http2 out) is the floor of proxying to HTTP/2
// backends (`bare-h2` mode of bench/aggregation.ts).
import { createServer } from 'node:https';
import { Agent } from 'undici';

/** Listens on `port` (0: any) of 127.0.0.1; resolves to the port. */
export async function startBareUndiciHop({ port = 0, cert, key, backend, addHeaders = [] }) {
  const agent = new Agent({ connect: { ca: backend.ca, cert: backend.cert, key: backend.key, servername: backend.servername }, keepAliveTimeout: 65_000 });
  const origin = `https://127.0.0.1:${backend.port}`;
  const server = createServer({ cert, key, keepAliveTimeout: 65_000 }, (req, res) => {
    const headers = [...addHeaders];
    for (const k of Object.keys(req.headers)) if (k !== 'connection' && k !== 'keep-alive') headers.push(k, req.headers[k]);
    const watch = req.url?.includes('watch=') === true;
    const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
    let resume;
    let abort;
    let done = false;
    // A client gone before the answer's end (a closed watch) cuts the backend request, as the gateway does:
    // else the backend keeps serving it, and every later round of a bench pays for the abandoned watches.
    res.on('close', () => {
      if (!done) abort?.();
    });
    agent.dispatch(
      { origin, path: req.url ?? '/', method: req.method ?? 'GET', headers, body: hasBody ? req : null },
      {
        onConnect(a) {
          abort = a;
        },
        onHeaders(code, raw, r) {
          const out = [];
          for (let i = 0; i + 1 < raw.length; i += 2) {
            const name = raw[i].toString('latin1');
            const lower = name.toLowerCase();
            if (lower !== 'connection' && lower !== 'keep-alive' && lower !== 'transfer-encoding') out.push(name, raw[i + 1].toString('latin1'));
          }
          res.writeHead(code, out);
          if (watch) res.flushHeaders();
          resume = r;
          return true;
        },
        onData(chunk) {
          if (res.write(chunk)) return true;
          res.once('drain', resume);
          return false;
        },
        onComplete() {
          done = true;
          res.end();
        },
        onError() {
          done = true;
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        },
      },
    );
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return server.address().port;
}

/**
 * The floor of the HTTP/2 proxy target: HTTPS (HTTP/1.1) in, one node:http2
 * session out to the backend (ALPN h2, the gateway's client certificate),
 * every request a stream of it; headers copied (connection-specific ones
 * dropped, Host as :authority, `addHeaders` pairs set), the answer's headers and body relayed with
 * backpressure, nothing else.
 */
export async function startBareH2Hop({ port = 0, cert, key, backend, addHeaders = [] }) {
  const { connect, constants } = await import('node:http2');
  let session;
  const sessionNow = () => {
    if (session && !session.closed && !session.destroyed) return session;
    session = connect(`https://127.0.0.1:${backend.port}`, { ca: backend.ca, cert: backend.cert, key: backend.key, servername: backend.servername });
    session.on('error', () => undefined);
    // A session told to go away takes no new streams: the next request opens another.
    const mine = session;
    mine.on('goaway', () => {
      if (session === mine) session = undefined;
    });
    return session;
  };
  const server = createServer({ cert, key, keepAliveTimeout: 65_000 }, (req, res) => {
    const headers = { ':method': req.method ?? 'GET', ':path': req.url ?? '/', ':authority': req.headers.host ?? 'localhost' };
    for (const k of Object.keys(req.headers))
      if (k !== 'connection' && k !== 'keep-alive' && k !== 'host' && k !== 'transfer-encoding') headers[k] = req.headers[k];
    for (let i = 0; i + 1 < addHeaders.length; i += 2) headers[addHeaders[i]] = addHeaders[i + 1];
    const hasBody = req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0';
    const watch = req.url?.includes('watch=') === true;
    const s = sessionNow().request(headers, { endStream: !hasBody });
    if (hasBody) req.pipe(s);
    s.on('response', (h) => {
      const out = [];
      for (const k of Object.keys(h)) if (k[0] !== ':') out.push(k, h[k]);
      res.writeHead(h[':status'], out);
      if (watch) res.flushHeaders();
      s.pipe(res);
    });
    s.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // Only an answer cut short is reset: a RST_STREAM after every complete answer trips the backend's rapid-reset
    // limit (nghttp2's, 1,000 then 33/s), which ends the session with GOAWAY INTERNAL_ERROR and fails its streams.
    let ended = false;
    s.once('end', () => {
      ended = true;
    });
    res.on('close', () => {
      if (!ended && !s.closed) s.close(constants.NGHTTP2_CANCEL);
    });
  });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  return server.address().port;
}
