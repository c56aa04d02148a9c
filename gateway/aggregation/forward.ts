// Forwards an upgrade request (exec, attach, port-forward, websockets) for
// every path that has one — an APIService, the sidecar's upstream — on a
// fresh connection: an upgraded or refused connection must never serve
// another request, which a pool would make it do. Only callers that
// authorized the request call this. If the backend answers anything but
// 101, that answer is relayed (a redirect is a 502, as for every forwarded
// request: forwardrules.ts) and both connections are closed, so no
// half-upgraded socket stays open to carry further requests
// (CVE-2018-1002105, CVE-2020-8559). Ordinary requests go through the pooled
// forwarder, poolforward.ts.
//
// With tracing on, each forwarded upgrade is a client span (for a recorded
// request) and carries our traceparent in place of the client's.
import type { IncomingMessage } from 'node:http';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { Duplex } from 'node:stream';
import { outboundCall, tracingEnabled, type Trace } from '../../lib/tracing/span.js';
import { isRedirect, redirectRefused, setsName, targetAttributes, targetUrl } from './forwardrules.js';

export interface UpgradeTarget {
  readonly protocol: 'https:' | 'http:';
  /** Connection options (host, port, TLS); never pooled. */
  readonly options: RequestOptions;
}

/** Rejects only while nothing was written to the client's socket; afterwards failures close it. */
export interface UpgradeOptions {
  /** Header pairs added to the request (identity), flat: name, value, name, value… */
  readonly set: readonly string[];
  /** Client header names (lowercase) never forwarded. */
  readonly drop: (name: string) => boolean;
  readonly timeoutMs?: number;
  /** What the backend is (`APIService v1.example.com`), named on the trace span. */
  readonly purpose?: string;
  /** The recorded request's trace (the call's CLIENT span hangs under it). */
  readonly trace?: Trace | undefined;
}

export function forwardUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, t: UpgradeTarget, o: UpgradeOptions): Promise<void> {
  if (!tracingEnabled()) return sendUpgrade(req, socket, head, t, o);
  const host = t.options.host ?? t.options.hostname ?? 'localhost';
  return outboundCall(
    o.trace,
    req.method ?? 'GET',
    targetUrl(t.protocol, host, t.options.port, req.url ?? '/'),
    targetAttributes(host, t.options.port, o.purpose),
    (trace) => {
      const set = [...o.set];
      for (const k in trace) set.push(k, String(trace[k]));
      return sendUpgrade(req, socket, head, t, { ...o, set });
    },
    req,
  );
}

function sendUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, t: UpgradeTarget, o: UpgradeOptions): Promise<void> {
  // The client's headers as they came, Connection and Upgrade included (they ask for the upgrade), by own keys.
  const headers: string[] = [];
  const h = req.headers;
  for (const k of Object.keys(h)) {
    if (o.drop(k) || setsName(o.set, k)) continue;
    const v = h[k];
    if (Array.isArray(v)) for (const x of v) headers.push(k, x);
    else if (v !== undefined) headers.push(k, v);
  }
  for (let i = 0; i < o.set.length; i++) headers.push(o.set[i]!);
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
