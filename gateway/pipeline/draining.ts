// The drain check (kube's WithRetryAfter while shutting down): a request
// arriving once shutdown drains gets 429, and its connection is ended so the
// client finds another replica; health checks are still answered.
import { tooManyRequests } from '../../lib/api/status.js';
import type { RequestContext } from './context.js';
import { goAwayAfter } from './goaway.js';

const HEALTH_PATH = /^\/(healthz|livez|readyz)(\/|$)/;

export function refuseWhileDraining(ctx: RequestContext, draining: (() => boolean) | undefined): void {
  if (!draining?.() || HEALTH_PATH.test(ctx.info.path)) return;
  if (ctx.req.httpVersionMajor === 1) ctx.res.setHeader('Connection', 'close');
  else goAwayAfter(ctx.req, ctx.res);
  throw tooManyRequests('The apiserver is shutting down, please try again later.', 5);
}
