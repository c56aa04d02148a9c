// The proxied requests of one APIService, over HTTP/2 to an endpoint that
// offers `h2` by ALPN (many streams on few TLS connections, as
// kube-aggregator's Go transport negotiates), else over the undici HTTP/1.1
// pool as before. The first request to an endpoint connects with ALPN
// `h2, http/1.1`; an endpoint that picks `http/1.1` (or nothing) is
// remembered as HTTP/1.1 for this transport's life and that probing
// connection closed; every new HTTP/2 connection negotiates again, so an
// endpoint that stops offering h2 falls back.
//
// Why not undici's own `allowH2`: its HTTP/2 client holds a request that is
// not idempotent (POST, PATCH) or has a streamed body until every other
// stream on the connection is done, i.e. behind any open watch, for ever.
// Here every stream is independent; a connection takes streams up to the
// backend's SETTINGS_MAX_CONCURRENT_STREAMS and a new one opens beyond that
// (Go's transport does the same), so long-running watches never queue
// ordinary requests.
//
// A stream speaks undici's legacy handler protocol (`onConnect` once a
// connection carries it, `onData` false to pause, `onComplete`, `onError`)
// so poolforward.ts's Relay serves both; the answer's head arrives as flat
// string pairs (`onHeadPairs`), hop-by-hop names already dropped.
// Connection-specific headers never go out (RFC 9113 §8.2.2), `Host`
// becomes `:authority`. An idle connection (no frames for 30 s) closes when
// it carries no stream, and is pinged when it does (a dead one under quiet
// watches is found within 15 s more, as kube's HTTP/2 read-idle check).
import { connect as h2connect, constants, sensitiveHeaders, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import type { PassThrough } from 'node:stream';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import type { Dispatcher } from 'undici';
import { loadUndici } from './undici.js';
import { isHopByHop } from './forwardrules.js';
import { h2RequestOptions } from '../../lib/http/h2request.js';

/** A handler both the HTTP/1.1 pool and an HTTP/2 stream drive. */
export interface BackendHandler extends Dispatcher.DispatchHandler {
  /** The answer's status and headers as flat name/value pairs (hop-by-hop ones dropped); false pauses the body. */
  onHeadPairs(statusCode: number, pairs: string[], resume: () => void): boolean;
  /** The whole request body was handed to the connection (undici calls it too, undeclared). */
  onRequestSent?(): void;
}

export interface BackendDispatcher {
  dispatch(opts: Dispatcher.DispatchOptions, handler: BackendHandler): boolean;
}

const { NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = constants;
/** Streams a connection takes before its peer's SETTINGS arrive (RFC 9113 recommends peers allow at least 100). */
const INITIAL_STREAMS = 100;
const CONNECT_TIMEOUT_MS = 10_000;
const PING_TIMEOUT_MS = 15_000;

interface Session {
  readonly s: ClientHttp2Session;
  open: number;
  /** The peer's SETTINGS_MAX_CONCURRENT_STREAMS once known. */
  max: number;
  dead: boolean;
}

interface Waiting {
  readonly opts: Dispatcher.DispatchOptions;
  readonly handler: BackendHandler;
}

interface Endpoint {
  readonly origin: string;
  /** Learned by ALPN: true once the endpoint declined h2. */
  h1: boolean;
  readonly sessions: Session[];
  connecting: boolean;
  waiting: Waiting[];
  /** Runs when one of its streams closes (a waiting request may take it): made once, not per request. */
  readonly freed: () => void;
}

export class AlpnDispatcher implements BackendDispatcher {
  readonly #endpoints = new Map<string, Endpoint>();
  #closed = false;

  constructor(
    private readonly tls: ConnectionOptions,
    private readonly h1: Dispatcher,
    private readonly idleMs: number,
    /** False: every endpoint over HTTP/1.1 (GODEBUG=http2client=0). */
    private readonly http2 = true,
  ) {}

  /** The protocol an endpoint was last reached with (tests, metrics): 'h2', 'http/1.1' or undefined before the first request. */
  protocolOf(origin: string): 'h2' | 'http/1.1' | undefined {
    const e = this.#endpoints.get(origin);
    if (!e) return undefined;
    return e.h1 ? 'http/1.1' : e.sessions.length > 0 ? 'h2' : undefined;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: BackendHandler): boolean {
    const key = opts.origin as string;
    let e = this.#endpoints.get(key);
    if (e === undefined) {
      const made: Endpoint = { origin: key, h1: !this.http2, sessions: [], connecting: false, waiting: [], freed: () => this.#drain(made) };
      this.#endpoints.set(key, made);
      e = made;
    }
    if (e.h1) return this.h1.dispatch(opts, handler);
    const s = roomy(e.sessions);
    if (s !== undefined) {
      stream(s, opts, handler, e.freed);
      return true;
    }
    e.waiting.push({ opts, handler });
    if (!e.connecting) this.#connect(e);
    return true;
  }

  #drain(e: Endpoint): void {
    while (e.waiting.length > 0) {
      if (e.h1) {
        const w = e.waiting.shift()!;
        this.h1.dispatch(w.opts, w.handler);
        continue;
      }
      const s = roomy(e.sessions);
      if (s === undefined) {
        if (!e.connecting) this.#connect(e);
        return;
      }
      const w = e.waiting.shift()!;
      stream(s, w.opts, w.handler, e.freed);
    }
  }

  #connect(e: Endpoint): void {
    if (this.#closed) {
      fail(e, new Error('the transport was closed'));
      return;
    }
    e.connecting = true;
    const url = new URL(e.origin);
    const socket: TLSSocket = tlsConnect({
      ...this.tls,
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 443),
      ALPNProtocols: ['h2', 'http/1.1'],
    });
    socket.setTimeout(CONNECT_TIMEOUT_MS, () => socket.destroy(new Error(`connect timed out after ${CONNECT_TIMEOUT_MS}ms`)));
    const onError = (err: Error): void => {
      e.connecting = false;
      fail(e, err);
    };
    socket.once('error', onError);
    socket.once('secureConnect', () => {
      socket.off('error', onError);
      socket.setTimeout(0);
      e.connecting = false;
      if (socket.alpnProtocol !== 'h2' || this.#closed) {
        // An HTTP/1.1 endpoint: the pool connects on its own.
        socket.destroy();
        e.h1 = true;
        this.#drain(e);
        return;
      }
      socket.setNoDelay(true);
      this.#session(e, socket);
      this.#drain(e);
    });
  }

  #session(e: Endpoint, socket: TLSSocket): void {
    const s = h2connect(e.origin, { createConnection: () => socket, settings: { enablePush: false } });
    const sess: Session = { s, open: 0, max: INITIAL_STREAMS, dead: false };
    const gone = (): void => {
      if (sess.dead) return;
      sess.dead = true;
      const i = e.sessions.indexOf(sess);
      if (i >= 0) e.sessions.splice(i, 1);
      // Requests waiting for room here may connect anew.
      this.#drain(e);
    };
    // Errors reach each stream; the session's own only retire it.
    s.on('error', gone);
    s.on('goaway', gone);
    s.on('close', gone);
    s.on('remoteSettings', (settings) => {
      sess.max = settings.maxConcurrentStreams ?? sess.max;
      this.#drain(e);
    });
    s.setTimeout(this.idleMs, () => {
      if (sess.open === 0) {
        gone();
        s.close();
        return;
      }
      const t = setTimeout(() => s.destroy(new Error(`no PING answer within ${PING_TIMEOUT_MS}ms`)), PING_TIMEOUT_MS).unref();
      s.ping((err) => {
        clearTimeout(t);
        if (err) s.destroy(err);
      });
    });
    s.unref();
    e.sessions.push(sess);
  }

  async destroy(): Promise<void> {
    this.#closed = true;
    for (const e of this.#endpoints.values()) {
      for (const s of e.sessions) s.s.destroy();
      fail(e, new Error('the transport was closed'));
    }
    this.#endpoints.clear();
    await this.h1.destroy().catch(() => undefined);
  }
}

/** A live connection with a free stream. */
function roomy(sessions: Session[]): Session | undefined {
  for (const s of sessions) {
    if (s.dead || s.s.closed || s.s.destroyed) continue;
    if (s.open < s.max) return s;
  }
  return undefined;
}

function fail(e: Endpoint, err: Error): void {
  const w = e.waiting;
  e.waiting = [];
  for (const x of w) x.handler.onError?.(err);
}

/** Connection-specific headers HTTP/2 forbids (RFC 9113 §8.2.2), beyond the hop-by-hop ones already dropped. */
function forbidden(lower: string): boolean {
  return lower === 'http2-settings' || isHopByHop(lower);
}

/**
 * The prototype of a request's header object: empty and with none of its own, so a client's header name is data,
 * never a prototype key (`__proto__`, `constructor`). Objects made from it keep V8's fast properties, which
 * `Object.create(null)`'s are not: node:http2's `request` copies the headers, from a dictionary key by key (16.8k →
 * 3.7k instructions a GET, docs/decisions/2026-11-30-proxied-get-h2.md).
 */
const NO_KEYS: object = Object.freeze(Object.create(null) as object);

/**
 * Headers with a new value on every request (the Audit-ID audit.ts makes, a trace's traceparent), sent HPACK-never-
 * indexed: indexed (nghttp2's default) each is a new table entry that evicts the identity headers, sent as literals
 * again every request; the HEADERS frame's encoding 8.9k → 4.8k instructions a GET (docs/decisions/2026-11-30-proxied-get-h2.md).
 */
const NOT_INDEXED: readonly string[] = Object.freeze(['audit-id', 'traceparent']);

/** One request as one stream of `sess`; `freed` runs when the stream closes (a waiting request may take it). */
function stream(sess: Session, opts: Dispatcher.DispatchOptions, handler: BackendHandler, freed: () => void): void {
  const headers = Object.create(NO_KEYS) as Record<string, string | string[]>;
  headers[':method'] = opts.method;
  headers[':path'] = opts.path;
  headers[':scheme'] = 'https';
  let authority: string | undefined;
  const pairs = opts.headers as string[];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const name = pairs[i]!.toLowerCase();
    const value = pairs[i + 1]!;
    if (name === 'host') {
      authority = value;
      continue;
    }
    if (forbidden(name)) continue;
    const had = headers[name];
    if (had === undefined) headers[name] = value;
    else if (Array.isArray(had)) had.push(value);
    else headers[name] = [had, value];
  }
  headers[':authority'] = authority ?? new URL(opts.origin as string).host;
  (headers as unknown as Record<symbol, readonly string[]>)[sensitiveHeaders] = NOT_INDEXED;
  const body = opts.body as Buffer | PassThrough | null | undefined;
  if (Buffer.isBuffer(body)) headers['content-length'] = String(body.length);

  let done = false;
  let st: ClientHttp2Stream | undefined;
  let answered = false;
  const finish = (err: Error | undefined): void => {
    if (done) return;
    done = true;
    // Cut on error; after a complete answer only a request side still open (an early answer) is closed.
    if (st && !st.closed && (err || !st.writableEnded)) st.close(err ? NGHTTP2_CANCEL : NGHTTP2_NO_ERROR);
    if (body && !Buffer.isBuffer(body)) {
      if (st) body.unpipe(st);
      body.destroy();
    }
    if (err) handler.onError?.(err);
  };
  const abort = (err?: Error): void => finish(err ?? new Error('the request was aborted'));
  handler.onConnect?.(abort);
  if (done) return;
  try {
    st = sess.s.request(headers, h2RequestOptions(body == null));
  } catch (err) {
    finish(err as Error);
    return;
  }
  sess.open++;
  const s = st;
  // `on`, not `once`, for the events a stream emits once: no wrapper per listener, and no listener removal, which a
  // stream reports to its session through a 'removeListener' event (docs/decisions/2026-11-30-proxied-get-h2.md).
  s.on('close', () => {
    sess.open--;
    if (!done) finish(new Error(`the backend closed the HTTP/2 stream (code ${s.rstCode}) before the answer was complete`));
    freed();
  });
  s.on('error', (err: Error) => finish(err));
  // One inactivity timer per stream (Node's, refreshed by its frames) for both limits, as undici's HTTP/2 client.
  const headersTimeout = opts.headersTimeout ?? 0;
  if (headersTimeout > 0)
    s.setTimeout(headersTimeout, () => finish(answered ? new (loadUndici().errors.BodyTimeoutError)() : new (loadUndici().errors.HeadersTimeoutError)()));
  s.on('response', (h: IncomingHttpHeaders) => {
    if (done) return;
    answered = true;
    const out: string[] = [];
    for (const k of Object.keys(h)) {
      if (k.charCodeAt(0) === 58 /* ':' */ || isHopByHop(k)) continue;
      const v = h[k];
      if (Array.isArray(v)) for (const x of v) out.push(k, x);
      else if (v !== undefined) out.push(k, v);
    }
    const bodyTimeout = opts.bodyTimeout ?? 0;
    if (bodyTimeout !== headersTimeout) s.setTimeout(bodyTimeout, () => finish(new (loadUndici().errors.BodyTimeoutError)()));
    if (!handler.onHeadPairs(Number(h[':status']), out, () => s.resume())) s.pause();
    if (done) return;
    s.on('data', (c: Buffer) => {
      if (!done && handler.onData?.(c) === false) s.pause();
    });
    s.on('end', () => {
      if (done) return;
      handler.onComplete?.([]);
      finish(undefined);
    });
  });
  if (body == null) handler.onRequestSent?.();
  else if (Buffer.isBuffer(body)) s.end(body, () => handler.onRequestSent?.());
  else {
    s.once('finish', () => handler.onRequestSent?.());
    body.pipe(s);
  }
}
