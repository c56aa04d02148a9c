// An upstream that speaks only h2c (HTTP/2 without TLS, such as a gRPC server
// in insecure mode), kube-rbac-proxy's --upstream-force-h2c: one HTTP/2
// session to it, opened when first needed and again after it ends, each
// request a stream. The rules are the other forwarders' (aggregation/
// forwardrules.ts): hop-by-hop headers never cross, the client's identity
// headers and credentials are dropped and the sidecar's set, the upstream
// URL's path prefixes the request's. Loopback only (checked at start): h2c
// carries identity in clear. Upgrades do not exist in HTTP/2: refused 400.
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { badRequest, StatusError } from '../../lib/api/status.js';
import { ownValue, setOwn } from '../../lib/api/own.js';
import { h2RequestOptions } from '../../lib/http/h2request.js';
import type { RequestContext } from '../pipeline/context.js';
import { backendPath, isHopByHop } from '../aggregation/forwardrules.js';
import type { Upstream } from './upstream.js';

const { HTTP2_HEADER_METHOD, HTTP2_HEADER_PATH, HTTP2_HEADER_AUTHORITY, HTTP2_HEADER_SCHEME, HTTP2_HEADER_STATUS } = constants;

export function h2cUpstream(
  url: string,
  drop: (name: string) => boolean,
  identity: (ctx: RequestContext) => readonly string[],
  log: (msg: string) => void,
): Upstream {
  const u = new URL(url);
  const prefix = u.pathname !== '/' ? u.pathname : undefined;
  let session: ClientHttp2Session | undefined;
  const open = new Set<{ close(code?: number): void }>();
  const sessionOf = (): ClientHttp2Session => {
    if (session && !session.closed && !session.destroyed) return session;
    const s = connect(u.origin);
    s.on('error', (err) => log(`sidecar: h2c session to ${url} failed: ${err.message}`));
    s.once('close', () => {
      if (session === s) session = undefined;
    });
    s.unref();
    session = s;
    return s;
  };
  const failed = (err: Error): StatusError => {
    log(`sidecar: h2c proxy to ${url} failed: ${err.message}`);
    return new StatusError(502, 'InternalError', `error trying to reach the upstream: ${err.message}`);
  };

  const dispatch = (ctx: RequestContext, withIdentity: boolean): Promise<void> => {
    if (ctx.upgrade) return Promise.reject(badRequest('an h2c upstream takes no upgrade requests'));
    const { req, res } = ctx;
    const headers: OutgoingHttpHeaders = {
      [HTTP2_HEADER_METHOD]: req.method ?? 'GET',
      [HTTP2_HEADER_PATH]: backendPath(prefix, req.url),
      [HTTP2_HEADER_AUTHORITY]: u.host,
      [HTTP2_HEADER_SCHEME]: 'http',
    };
    const h = req.headers;
    for (const k of Object.keys(h)) {
      if (k[0] === ':' || k === 'host' || isHopByHop(k) || drop(k)) continue;
      // Header names are the client's: a `__proto__` header is a header.
      setOwn(headers, k, h[k]);
    }
    // gRPC asks for trailers with `te: trailers`, the one TE value HTTP/2 allows.
    if (h['te'] === 'trailers') headers['te'] = 'trailers';
    const set = withIdentity ? identity(ctx) : [];
    for (let i = 0; i + 1 < set.length; i += 2) {
      const k = set[i]!.toLowerCase();
      const prev = ownValue(headers, k) as string | string[] | number | undefined;
      setOwn(headers, k, prev === undefined ? set[i + 1]! : [...(Array.isArray(prev) ? prev : [String(prev)]), set[i + 1]!]);
    }
    ctx.waitingOn = 'the upstream';
    return new Promise<void>((resolve, reject) => {
      let stream;
      try {
        stream = sessionOf().request(headers, h2RequestOptions(false));
      } catch (err) {
        reject(failed(err as Error));
        return;
      }
      open.add(stream);
      const cancel = () => stream.close(constants.NGHTTP2_CANCEL);
      ctx.cancel.onAbort(cancel);
      let answered = false;
      stream.on('response', (rh: IncomingHttpHeaders) => {
        answered = true;
        const out: Record<string, string | string[]> = {};
        for (const k of Object.keys(rh)) {
          const v = rh[k];
          if (k[0] === ':' || isHopByHop(k) || v === undefined) continue;
          setOwn(out, k, v);
        }
        res.writeHead(Number(rh[HTTP2_HEADER_STATUS] ?? 502), out);
        stream.pipe(res);
      });
      // gRPC's status travels in trailers: relayed as HTTP/1.1 trailers when the client can take them.
      stream.on('trailers', (t: IncomingHttpHeaders) => {
        const out: Record<string, string> = {};
        for (const k of Object.keys(t)) if (k[0] !== ':' && typeof t[k] === 'string') setOwn(out, k, t[k]);
        if (Object.keys(out).length > 0 && !res.writableEnded) res.addTrailers(out);
      });
      stream.once('close', () => {
        open.delete(stream);
        ctx.cancel.offAbort(cancel);
        if (answered) resolve();
        else reject(failed(new Error(`the stream closed before an answer (code ${stream.rstCode ?? 'none'})`)));
      });
      stream.on('error', (err) => {
        if (answered) res.destroy(err);
      });
      if (ctx.body) stream.end(ctx.body);
      else req.pipe(stream);
    });
  };
  return {
    url,
    dispatch,
    closeLongRunning: () => {
      for (const s of open) s.close(constants.NGHTTP2_CANCEL);
    },
    close: () => session?.close(),
  };
}
