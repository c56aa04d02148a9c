// The last step of the gateway's pipeline (gateway/pipeline/chain.ts): which
// part of the gateway answers an authorized request, as one table read top
// to bottom. The first destination that takes the request answers it;
// nothing taking it is a 404.
import { pathNotFound } from '../../lib/api/status.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import { deprecation } from '../../lib/registry/versions.js';
import { addWarnings } from '../../lib/http/warnings.js';
import { deprecatedApiRequested } from '../metrics/deprecated.js';
import type { RequestContext } from '../pipeline/context.js';
import { serveLocal, type LocalRoutes } from '../local/router.js';
import type { Aggregation, ApiServiceProxy } from '../aggregation/index.js';
import type { GatewayCore } from '../aggregation/remotecore.js';

/** A destination answered the request without waiting. */
const ANSWERED = true;

/** Answers the request (a promise resolving when done, ANSWERED when done already), or returns undefined: not mine. */
type Destination = (ctx: RequestContext) => Promise<void> | typeof ANSWERED | undefined;

/** Virtual types the gateway answers itself (registry entries with servedBy: 'gateway'), by `<group>/<resource>`. */
export type GatewayServed = Readonly<Record<string, (ctx: RequestContext) => Promise<void>>>;

export interface DispatchTargets {
  readonly aggregation: Aggregation;
  readonly local: LocalRoutes;
  readonly registry: RegistrySource;
  readonly gatewayServed: GatewayServed;
  /** In-process or remote (--core-backend-url); the same interface either way. */
  readonly core: GatewayCore;
}

/** The APIService serving a request: resource requests under /apis/<g>/<v>/…, and that group version's discovery path. */
export function remoteFor(agg: Aggregation, info: RequestInfo): ApiServiceProxy | undefined {
  if (info.isResourceRequest) return info.apiPrefix === 'apis' ? agg.route(info.apiGroup, info.apiVersion) : undefined;
  if (!info.path.startsWith('/apis/')) return undefined;
  const parts = info.path.split('/', 4);
  return parts.length >= 4 && parts[3] !== '' ? agg.route(parts[2]!, parts[3]!) : undefined;
}

/** A proxied request, or an upgrade on the socket the context carries (only here: after authorization). */
function serveRemote(p: ApiServiceProxy, ctx: RequestContext): Promise<void> {
  const up = ctx.upgrade;
  if (up) return p.upgrade({ req: ctx.req, trace: ctx.trace, user: ctx.user, socket: up.socket, head: up.head });
  ctx.waitingOn = p.describe();
  // One literal with every key (undefined where unset, which serve reads alike): no spreads, whose keys are runtime calls.
  return p.serve({
    x: ctx,
    trace: ctx.trace,
    user: ctx.user,
    body: ctx.body,
    longRunning: ctx.info.verb === 'watch',
    deadline: ctx.cancel,
    onHeaders: ctx.watchInitialized,
  });
}

export function buildDispatch(t: DispatchTargets): (ctx: RequestContext) => void | Promise<void> {
  const table: readonly Destination[] = [
    // A group version an APIService serves elsewhere (aggregated backends).
    (ctx) => {
      const remote = remoteFor(t.aggregation, ctx.info);
      return remote && serveRemote(remote, ctx);
    },
    // Non-resource paths: health, version, discovery, OpenAPI, metrics, the root path list.
    (ctx) => (ctx.info.isResourceRequest ? undefined : serveLocal(t.local, ctx, ctx.info.path, ctx.query)),
    // Reviews the gateway answers itself (TokenReview, the access reviews, …).
    (ctx) => {
      const i = ctx.info;
      if (t.registry.current.lookup(i.apiGroup, i.apiVersion, i.resource)?.servedBy !== 'gateway') return undefined;
      const serve = t.gatewayServed[`${i.apiGroup}/${i.resource}`];
      if (!serve) throw pathNotFound();
      return serve(ctx);
    },
    // The built-in groups: the core backend.
    (ctx) => {
      const i = ctx.info;
      if (!t.core.backend.serves(i.apiGroup, i.apiVersion)) return undefined;
      // The context is the backend's request: its carried headers, warnings and trace go along, no copy made.
      const b = t.core.backend;
      return b.serveNow ? (b.serveNow(ctx) ?? ANSWERED) : b.serve(ctx);
    },
  ];
  // A promise only when the destination has to wait (the chain's rule); a failure found before that is thrown.
  return (ctx) => {
    const i = ctx.info;
    if (i.isResourceRequest) {
      // A deprecated version: kube's Warning, the deprecated-API gauge and the audit annotations.
      const type = t.registry.current.lookup(i.apiGroup, i.apiVersion, i.resource);
      const dep =
        type === undefined
          ? undefined
          : type.deprecationWarning !== undefined
            ? { text: type.deprecationWarning, removed: '' }
            : deprecation(i.apiGroup, i.apiVersion, type.kind);
      if (dep) {
        if (dep.text) addWarnings(ctx, [dep.text]);
        deprecatedApiRequested(i.apiGroup, i.apiVersion, i.resource, i.subresource, dep.removed);
        ctx.audit?.annotate('k8s.io/deprecated', 'true');
        if (dep.removed) ctx.audit?.annotate('k8s.io/removed-release', dep.removed);
      }
    }
    for (const destination of table) {
      const answered = destination(ctx);
      if (answered === ANSWERED) return undefined;
      if (answered) return answered;
    }
    throw pathNotFound();
  };
}
