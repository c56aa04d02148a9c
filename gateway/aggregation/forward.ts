// Forwards one HTTP request to a backend over a keep-alive agent and streams
// the answer back: hop-by-hop headers dropped both ways, the caller's headers
// (identity) set, the body streamed (or the buffered one admission read).
// Until the backend answers, a failure rejects and the caller writes its
// Status (503); once the answer started, a failure cuts the connection. The
// client going away aborts the backend request (a watch ends upstream too).
//
// A backend's redirect is never followed nor relayed when the caller says
// so (`rejectRedirects`, every path but the sidecar's own upstream): the
// client would send its next request, credentials and all, wherever the
// backend chose (CVE-2022-3172); kube-aggregator answers 502 instead.
//
// A backend may answer before it has read the whole body (a 413 mid-upload):
// the answer is relayed, the rest of the body is no longer forwarded, and the
// client's connection closes after the answer without a reset that would
// lose it (lib/http/linger.ts, as for the gateway's own 413); the backend
// connection, holding half a body, is not reused.
//
// Upgrades (exec, attach, port-forward, websockets) are forwarded only by
// callers that authorized them first, on a fresh connection; if the backend
// answers anything but 101, that answer is relayed (a redirect is a 502) and
// both connections are closed, so no half-upgraded socket stays open to carry
// further requests (CVE-2018-1002105, CVE-2020-8559).
//
// With tracing on, each forwarded request is a client span (for a recorded
// request) and carries our traceparent in place of the client's.
import { request as httpRequest, type Agent as HttpAgent, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request as httpsRequest, type Agent as HttpsAgent, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { badGateway, type StatusError } from '../../lib/api/status.js';
import { setOwn } from '../../lib/api/own.js';
import { clientStatus, outboundCall, traceOf, tracingEnabled } from '../../lib/tracing/span.js';
import { closeAfterAnswer } from '../../lib/http/linger.js';
import { writeHeadWith } from '../../lib/http/carried.js';
import type { Cancellation } from '../pipeline/deadline.js';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** A header (lowercase name) that belongs to one connection and is never forwarded. */
export function isHopByHop(lowercaseName: string): boolean {
  return HOP_BY_HOP.has(lowercaseName);
}

export interface ForwardTarget {
  readonly protocol: 'https:' | 'http:';
  readonly host: string;
  readonly port: number | string;
  readonly agent: HttpsAgent | HttpAgent;
  /** Prepended to the request path (an upstream URL with a path). */
  readonly pathPrefix?: string;
}

export interface ForwardOptions {
  /** Set on the outgoing request, replacing what the client sent under those names. */
  readonly headers: OutgoingHttpHeaders;
  /** The request body when it was already read (admission); else the request streams. */
  readonly body?: Buffer;
  /** Inactivity limit; absent for long-running requests. */
  readonly timeoutMs?: number;
  /** Send the answer's headers at once (a watch may have no event for a while). */
  readonly flushHeaders?: boolean;
  /** The request's deadline: when it passes the backend request is cut and the promise resolves; the caller has answered. */
  readonly cancel?: Cancellation;
  /** Answer a backend's 3xx (but 304) with a 502 instead of relaying it; the rejection is that StatusError. */
  readonly rejectRedirects?: boolean;
  /** Called once the backend's response headers are relayed. */
  readonly onHeaders?: () => void;
  /** What the backend is (`APIService v1.example.com`), named on the trace span. */
  readonly purpose?: string;
}

/** 304 answers a conditional request; every other 3xx sends the client elsewhere. */
export function isRedirect(code: number | undefined): boolean {
  return code !== undefined && code >= 300 && code < 400 && code !== 304;
}

/** kube-aggregator's words (handler_proxy with RejectForwardingRedirects). */
export function redirectRefused(): StatusError {
  return badGateway('the backend attempted to redirect this request, which is not permitted');
}

function responseHeaders(raw: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  return out;
}

function targetUrl(protocol: string, host: string, port: number | string | null | undefined, path: string): string {
  return `${protocol}//${host.includes(':') ? `[${host}]` : host}${port ? `:${port}` : ''}${path.split('?', 1)[0]}`;
}

export function targetAttributes(host: string, port: number | string | null | undefined, purpose: string | undefined): Record<string, string | number> {
  return { 'server.address': host, ...(port ? { 'server.port': Number(port) } : {}), ...(purpose ? { 'gatehouse.backend': purpose } : {}) };
}

export function forward(req: IncomingMessage, res: ServerResponse, t: ForwardTarget, o: ForwardOptions): Promise<void> {
  if (!tracingEnabled()) return send(req, res, t, o);
  const path = t.pathPrefix ? `${t.pathPrefix.replace(/\/$/, '')}${req.url ?? '/'}` : (req.url ?? '/');
  return outboundCall(
    traceOf(req),
    req.method ?? 'GET',
    targetUrl(t.protocol, t.host, t.port, path),
    targetAttributes(t.host, t.port, o.purpose),
    async (trace, span) => {
      await send(req, res, t, { ...o, headers: { ...o.headers, ...trace } });
      if (res.headersSent) clientStatus(span, res.statusCode);
    },
    req,
  );
}

function send(req: IncomingMessage, res: ServerResponse, t: ForwardTarget, o: ForwardOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const headers: OutgoingHttpHeaders = {};
    // HTTP/2 pseudo-headers (:path, :authority, …) are not headers to an HTTP/1.1 backend.
    // The client's header names, by own keys and written with setOwn: a `__proto__` header is a header.
    for (const k of Object.keys(req.headers)) if (!HOP_BY_HOP.has(k) && k[0] !== ':') setOwn(headers, k, req.headers[k]);
    if (headers['host'] === undefined && typeof req.headers[':authority'] === 'string') headers['host'] = req.headers[':authority'];
    for (const k in o.headers) headers[k.toLowerCase()] = o.headers[k];
    if (o.body) headers['content-length'] = o.body.length;
    let settled = false;
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      if (err) reject(err);
      else resolve();
    };
    const send = t.protocol === 'https:' ? httpsRequest : httpRequest;
    const out = send({
      host: t.host,
      port: t.port,
      method: req.method,
      headers,
      agent: t.agent,
      path: t.pathPrefix ? `${t.pathPrefix.replace(/\/$/, '')}${req.url ?? '/'}` : req.url,
      ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}),
    });
    out.on('timeout', () => out.destroy(new Error(`no answer within ${o.timeoutMs}ms`)));
    const cut = (): void => {
      out.destroy();
      settle();
    };
    if (o.cancel?.aborted) {
      cut();
      return;
    }
    o.cancel?.onAbort(cut);
    out.on('close', () => o.cancel?.offAbort(cut));
    /** The whole body reached the backend's socket. */
    let uploaded = false;
    out.on('finish', () => {
      uploaded = true;
    });
    /** The backend's whole answer was read (an upload cut after it is no failure). */
    let answered = false;
    out.on('error', (err) => {
      if (settled) return;
      if (!res.headersSent) {
        settle(err);
        return;
      }
      if (!answered) res.destroy();
      settle();
    });
    out.on('response', (back) => {
      // Answered already (the deadline passed): this answer has nowhere to go.
      if (settled || res.headersSent) {
        back.resume();
        out.destroy();
        return;
      }
      if (o.rejectRedirects && isRedirect(back.statusCode)) {
        // Its body is not read: the connection goes, not back to the pool.
        back.destroy();
        settle(redirectRefused());
        return;
      }
      // Before writeHead: an early answer marks the client's connection to close.
      if (!uploaded && !o.body) answeredEarly(req, res, out, back);
      // HTTP/2 has no reason phrase (Node warns when given one).
      if (req.httpVersionMajor === 1) writeHeadWith(res, back.statusCode ?? 502, responseHeaders(back.rawHeaders), back.statusMessage ?? '');
      else writeHeadWith(res, back.statusCode ?? 502, responseHeaders(back.rawHeaders));
      if (o.flushHeaders) res.flushHeaders();
      o.onHeaders?.();
      back.on('error', () => res.destroy());
      back.on('end', () => {
        answered = true;
      });
      back.pipe(res);
    });
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
      settle();
    });
    if (o.body) out.end(o.body);
    else req.pipe(out);
  });
}

/** The backend answered before the body was all sent: stop forwarding it, and close both connections once the answer is through. */
function answeredEarly(req: IncomingMessage, res: ServerResponse, out: ReturnType<typeof httpRequest>, back: IncomingMessage): void {
  req.unpipe(out);
  // HTTP/2 ends only this stream; an HTTP/1.1 client still sending must see the answer before its connection goes.
  if (req.httpVersionMajor === 1 && !req.complete) closeAfterAnswer(req, res);
  else req.resume();
  back.on('end', () => out.destroy());
}

export interface UpgradeTarget {
  readonly protocol: 'https:' | 'http:';
  /** Connection options (host, port, TLS); never pooled. */
  readonly options: RequestOptions;
}

/** Rejects only while nothing was written to the client's socket; afterwards failures close it. */
export function forwardUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  t: UpgradeTarget,
  o: { headers: OutgoingHttpHeaders; timeoutMs?: number; purpose?: string },
): Promise<void> {
  if (!tracingEnabled()) return sendUpgrade(req, socket, head, t, o);
  const host = t.options.host ?? t.options.hostname ?? 'localhost';
  return outboundCall(
    traceOf(req),
    req.method ?? 'GET',
    targetUrl(t.protocol, host, t.options.port, req.url ?? '/'),
    targetAttributes(host, t.options.port, o.purpose),
    (trace) => sendUpgrade(req, socket, head, t, { ...o, headers: { ...o.headers, ...trace } }),
    req,
  );
}

function sendUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  t: UpgradeTarget,
  o: { headers: OutgoingHttpHeaders; timeoutMs?: number },
): Promise<void> {
  const headers: OutgoingHttpHeaders = { ...req.headers };
  for (const k in o.headers) headers[k.toLowerCase()] = o.headers[k];
  return new Promise<void>((resolve, reject) => {
    let written = false;
    const send = t.protocol === 'https:' ? httpsRequest : httpRequest;
    const out = send({ ...t.options, method: req.method, path: req.url, headers, agent: false, ...(o.timeoutMs ? { timeout: o.timeoutMs } : {}) });
    const fail = (err: Error): void => {
      if (!written) reject(err);
      else socket.destroy();
    };
    out.on('timeout', () => out.destroy(new Error(`no answer within ${o.timeoutMs}ms`)));
    out.on('error', fail);
    socket.on('error', () => out.destroy());
    out.on('upgrade', (res, backend, backendHead) => {
      written = true;
      socket.write(statusLine(101, 'Switching Protocols', res.rawHeaders));
      if (backendHead.length > 0) socket.write(backendHead);
      if (head.length > 0) backend.write(head);
      backend.on('error', () => socket.destroy());
      socket.on('close', () => backend.destroy());
      backend.on('close', () => socket.destroy());
      backend.pipe(socket);
      socket.pipe(backend);
      resolve();
    });
    out.on('response', (res) => {
      if (isRedirect(res.statusCode)) {
        res.destroy();
        reject(redirectRefused());
        return;
      }
      // The backend refused the upgrade: relay its answer, then close both connections.
      written = true;
      socket.write(
        statusLine(res.statusCode ?? 502, res.statusMessage ?? '', [
          ...pairsWithout(res.rawHeaders, /^(connection|transfer-encoding|keep-alive|content-length)$/i),
          'Connection',
          'close',
        ]),
      );
      // What the client sends meanwhile is read and dropped: unread bytes would turn the close into a reset that can lose the answer.
      socket.on('data', () => undefined);
      const close = (): void => {
        res.destroy();
        // Flushed, then closed: a client that never closes its side cannot keep the socket.
        socket.end(() => socket.destroy());
        resolve();
      };
      res.on('data', (c: Buffer) => socket.write(c));
      res.on('end', close);
      res.on('error', () => {
        res.destroy();
        socket.destroy();
        resolve();
      });
    });
    out.end();
  });
}

function pairsWithout(raw: readonly string[], drop: RegExp): string[] {
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) if (!drop.test(raw[i]!)) out.push(raw[i]!, raw[i + 1]!);
  return out;
}

function statusLine(code: number, message: string, rawHeaders: readonly string[]): string {
  let s = `HTTP/1.1 ${code} ${message}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) s += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${s}\r\n`;
}
