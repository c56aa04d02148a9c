// The one forwarder of proxied requests — an APIService's (proxy.ts), the
// remote core backend's (remotecore.ts) and the sidecar's upstream
// (gateway/sidecar/upstream.ts) — over an undici dispatcher (a pool per
// backend origin), streaming the answer back under the rules of
// forwardrules.ts: hop-by-hop headers dropped both ways, the caller's
// headers (identity) set in place of the client's copies, the body streamed
// both ways with backpressure (or the buffered one admission read), a 3xx
// other than 304 answered 502 when the caller asks (APIServices and the
// remote core backend, as kube-aggregator since CVE-2022-3172; the sidecar
// relays its upstream's redirects, as kube-rbac-proxy does), an answer that
// arrives before the whole body was sent relayed with the rest of the body
// no longer forwarded and the client's HTTP/1.1 connection closed after it
// (lib/http/linger.ts), the client going away or the deadline aborting the
// backend request. Upgrades go through forward.ts on a fresh connection.
//
// Why undici: no ClientRequest/IncomingMessage pair and no agent
// bookkeeping per request. Under callgrind (bench/cg-proxy.sh, start-up
// excluded) a proxied GET went from 3.09M to 2.92M instructions (the test
// client's included, the same in both); a bare TLS GET costs 0.65M
// instructions through undici against 0.74M through node:https.
//
// Failures before the answer reject with a BackendFailure that says whether
// the request ever reached a backend connection (a refused connection or a
// failed handshake did not; a reset, a malformed answer or a stall did), so
// the caller can tell "unreachable" (503) from "failed while answering"
// (502) and "no answer in time" (504). Once the answer started, a failure
// cuts the client's connection (HTTP/2: its stream): the status line is
// gone, and a truncated body must not look complete.
//
// The client's request stream is never handed to undici: undici destroys
// the body stream it was given once it stops writing, which would abort the
// client's HTTP/2 stream or leave an early answer's unread body unconsumed;
// it gets a PassThrough the client's stream is piped into.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { BackendDispatcher, BackendHandler } from './alpndispatch.js';
import { clientStatus, outboundCall, tracingEnabled, type Trace } from '../../lib/tracing/span.js';
import type { Exchange } from '../../lib/http/exchange.js';
import { closeAfterAnswer } from '../../lib/http/linger.js';
import { writeHeadWith } from '../../lib/http/carried.js';
import { backendPath, isHopByHop, isRedirect, redirectRefused, setsName, targetAttributes } from './forwardrules.js';
import { headField, headValue } from './headstrings.js';
import type { Cancellation } from '../pipeline/deadline.js';

export interface PoolTarget {
  /** An undici pool (HTTP/1.1), or an APIService's ALPN dispatcher (HTTP/2 where the backend offers it). */
  readonly dispatcher: BackendDispatcher;
  /** `https://host:port` (or `http://…`) of the chosen endpoint. */
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  /** The name the backend's certificate is checked for, whatever Host the client sent (none for an IP address or plain HTTP). */
  readonly servername?: string | undefined;
  /** Prepended to the request path (an upstream URL with a path). */
  readonly pathPrefix?: string | undefined;
}

export interface PoolForwardOptions {
  /** Header pairs added to the request (identity), flat: name, value, name, value… */
  readonly set: readonly string[];
  /** The names `set` holds, in lower case, when the caller built them once (identity.ts `identityHead`); else `set` is scanned. */
  readonly setNames?: ReadonlySet<string>;
  /** Client header names (lowercase) never forwarded, beyond the hop-by-hop ones. */
  readonly drop: (name: string) => boolean;
  /** The request body when it was already read (admission); else the request streams. */
  readonly body?: Buffer;
  /** No answer's headers for this long: the request fails (504); 0 waits as long as the deadline lets it. */
  readonly headersTimeoutMs: number;
  /** Silence within the answer's body for this long cuts it; 0 for watches and where the deadline alone bounds it. */
  readonly bodyTimeoutMs: number;
  /** Send the answer's headers at once (a watch may have no event for a while). */
  readonly flushHeaders?: boolean;
  /** The request's deadline: when it passes the backend request is cut and the promise resolves; the caller has answered. */
  readonly cancel?: Cancellation;
  /** Answer a backend's 3xx (but 304) with a 502 instead of relaying it; the rejection is that StatusError. */
  readonly rejectRedirects?: boolean;
  /** Called once the backend's response headers are relayed. */
  readonly onHeaders?: () => void;
  /** Called when the answer was cut after its headers were relayed (the promise resolves). */
  readonly onCut?: (err: Error) => void;
  /** What the backend is (`APIService v1.example.com`), named on the trace span. */
  readonly purpose?: string;
  /** The recorded request's trace (the call's CLIENT span hangs under it). */
  readonly trace?: Trace | undefined;
}

/** A failure before the answer: `reached` false when no connection to the backend carried the request. */
export class BackendFailure extends Error {
  constructor(
    override readonly cause: Error,
    readonly reached: boolean,
  ) {
    super(cause.message);
  }

  /** No answer's headers within the headers timeout. */
  get timedOut(): boolean {
    return (this.cause as { code?: string }).code === 'UND_ERR_HEADERS_TIMEOUT';
  }
}

/** `x`: the request and its answer side (the headers it carries go on the relayed head). */
export function forwardPooled(x: Exchange, t: PoolTarget, o: PoolForwardOptions): Promise<void> {
  if (!tracingEnabled()) return send(x, t, o);
  const { req, res } = x;
  return outboundCall(
    o.trace,
    req.method ?? 'GET',
    `${t.origin}${backendPath(t.pathPrefix, req.url).split('?', 1)[0]}`,
    targetAttributes(t.host, t.port, o.purpose),
    async (trace, span) => {
      const set = [...o.set];
      for (const k in trace) set.push(k, String(trace[k]));
      await send(x, t, { ...o, set, setNames: undefined });
      if (res.headersSent) clientStatus(span, res.statusCode);
    },
    req,
  );
}

/** Whether the client sends a body: HTTP/1.1 says so in its headers, HTTP/2 by not ending the stream with them. */
function hasBody(req: IncomingMessage): boolean {
  if (req.httpVersionMajor >= 2) return (req as unknown as { stream?: { endAfterHeaders?: boolean } }).stream?.endAfterHeaders === false;
  const h = req.headers;
  return h['transfer-encoding'] !== undefined || (h['content-length'] !== undefined && h['content-length'] !== '0');
}

function send(x: Exchange, t: PoolTarget, o: PoolForwardOptions): Promise<void> {
  const { req, res } = x;
  return new Promise<void>((resolve, reject) => {
    const headers: string[] = [];
    const h = req.headers;
    const set = o.set;
    const names = o.setNames;
    for (const k in h) {
      // HTTP/2 pseudo-headers (:path, :authority, …) are not headers to an HTTP/1.1 backend; Expect was answered by this server.
      if (k[0] === ':' || isHopByHop(k) || k === 'expect' || o.drop(k) || (o.body && k === 'content-length')) continue;
      if (names ? names.has(k) : setsName(set, k)) continue;
      const v = h[k];
      if (v !== undefined) headers.push(k, v as string);
    }
    if (h['host'] === undefined && typeof h[':authority'] === 'string') headers.push('host', h[':authority']);
    for (let i = 0; i < set.length; i++) headers.push(set[i]!);
    let body: Buffer | PassThrough | null = null;
    if (o.body) body = o.body;
    else if (hasBody(req)) {
      body = new PassThrough();
      req.pipe(body);
    }
    const relay = new Relay(x, o, body, resolve, reject);
    if (o.cancel?.aborted) {
      relay.cancel();
      return;
    }
    o.cancel?.onAbort(relay.cancel);
    res.on('close', relay.onClientClose);
    t.dispatcher.dispatch(
      {
        origin: t.origin,
        path: t.pathPrefix ? backendPath(t.pathPrefix, req.url) : (req.url ?? '/'),
        method: (req.method ?? 'GET') as Dispatcher.HttpMethod,
        headers,
        body,
        headersTimeout: o.headersTimeoutMs,
        bodyTimeout: o.bodyTimeoutMs,
        servername: t.servername,
      } as Dispatcher.DispatchOptions,
      relay,
    );
  });
}

/** undici's (legacy, native) handler of one proxied request; an HTTP/2 stream (alpndispatch.ts) drives it the same way. */
class Relay implements BackendHandler {
  #abort: ((err?: Error) => void) | undefined;
  #settled = false;
  /** The request reached a connection to the backend. */
  #reached = false;
  /** The whole body reached the backend's socket. */
  #uploaded = false;
  #answered = false;
  #resume: (() => void) | undefined;

  private readonly req: IncomingMessage;
  private readonly res: ServerResponse;

  constructor(
    private readonly x: Exchange,
    private readonly o: PoolForwardOptions,
    private readonly body: Buffer | PassThrough | null,
    private readonly resolve: () => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.req = x.req;
    this.res = x.res;
  }

  #settle(err?: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.o.cancel?.offAbort(this.cancel);
    this.res.off('close', this.onClientClose);
    if (err) this.reject(err);
    else this.resolve();
  }

  /** The deadline passed (the caller answers) or the client went: cut the backend request. */
  readonly cancel = (): void => {
    if (this.#settled) return;
    const res = this.res;
    // An answer under way is cut: a truncated body must not look complete.
    if (res.headersSent && !res.writableEnded) res.destroy();
    this.#settle();
    if (this.body instanceof PassThrough) {
      this.req.unpipe(this.body);
      this.body.destroy();
    }
    this.#abort?.(new Error('the request was cancelled'));
  };

  readonly onClientClose = (): void => {
    if (!this.res.writableFinished) this.cancel();
  };

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    this.#reached = true;
    if (this.#settled) abort(new Error('the request was cancelled'));
  }

  onRequestSent(): void {
    this.#uploaded = true;
  }

  onHeaders(statusCode: number, raw: Buffer[], resume: () => void, statusText: string): boolean {
    // 1xx (103 Early Hints): the final answer follows.
    if (statusCode < 200) return true;
    if (!this.#mayAnswer(statusCode)) return false;
    const out: string[] = [];
    for (let i = 0; i + 1 < raw.length; i += 2) {
      // latin1: the bytes as received, which is how Node writes them out again (the strings of repeated names and
      // values kept: headstrings.ts).
      const f = headField(raw[i]!);
      if (!f.hopByHop) out.push(f.name, headValue(f, raw[i + 1]!));
    }
    this.#head(statusCode, out, resume, statusText);
    return true;
  }

  onHeadPairs(statusCode: number, pairs: string[], resume: () => void): boolean {
    if (!this.#mayAnswer(statusCode)) return false;
    // HTTP/2 has no reason phrase: an HTTP/1.1 client gets Node's.
    this.#head(statusCode, pairs, resume, undefined);
    return true;
  }

  /** False (the backend request aborted) when the answer has nowhere to go or is a refused redirect. */
  #mayAnswer(statusCode: number): boolean {
    const res = this.res;
    // Answered already (the deadline passed): this answer has nowhere to go.
    if (this.#settled || res.headersSent) {
      this.#abort?.(new Error('answered already'));
      return false;
    }
    if (this.o.rejectRedirects && isRedirect(statusCode)) {
      // Its body is not read: the connection goes, not back to the pool.
      this.#settle(redirectRefused());
      this.#abort?.(new Error('redirect refused'));
      return false;
    }
    return true;
  }

  #head(statusCode: number, out: string[], resume: () => void, statusText: string | undefined): void {
    // Before writeHead: an early answer marks the client's connection to close.
    if (!this.#uploaded && this.body instanceof PassThrough) this.#answeredEarly();
    // HTTP/2 has no reason phrase (Node warns when given one).
    if (this.req.httpVersionMajor === 1 && statusText) writeHeadWith(this.x, statusCode, out, statusText);
    else writeHeadWith(this.x, statusCode, out);
    if (this.o.flushHeaders) this.res.flushHeaders();
    this.o.onHeaders?.();
    this.#resume = resume;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    if (this.res.write(chunk)) return true;
    this.res.once('drain', this.#resume!);
    return false;
  }

  onComplete(): void {
    if (this.#settled) return;
    this.#answered = true;
    this.res.end();
    this.#settle();
  }

  onError(err: Error): void {
    if (this.#settled) return;
    if (!this.res.headersSent) {
      this.#settle(new BackendFailure(err, this.#reached));
      return;
    }
    if (!this.#answered) {
      this.res.destroy();
      this.o.onCut?.(err);
    }
    this.#settle();
  }

  /** The backend answered before the body was all sent: stop forwarding it; the answer goes, then both connections close. */
  #answeredEarly(): void {
    const req = this.req;
    req.unpipe(this.body as PassThrough);
    // HTTP/2 ends only this stream; an HTTP/1.1 client still sending must see the answer before its connection goes.
    if (req.httpVersionMajor === 1 && !req.complete) closeAfterAnswer(req, this.res);
    else req.resume();
    // undici closes the backend connection itself once the answer is complete while the body was still being written.
  }
}
