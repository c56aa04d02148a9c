// The aggregation proxy, after kube-aggregator's handler_proxy.go: one
// handler per remote APIService holding an immutable snapshot (the
// APIService as read, and its Transport) that is swapped whole on update;
// the Transport (pools, TLS) is rebuilt only when the fields it depends on
// change. Every failure before the backend answered is a Status naming the
// APIService, thrown for the pipeline to write: 503 when no backend
// connection took the request (kube's "error trying to reach service"), 502
// when the backend reset the connection or answered garbage, 504 when it did
// not answer within the proxy's timeout. Requests go through the pooled
// forwarder (poolforward.ts, undici); upgrades through forward.ts on a fresh
// node:https connection (a connection that will never serve another request
// is what an upgrade needs, and undici's pool would hand a refused upgrade's
// connection back for reuse), only from dispatch, i.e. after authentication
// and authorization.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { badGateway, serviceUnavailable, StatusError, timeout } from '../../lib/api/status.js';
import type { UserInfo } from '../../lib/api/meta.js';
import { isAvailable, type ApiServiceInfo } from './apiservice.js';
import { identityHead, identityPairs, notForwarded } from './identity.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import type { ServiceResolver, Target } from './resolver.js';
import { origin, Transport, type ProxyClientCert } from './transport.js';
import { forwardUpgrade } from './forward.js';
import { formatDuration } from '../config/duration.js';
import { BackendFailure, forwardPooled, type PoolTarget } from './poolforward.js';
import type { Cancellation } from '../pipeline/deadline.js';
import type { Exchange } from '../../lib/http/exchange.js';
import type { Trace } from '../../lib/tracing/span.js';

export interface ProxyRequest {
  /** The request and its answer side (the gateway's context: the headers it carries go on the relayed head). */
  readonly x: Exchange;
  /** The recorded request's trace. */
  readonly trace: Trace | undefined;
  readonly user: UserInfo;
  /** Already read by admission; sent instead of the (consumed) request stream. */
  readonly body?: Buffer;
  readonly longRunning: boolean;
  /** Aborted at the request's deadline: the backend request is cut (the pipeline answers 504). */
  readonly deadline?: Cancellation;
  /** Called when the backend's response headers arrive (a watch's priority-and-fairness seat is freed then). */
  readonly onHeaders?: () => void;
}

export interface ProxyEnv {
  readonly resolver: ServiceResolver;
  readonly clientCert: ProxyClientCert | undefined;
  /** The identity headers the chain strips after authentication; stripped again before forwarding. */
  readonly identityHeaders: IdentityHeaders;
  /** Inactivity limit of a proxied request that is not long-running. */
  readonly timeoutMs: number;
  /** Told when a backend could not be reached, so availability is probed again at once. */
  readonly onBackendFailure: (apiService: string) => void;
  readonly log: (msg: string) => void;
}

interface Snapshot {
  readonly info: ApiServiceInfo;
  readonly transport: Transport;
  /** `describe(info)`, which every proxied request names as what it waits on. */
  readonly described: string;
  /** `APIService <name>`, the trace span's backend. */
  readonly purpose: string;
  /** Each endpoint's forwarding, built once per snapshot (the resolver hands out the same Target until the endpoints change). */
  readonly targets: WeakMap<Target, Endpoint>;
}

/**
 * One endpoint's forwarding target and its two failure handlers, made once: per request they were two closures,
 * their context and the strings they name (~0.2 KB a proxied GET; docs/decisions/2026-11-30-proxied-get-bytes.md).
 */
interface Endpoint {
  readonly pt: PoolTarget;
  readonly onCut: (err: Error) => void;
  readonly failed: (err: Error) => never;
}

function snapshot(info: ApiServiceInfo, transport: Transport): Snapshot {
  return Object.freeze({ info, transport, described: describe(info), purpose: `APIService ${info.name}`, targets: new WeakMap<Target, Endpoint>() });
}

function describe(info: ApiServiceInfo): string {
  return `APIService "${info.name}" (${info.service?.namespace}/${info.service?.name})`;
}

function unavailable(info: ApiServiceInfo, detail: string): StatusError {
  return serviceUnavailable(`the server is currently unable to handle the request: ${describe(info)}: ${detail}`);
}

export class ApiServiceProxy {
  #snap: Snapshot;
  readonly #drop: (name: string) => boolean;

  constructor(
    info: ApiServiceInfo,
    private readonly env: ProxyEnv,
  ) {
    this.#snap = snapshot(info, new Transport(info, env.clientCert));
    this.#drop = notForwarded(env.identityHeaders);
  }

  get info(): ApiServiceInfo {
    return this.#snap.info;
  }
  /** `APIService "v1.g" (namespace/service)`, as messages name it. */
  describe(): string {
    return this.#snap.described;
  }
  get transport(): Transport {
    return this.#snap.transport;
  }

  /** Swaps in a new snapshot; a new Transport only when its inputs changed (the old one drains, then closes). */
  update(info: ApiServiceInfo): void {
    const old = this.#snap;
    if (old.info.transportKey === info.transportKey) {
      this.#snap = snapshot(info, old.transport);
      return;
    }
    this.#snap = snapshot(info, new Transport(info, this.env.clientCert));
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

  /** Proxies one HTTP request; resolves when the response is done, rejects with a Status when nothing was sent yet. */
  serve(r: ProxyRequest): Promise<void> {
    const s = this.#snap;
    const target = this.#target(s);
    let e = s.targets.get(target);
    if (e === undefined) {
      e = this.#endpoint(s, target);
      s.targets.set(target, e);
    }
    const env = this.env;
    const identity = identityHead(r.user);
    // One literal with every key, no spreads: each key after a spread is a V8 runtime call (proxied-get-cuts.md).
    return forwardPooled(r.x, e.pt, {
      set: identity.pairs,
      setNames: identity.names,
      drop: this.#drop,
      body: r.body,
      // A watch's headers come at once; its events may be far apart.
      headersTimeoutMs: env.timeoutMs,
      bodyTimeoutMs: r.longRunning ? 0 : env.timeoutMs,
      flushHeaders: r.longRunning,
      cancel: r.deadline,
      rejectRedirects: true,
      onHeaders: r.onHeaders,
      onCut: e.onCut,
      purpose: s.purpose,
      trace: r.trace,
    }).catch(e.failed);
  }

  /** `target`'s forwarding under snapshot `s`: what a request to it is sent to, and what its failures become. */
  #endpoint(s: Snapshot, target: Target): Endpoint {
    const env = this.env;
    const pt: PoolTarget = { dispatcher: s.transport.pool, origin: origin(target), host: target.host, port: target.port, servername: s.transport.serverName };
    return {
      pt,
      onCut: (err) => {
        env.onBackendFailure(s.info.name);
        env.log(`aggregation: the answer of APIService ${s.info.name} from ${target.host}:${target.port} was cut: ${err.message}`);
      },
      failed: (err) => {
        if (err instanceof StatusError) throw err;
        env.onBackendFailure(s.info.name);
        env.log(`aggregation: proxy to APIService ${s.info.name} at ${target.host}:${target.port} failed: ${err.message}`);
        if (!(err instanceof BackendFailure) || !err.reached) throw unavailable(s.info, `error trying to reach service: ${err.message}`);
        if (err.timedOut)
          throw timeout(
            `Timeout: request did not complete within requested timeout - context deadline exceeded: no answer from ${s.described} within ${formatDuration(env.timeoutMs)}`,
          );
        throw badGateway(`${s.described}: the backend failed before answering: ${err.message}`);
      },
    };
  }

  /**
   * Forwards an upgrade request on `socket` (already authorized). Rejects with a
   * 503 only while nothing was written to the socket; afterwards failures close it.
   */
  upgrade(r: { req: IncomingMessage; trace: Trace | undefined; user: UserInfo; socket: Duplex; head: Buffer }): Promise<void> {
    const s = this.#snap;
    const target = this.#target(s);
    const t = s.transport;
    return forwardUpgrade(
      r.req,
      r.socket,
      r.head,
      {
        protocol: 'https:',
        // Upgraded sockets never return to a pool: a fresh connection with the same TLS settings.
        options: { host: target.host, port: target.port, ...t.tls },
      },
      { set: identityPairs(r.user), drop: this.#drop, timeoutMs: this.env.timeoutMs, purpose: s.purpose, trace: r.trace },
    ).catch((err: Error) => {
      if (err instanceof StatusError) throw err;
      this.env.onBackendFailure(s.info.name);
      throw unavailable(s.info, `error trying to reach service: ${err.message}`);
    });
  }
}
