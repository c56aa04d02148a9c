// The outbound TLS of one APIService, built once per change of its
// transport-relevant fields (service, caBundle, insecureSkipTLSVerify): the
// backend's certificate is verified against the APIService's caBundle for
// the name `<service>.<namespace>.svc`, and the front-proxy client
// certificate is presented. Proxied requests go through an undici Agent (one
// pool per endpoint of the service); availability probes and discovery
// fetches through a second, one-connection-per-endpoint Agent, so a backend
// whose proxied requests stall or fill the pool is still probed on a
// connection of its own. Upgrades take the same TLS settings (`tls`) on a
// fresh node:https connection (forward.ts).
//
// `backendPool` is the pool of the other forwarded paths (the remote core
// backend, the sidecar's upstream): one origin, the same TLS options
// (client certificate, CA) in undici's connect options.
import type { OutgoingHttpHeaders } from 'node:http';
import { createSecureContext, type ConnectionOptions } from 'node:tls';
import type { Agent as PoolAgent, Pool, Dispatcher } from 'undici';
import { serverNameOf, type ApiServiceInfo } from './apiservice.js';
import { AlpnDispatcher } from './alpndispatch.js';
import { loadUndici } from './undici.js';
import { uniformClients } from './undicishape.js';
import type { Target } from './resolver.js';

export interface ProxyClientCert {
  readonly certPem: string;
  readonly keyPem: string;
}

export interface BackendTls {
  /** Roots the backend's certificate must chain to; none: the system roots. */
  readonly caPem?: string | undefined;
  /** Presented to the backend (the front-proxy client certificate). */
  readonly clientCert?: ProxyClientCert | undefined;
  /** The name the backend's certificate must carry, when not the host connected to. */
  readonly serverName?: string;
  /** false only for insecureSkipTLSVerify. */
  readonly verify?: boolean;
}

/** The TLS options of a connection to a backend (node:tls names, which both node:https and undici's connector take). */
export function backendTls(t: BackendTls): ConnectionOptions {
  const material: ConnectionOptions = {
    ...(t.caPem ? { ca: t.caPem } : {}),
    ...(t.clientCert ? { cert: t.clientCert.certPem, key: t.clientCert.keyPem } : {}),
    minVersion: 'TLSv1.2',
  };
  return {
    ...(t.serverName ? { servername: t.serverName } : {}),
    rejectUnauthorized: t.verify ?? true,
    ...secureContextOf(material),
  };
}

/**
 * The CA, certificate and key as one secure context, made once: given as PEM text, tls.connect parses them
 * again for every connection (~1.3–2 ms of CPU each, docs/decisions/2026-11-30-backend-tls-context.md).
 * Text that does not parse stays text, so each connection fails with its error as before.
 */
function secureContextOf(material: ConnectionOptions): ConnectionOptions {
  try {
    return { secureContext: createSecureContext(material), minVersion: 'TLSv1.2' };
  } catch {
    return material;
  }
}

/**
 * HTTP/2 to backends unless `GODEBUG` holds `http2client=0`, the switch Go's
 * net/http (and so kube-apiserver's aggregator) honours to keep its clients
 * on HTTP/1.1. Read once at start.
 */
export const HTTP2_CLIENT = !/(?:^|,)\s*http2client=0\s*(?:,|$)/.test(process.env['GODEBUG'] ?? '');

/** How long an idle pooled connection is kept when the backend sends no keep-alive hint (a hint, such as Node's 5 s, wins). */
const IDLE_MS = 30_000;

/**
 * The pool of one backend origin (`https://host:port` with `tls`, or
 * `http://host:port` without): as the APIServices' pools, no cap on
 * connections (each request in flight holds one, watches included; the
 * front door's in-flight limits bound them), idle ones closed after the
 * backend's keep-alive hint or 30 s.
 */
export function backendPool(origin: string, tls: BackendTls | undefined): Pool {
  return new (loadUndici().Pool)(origin, { ...(tls ? { connect: backendTls(tls) } : {}), keepAliveTimeout: IDLE_MS });
}

export function origin(target: Target): string {
  return `https://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
}

export class Transport {
  /**
   * Proxied requests. No cap on connections per endpoint: each request in
   * flight holds one (pipelining is off, as with every HTTP/1.1 proxy), open
   * watches included, and the gateway's own in-flight limits and priority
   * levels bound how many there are; a cap here would queue requests behind
   * long-lived watches. Idle ones close after the backend's keep-alive hint.
   */
  readonly pool: AlpnDispatcher;
  /** Probes and discovery: one connection per endpoint, apart from the pool. */
  readonly #probes: PoolAgent;
  readonly serverName: string;
  readonly verify: boolean;
  /** The same TLS, for upgrades on a fresh connection. */
  readonly tls: ConnectionOptions;

  constructor(info: ApiServiceInfo, clientCert: ProxyClientCert | undefined) {
    if (!info.service) throw new Error(`APIService "${info.name}" is local: it has no transport`);
    this.serverName = serverNameOf(info.service);
    this.verify = !info.insecureSkipTLSVerify;
    // No caBundle: the system roots, as kube does.
    this.tls = backendTls({ caPem: info.caPem, clientCert, serverName: this.serverName, verify: this.verify });
    // HTTP/2 to endpoints that offer it by ALPN, else this HTTP/1.1 pool; upgrades keep HTTP/1.1 (forward.ts, no ALPN).
    const { Agent } = loadUndici();
    // Clients of one class in both Agents (undicishape.ts).
    this.pool = new AlpnDispatcher(this.tls, new Agent({ connect: this.tls, keepAliveTimeout: IDLE_MS, factory: uniformClients }), IDLE_MS, HTTP2_CLIENT);
    this.#probes = new Agent({ connect: this.tls, connections: 1, keepAliveTimeout: IDLE_MS, factory: uniformClients });
  }

  /** One GET with a deadline; the body is capped at `maxBytes`. */
  async get(
    target: Target,
    path: string,
    headers: OutgoingHttpHeaders,
    timeoutMs: number,
    maxBytes = 8 * 1024 * 1024,
  ): Promise<{ status: number; body: Buffer; contentType: string }> {
    const pairs: string[] = [];
    for (const k in headers) {
      const v = headers[k];
      if (Array.isArray(v)) for (const x of v) pairs.push(k, x);
      else if (v !== undefined) pairs.push(k, String(v));
    }
    const signal = AbortSignal.timeout(timeoutMs);
    const res = await this.#probes
      .request({
        origin: origin(target),
        path,
        method: 'GET',
        headers: pairs,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        // The certificate is checked for the service's name whatever the Host header says.
        servername: this.serverName,
      } as Dispatcher.RequestOptions)
      .catch((err: Error) => {
        throw signal.aborted ? new Error(`no answer within ${timeoutMs}ms`) : err;
      });
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of res.body as AsyncIterable<Buffer>) {
        size += c.length;
        if (size > maxBytes) throw new Error(`response larger than ${maxBytes} bytes`);
        chunks.push(c);
      }
    } catch (err) {
      res.body.destroy();
      throw signal.aborted ? new Error(`no answer within ${timeoutMs}ms`) : err;
    }
    const ct = res.headers['content-type'];
    return { status: res.statusCode, body: Buffer.concat(chunks), contentType: String(Array.isArray(ct) ? ct[0] : (ct ?? '')) };
  }

  close(): void {
    void this.pool.destroy().catch(() => undefined);
    void this.#probes.destroy().catch(() => undefined);
  }
}
