// The sidecar's dispatch: every request the chain let through goes to the
// one upstream (--upstream, an http:// or https:// URL whose path prefixes
// every request path), over one keep-alive agent, with the caller's
// identity in X-Remote-User / -Uid / -Group / -Extra-* — except on
// --ignore-paths, which carry no identity. Whatever the client sent under
// those names, and its credentials and Impersonate-* headers, never pass.
// With --auth-header-fields-enabled the user and its groups also go in
// kube-rbac-proxy's fields (default x-remote-user, and x-remote-groups
// joined by `|`), which upstreams written for kube-rbac-proxy read.
// Upgrades (websockets) go on a fresh connection, after the same checks.
import { Agent as HttpAgent, type OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { StatusError } from '../../lib/api/status.js';
import type { RequestContext } from '../pipeline/context.js';
import type { IdentityHeaders } from '../pipeline/identityheaders.js';
import { forward, forwardUpgrade, type ForwardTarget } from '../aggregation/forward.js';
import { identityHeaders, stripForwarded } from '../aggregation/identity.js';
import { backendAgent } from '../aggregation/transport.js';
import { pathOf, type SidecarPaths } from './access.js';

export interface Upstream {
  readonly url: string;
  dispatch(ctx: RequestContext): Promise<void>;
  close(): void;
}

/** kube-rbac-proxy's --auth-header-* fields (lowercase names). */
export interface AuthHeaderFields {
  readonly user: string;
  readonly groups: string;
  readonly separator: string;
}

function upstreamIdentity(user: UserInfo, fields: AuthHeaderFields | undefined): OutgoingHttpHeaders {
  const h = identityHeaders(user);
  if (!fields) return h;
  // The same user under either spelling of x-remote-user: one header, not two.
  for (const k of Object.keys(h)) if (k.toLowerCase() === fields.user || k.toLowerCase() === fields.groups) delete h[k];
  h[fields.user] = user.username;
  h[fields.groups] = user.groups.join(fields.separator);
  return h;
}

export function upstreamOf(
  url: string,
  caPem: string | undefined,
  paths: SidecarPaths,
  identity: IdentityHeaders,
  log: (msg: string) => void,
  fields?: AuthHeaderFields,
): Upstream {
  const isHttps = url.startsWith('https:');
  const agent = isHttps ? backendAgent({ caPem }) : new HttpAgent({ keepAlive: true, maxFreeSockets: 64 });
  const u = new URL(url);
  const target: ForwardTarget = {
    protocol: isHttps ? 'https:' : 'http:',
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port || (isHttps ? 443 : 80),
    agent,
    ...(u.pathname !== '/' ? { pathPrefix: u.pathname } : {}),
  };
  const unreachable = (err: Error, what: string): StatusError => {
    log(`sidecar: ${what} to ${url} failed: ${err.message}`);
    return new StatusError(502, 'InternalError', `error trying to reach the upstream: ${err.message}`);
  };

  const dispatch = async (ctx: RequestContext): Promise<void> => {
    const { req } = ctx;
    stripForwarded(req, identity);
    const headers = paths.ignored(pathOf(req)) ? {} : upstreamIdentity(ctx.user, fields);
    const up = ctx.upgrade;
    if (up) {
      const options = { host: target.host, port: target.port, ...(caPem ? { ca: caPem } : {}), minVersion: 'TLSv1.2' as const };
      return forwardUpgrade(req, up.socket, up.head, { protocol: target.protocol, options }, { headers, purpose: 'upstream' }).catch((err: Error) => {
        throw unreachable(err, 'upgrade');
      });
    }
    ctx.waitingOn = 'the upstream';
    return forward(req, ctx.res, target, { headers, purpose: 'upstream', cancel: ctx.cancel, ...(ctx.body ? { body: ctx.body } : {}) }).catch((err: Error) => {
      throw unreachable(err, 'proxy');
    });
  };
  return { url, dispatch, close: () => agent.destroy() };
}
