// The sidecar's dispatch: every request the chain let through goes to the
// upstream of its route (--upstream, or a route's own: an http:// or https://
// URL whose path prefixes every request path), through the gateway's one forwarder
// (aggregation/poolforward.ts) over a pool of connections to the upstream,
// with the caller's identity in X-Remote-User / -Uid / -Group / -Extra-* —
// except on ignored routes (--ignore-paths) and routes that turn it off. Whatever the client
// sent under those names, and its credentials and Impersonate-* headers,
// never pass. With --auth-header-fields-enabled the user and its groups
// also go in kube-rbac-proxy's fields (default x-remote-user, and
// x-remote-groups joined by `|`), which upstreams written for
// kube-rbac-proxy read. The upstream's redirects are relayed, as
// kube-rbac-proxy does. Upgrades (websockets) go on a fresh connection
// (aggregation/forward.ts), after the same checks.
import { isIP } from 'node:net';
import { Pool } from 'undici';
import type { UserInfo } from '../../lib/api/meta.js';
import { StatusError } from '../../lib/api/status.js';
import { isLongRunning, type RequestContext } from '../pipeline/context.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { forwardUpgrade } from '../aggregation/forward.js';
import { forwardPooled, type PoolTarget } from '../aggregation/poolforward.js';
import { identityPairs, notForwarded } from '../aggregation/identity.js';
import { backendPool } from '../aggregation/transport.js';

export interface Upstream {
  readonly url: string;
  /** `withIdentity`: whether the caller's identity headers go along (not on an ignored route, nor one that turns them off). */
  dispatch(ctx: RequestContext, withIdentity: boolean): Promise<void>;
  /** Ends the forwarded requests that would not end on their own (watches, upgraded connections): shutdown's drain. */
  closeLongRunning(): void;
  close(): void;
}

/** kube-rbac-proxy's --auth-header-* fields (lowercase names). */
export interface AuthHeaderFields {
  readonly user: string;
  readonly groups: string;
  readonly separator: string;
}

const NO_HEADERS: readonly string[] = Object.freeze([]);

export function upstreamIdentity(user: UserInfo, fields: AuthHeaderFields | undefined): readonly string[] {
  const pairs = identityPairs(user);
  if (!fields) return pairs;
  // The same user under either spelling of x-remote-user: one header, not two.
  const h: string[] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const k = pairs[i]!.toLowerCase();
    if (k !== fields.user && k !== fields.groups) h.push(pairs[i]!, pairs[i + 1]!);
  }
  h.push(fields.user, user.username, fields.groups, user.groups.join(fields.separator));
  return h;
}

export function upstreamOf(
  url: string,
  caPem: string | undefined,
  clientCert: { certPem: string; keyPem: string } | undefined,
  identity: IdentityHeaders,
  log: (msg: string) => void,
  fields?: AuthHeaderFields,
): Upstream {
  const isHttps = url.startsWith('https:');
  // unix:///path/app.sock: HTTP over the socket (Host: localhost), as kube-rbac-proxy dials it.
  const socketPath = url.startsWith('unix:') ? new URL(url).pathname : undefined;
  const u = new URL(socketPath !== undefined ? 'http://localhost' : url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const port = Number(u.port || (isHttps ? 443 : 80));
  const pool =
    socketPath !== undefined
      ? new Pool(u.origin, { socketPath, keepAliveTimeout: 30_000 })
      : backendPool(u.origin, isHttps ? { caPem, clientCert } : undefined);
  const target: PoolTarget = {
    dispatcher: pool,
    origin: u.origin,
    host,
    port,
    // The certificate is checked for the upstream's name, whatever Host the client sent.
    servername: isHttps && isIP(host) === 0 ? host : undefined,
    pathPrefix: u.pathname !== '/' ? u.pathname : undefined,
  };
  const drop = notForwarded(identity);
  const longRunning = new Set<{ destroy(): void }>();
  const track = (c: { destroy(): void; once(event: 'close', f: () => void): unknown }): void => {
    longRunning.add(c);
    c.once('close', () => longRunning.delete(c));
  };
  const unreachable = (err: Error, what: string): StatusError => {
    log(`sidecar: ${what} to ${url} failed: ${err.message}`);
    // A socket that is not there (yet) is the upstream being unavailable, named so its owner finds it.
    const code = (err.cause as { code?: string } | undefined)?.code ?? (err as { code?: string }).code;
    if (socketPath !== undefined && (code === 'ENOENT' || code === 'ECONNREFUSED')) {
      return new StatusError(503, 'ServiceUnavailable', `the upstream socket "${socketPath}" ${code === 'ENOENT' ? 'does not exist' : 'refuses connections'}`);
    }
    return new StatusError(502, 'InternalError', `error trying to reach the upstream: ${err.message}`);
  };

  const dispatch = async (ctx: RequestContext, withIdentity: boolean): Promise<void> => {
    const { req } = ctx;
    const set = withIdentity ? upstreamIdentity(ctx.user, fields) : NO_HEADERS;
    const up = ctx.upgrade;
    if (isLongRunning(ctx)) track(up ? up.socket : ctx.res);
    if (up) {
      const options = {
        ...(socketPath !== undefined ? { socketPath } : {}),
        host,
        port,
        ...(caPem ? { ca: caPem } : {}),
        ...(clientCert ? { cert: clientCert.certPem, key: clientCert.keyPem } : {}),
        minVersion: 'TLSv1.2' as const,
      };
      return forwardUpgrade(
        req,
        up.socket,
        up.head,
        { protocol: isHttps ? 'https:' : 'http:', options },
        { set, drop, purpose: 'upstream', trace: ctx.trace },
      ).catch((err: Error) => {
        throw unreachable(err, 'upgrade');
      });
    }
    ctx.waitingOn = 'the upstream';
    // No timeouts of its own: the request's deadline (ctx.cancel) bounds it, and long-running requests have none.
    // Every key in PoolForwardOptions' order, no spreads: each key after a spread is a V8 runtime call (proxied-get-cuts.md).
    return forwardPooled(ctx, target, {
      set,
      setNames: undefined,
      drop,
      body: ctx.body,
      headersTimeoutMs: 0,
      bodyTimeoutMs: 0,
      flushHeaders: false,
      cancel: ctx.cancel,
      rejectRedirects: false,
      onHeaders: undefined,
      onCut: undefined,
      purpose: 'upstream',
      trace: ctx.trace,
    }).catch((err: Error) => {
      throw unreachable(err, 'proxy');
    });
  };
  return {
    url,
    dispatch,
    closeLongRunning: () => {
      for (const c of longRunning) c.destroy();
      longRunning.clear();
    },
    close: () => void pool.destroy().catch(() => undefined),
  };
}
