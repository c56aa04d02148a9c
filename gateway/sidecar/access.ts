// Who may reach the upstreams, in kube-rbac-proxy's terms, as the pieces the
// shared chain (gateway/pipeline/chain.ts) takes, read from the sidecar's
// route table (gateway/routes): a path no route matches is 404 and a `deny`
// route 403 before authentication (the first thing the sidecar's
// authenticator checks); an `ignore` route is anonymous, allowed, with no
// identity sent; the attributes are the route's (non-resource: the path and
// the verb of the method; or its resource attributes); and kube-rbac-proxy's
// 403 text. Without --routes the table is kube-rbac-proxy's flags in route
// form: one route per --ignore-paths pattern (ignore) or --allow-paths
// pattern, or one for every path, with --resource-attributes.
import type { IncomingMessage } from 'node:http';
import { forbiddenMessage, pathNotFound, StatusError } from '../../lib/api/status.js';
import { checkedRequestPath } from '../../lib/api/requestpath.js';
import { ConfigError } from '../../lib/config/error.js';
import { ANONYMOUS, type AuthnResult } from '../authn/types.js';
import type { Attributes } from '../authz/types.js';
import type { RequestAuthenticator } from '../pipeline/chain.js';
import type { RequestContext } from '../pipeline/context.js';
import { parseRouteTable, type RouteMatch, type RouteTable } from '../routes/table.js';

/** The decoded, checked request path the routes match (the chain refused any other with a 400 already). */
export function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return checkedRequestPath(q < 0 ? url : url.slice(0, q));
}

/** kube-rbac-proxy's flags as a route table: --ignore-paths (ignore) or --allow-paths patterns, else every path (the config file says what is asked). */
export function flagRoutes(allow: readonly string[], ignore: readonly string[]): RouteTable {
  const routes = [
    ...[...new Set(ignore)].map((p, i) => ({ name: `ignore-paths[${i}]`, pattern: p, action: 'ignore' })),
    ...(allow.length > 0 ? [...new Set(allow)].map((p, i) => ({ name: `allow-paths[${i}]`, pattern: p })) : [{ name: 'every-path', prefix: '/' }]),
  ];
  try {
    return parseRouteTable({ routes }, { upstreams: false, upstreamUrl: (u) => u });
  } catch (err) {
    throw err instanceof ConfigError ? new ConfigError(err.message, { flag: allow.length > 0 ? '--allow-paths' : '--ignore-paths' }) : err;
  }
}

function routed(table: RouteTable, path: string): RouteMatch {
  const m = table.match(path);
  if (!m) throw pathNotFound();
  return m;
}

/** The chain's first question: no route is 404 and a deny route 403 whoever asks; an ignored route is anonymous without looking at credentials. */
export function routeGatedAuthenticator(table: RouteTable, authenticator: RequestAuthenticator): RequestAuthenticator {
  const skipped: AuthnResult = Object.freeze({ user: ANONYMOUS });
  return {
    // Not async: a cached credential's result passes through without a promise; a refusal is a rejection.
    authenticate: (req, trace) => {
      let route: RouteMatch['route'];
      let path: string;
      try {
        path = requestPath(req);
        route = routed(table, path).route;
      } catch (err) {
        return Promise.reject(err);
      }
      if (route.action === 'deny') return Promise.reject(forbiddenMessage(`forbidden: route "${route.name}" denies path "${path}"`));
      if (route.action === 'ignore') return skipped;
      return authenticator.authenticate(req, trace);
    },
  };
}

/** kube-rbac-proxy's 403 text, as a Status; the reason goes to the log only. */
export function sidecarForbidden(log: (msg: string) => void): (ctx: RequestContext, a: Attributes, reason: string) => StatusError {
  return (_ctx, a, reason) => {
    log(`sidecar: denied ${a.verb} ${a.path} for ${a.user.username}${reason ? `: ${reason}` : ''}`);
    const what = a.isResourceRequest
      ? `resource=${a.resource}${a.apiGroup ? `.${a.apiGroup}` : ''}, subresource=${a.subresource}, namespace=${a.namespace}, name=${a.name}`
      : `path=${a.path}`;
    return new StatusError(403, 'Forbidden', `Forbidden (user=${a.user.username}, verb=${a.verb}, ${what})`);
  };
}
