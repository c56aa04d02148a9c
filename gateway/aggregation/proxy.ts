// The aggregation proxy, after kube-aggregator's handler_proxy.go: one
// handler per remote APIService holding an immutable snapshot (the
// APIService as read, and its Transport) that is swapped whole on update;
// the Transport (agent, TLS) is rebuilt only when the fields it depends on
// change. Every failure before the backend answered is a 503 Status naming
// the APIService, thrown for the pipeline to write; an http-proxy error is
// always handled (per call, and on the engine as a last resort).
//
// Upgrades (exec, attach, port-forward, websockets) are forwarded only from
// dispatch, i.e. after authentication and authorization, and by our own
// small pass rather than http-proxy's (which accepts only `websocket`): if
// the backend answers anything but 101, that answer is relayed and the
// connection is closed, so no half-upgraded socket stays open to carry
// further requests (CVE-2018-1002105).
import { request } from 'node:https';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { Readable } from 'node:stream';
import httpProxy from 'http-proxy';
import { serviceUnavailable, StatusError } from '../../lib/api/status.js';
import type { UserInfo } from '../../lib/api/meta.js';
import { isAvailable, type ApiServiceInfo } from './apiservice.js';
import { identityHeaders, stripForwarded, type StrippedHeaders } from './identity.js';
import type { ServiceResolver, Target } from './resolver.js';
import { Transport, type ProxyClientCert } from './transport.js';

export interface ProxyRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly user: UserInfo;
  /** Already read by admission; sent instead of the (consumed) request stream. */
  readonly body?: Buffer;
  readonly longRunning: boolean;
}

export interface ProxyEnv {
  readonly engine: httpProxy;
  readonly resolver: ServiceResolver;
  readonly clientCert: ProxyClientCert | undefined;
  readonly stripped: StrippedHeaders;
  /** Inactivity limit of a proxied request that is not long-running. */
  readonly timeoutMs: number;
  /** Told when a backend could not be reached, so availability is probed again at once. */
  readonly onBackendFailure: (apiService: string) => void;
  readonly log: (msg: string) => void;
}

interface Snapshot {
  readonly info: ApiServiceInfo;
  readonly transport: Transport;
}

function unavailable(info: ApiServiceInfo, detail: string): StatusError {
  return serviceUnavailable(`the server is currently unable to handle the request: APIService "${info.name}" (${info.service?.namespace}/${info.service?.name}): ${detail}`);
}

export class ApiServiceProxy {
  #snap: Snapshot;

  constructor(info: ApiServiceInfo, private readonly env: ProxyEnv) {
    this.#snap = Object.freeze({ info, transport: new Transport(info, env.clientCert) });
  }

  get info(): ApiServiceInfo { return this.#snap.info; }
  get transport(): Transport { return this.#snap.transport; }

  /** Swaps in a new snapshot; a new Transport only when its inputs changed (the old one drains, then closes). */
  update(info: ApiServiceInfo): void {
    const old = this.#snap;
    if (old.info.transportKey === info.transportKey) {
      this.#snap = Object.freeze({ info, transport: old.transport });
      return;
    }
    this.#snap = Object.freeze({ info, transport: new Transport(info, this.env.clientCert) });
    setTimeout(() => old.transport.close(), 60_000).unref();
  }

  close(): void {
    this.#snap.transport.close();
  }

  /** The backend to use now, or the 503 to answer. */
  #target(s: Snapshot): Target {
    if (!isAvailable(s.info)) {
      const c = s.info.available;
      throw unavailable(s.info, c ? `${c.reason}: ${c.message}` : 'availability not yet checked');
    }
    const t = this.env.resolver.pick(s.info.service!);
    if ('reason' in t) {
      this.env.onBackendFailure(s.info.name);
      throw unavailable(s.info, `${t.reason}: ${t.message}`);
    }
    return t;
  }

  /** Proxies one HTTP request; resolves when the response is done, rejects with a 503 when nothing was sent yet. */
  serve(r: ProxyRequest): Promise<void> {
    const s = this.#snap;
    const target = this.#target(s);
    stripForwarded(r.req, this.env.stripped);
    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const done = (err?: StatusError) => {
        if (settled) return;
        settled = true;
        if (err) reject(err); else resolve();
      };
      r.res.once('close', () => done());
      // http-proxy sets the backend's status and headers, then pipes the body: a watch with no event yet
      // would send nothing, so its headers go out at once.
      if (r.longRunning) r.res.once('pipe', () => r.res.flushHeaders());
      const opts: httpProxy.ServerOptions = {
        target: { protocol: 'https:', host: target.host, port: target.port } as unknown as httpProxy.ServerOptions['target'],
        agent: s.transport.agent,
        secure: s.transport.verify,
        headers: identityHeaders(r.user) as Record<string, string>,
        xfwd: false,
        changeOrigin: false,
        ...(r.longRunning ? {} : { proxyTimeout: this.env.timeoutMs }),
        ...(r.body ? { buffer: Readable.from([r.body]) as unknown as httpProxy.ServerOptions['buffer'] } : {}),
      };
      this.env.engine.web(r.req, r.res, opts, (err) => {
        this.env.onBackendFailure(s.info.name);
        this.env.log(`aggregation: proxy to APIService ${s.info.name} at ${target.host}:${target.port} failed: ${err.message}`);
        if (r.res.headersSent) { r.res.destroy(); done(); return; }
        done(unavailable(s.info, `error trying to reach service: ${err.message}`));
      });
    });
  }

  /**
   * Forwards an upgrade request on `socket` (already authorized). Rejects with a
   * 503 only while nothing was written to the socket; afterwards failures close it.
   */
  upgrade(r: { req: IncomingMessage; user: UserInfo; socket: Duplex; head: Buffer }): Promise<void> {
    const s = this.#snap;
    const target = this.#target(s);
    stripForwarded(r.req, this.env.stripped);
    const headers: OutgoingHttpHeaders = { ...r.req.headers, ...identityHeaders(r.user) };
    return new Promise<void>((resolve, reject) => {
      let written = false;
      const out = request({
        host: target.host, port: target.port, method: r.req.method, path: r.req.url, headers,
        // Upgraded sockets never return to a pool: a fresh connection with the same TLS settings.
        agent: false, servername: s.transport.serverName, rejectUnauthorized: s.transport.verify,
        ...(s.transport.agent.options.ca ? { ca: s.transport.agent.options.ca } : {}),
        ...(this.env.clientCert ? { cert: this.env.clientCert.certPem, key: this.env.clientCert.keyPem } : {}),
        timeout: this.env.timeoutMs,
      });
      const fail = (err: Error) => {
        this.env.onBackendFailure(s.info.name);
        if (!written) reject(unavailable(s.info, `error trying to reach service: ${err.message}`));
        else r.socket.destroy();
      };
      out.on('timeout', () => out.destroy(new Error(`no answer within ${this.env.timeoutMs}ms`)));
      out.on('error', fail);
      r.socket.on('error', () => out.destroy());
      out.on('upgrade', (res, backend, head) => {
        written = true;
        r.socket.write(statusLine(101, 'Switching Protocols', res.rawHeaders));
        if (head.length > 0) r.socket.write(head);
        if (r.head.length > 0) backend.write(r.head);
        backend.on('error', () => r.socket.destroy());
        r.socket.on('close', () => backend.destroy());
        backend.on('close', () => r.socket.destroy());
        backend.pipe(r.socket);
        r.socket.pipe(backend);
        resolve();
      });
      out.on('response', (res) => {
        // The backend refused the upgrade: relay its answer, then close the connection.
        written = true;
        // Body framing: the body runs until the connection closes.
        r.socket.write(statusLine(res.statusCode ?? 502, res.statusMessage ?? '', [...pairsWithout(res.rawHeaders, /^(connection|transfer-encoding|keep-alive|content-length)$/i), 'Connection', 'close']));
        res.on('data', (c: Buffer) => r.socket.write(c));
        res.on('end', () => { r.socket.end(); resolve(); });
        res.on('error', () => { r.socket.destroy(); resolve(); });
      });
      out.end();
    });
  }
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

/** The shared http-proxy engine; its `error` event is handled so a stray error can never crash the process. */
export function createEngine(log: (msg: string) => void): httpProxy {
  const engine = httpProxy.createProxyServer({});
  engine.on('error', (err, _req, res) => {
    log(`aggregation: unhandled proxy error: ${err.message}`);
    if ('destroy' in res && typeof res.destroy === 'function') res.destroy();
  });
  engine.on('econnreset', () => undefined);
  return engine;
}
