// Dispatch's door into aggregation: which requests belong to a remote
// APIService (resource requests under /apis/<group>/<version>/…, and the
// group version's own discovery path), and how they are handed over (a
// normal proxied request, or an upgrade on the socket the request context carries).
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import type { RequestContext } from '../pipeline/context.js';
import type { Aggregation } from './index.js';
import type { ApiServiceProxy } from './proxy.js';

export function remoteFor(agg: Aggregation, info: RequestInfo): ApiServiceProxy | undefined {
  if (info.isResourceRequest) return info.apiPrefix === 'apis' ? agg.route(info.apiGroup, info.apiVersion) : undefined;
  if (!info.path.startsWith('/apis/')) return undefined;
  const parts = info.path.split('/', 4);
  return parts.length >= 4 && parts[3] !== '' ? agg.route(parts[2]!, parts[3]!) : undefined;
}

export function serveRemote(p: ApiServiceProxy, ctx: RequestContext): Promise<void> {
  const up = ctx.upgrade;
  if (up) return p.upgrade({ req: ctx.req, user: ctx.user, socket: up.socket, head: up.head });
  return p.serve({ req: ctx.req, res: ctx.res, user: ctx.user, longRunning: ctx.info.verb === 'watch', ...(ctx.body ? { body: ctx.body } : {}) });
}
