// The request's end, once the answer is handed to the socket or the client
// went: what the context holds is given back (its deadline, its seat, its
// long-running count), and the request is counted and its audit event
// closed with one clock read.
import { sentLength } from '../../lib/http/carried.js';
import { labelsOf, observeRequest } from '../metrics/requests.js';
import type { RequestContext } from './context.js';

/** The request's series of the request metrics (kube's labels). */
export function metricLabels(ctx: RequestContext): ReturnType<typeof labelsOf> {
  return labelsOf({ info: ctx.info, method: ctx.req.method ?? 'GET', contentType: ctx.req.headers['content-type'], dryRun: ctx.query.has('dryRun') });
}

/** Returns performance.now() as read for the request's end (undefined when it had ended already). */
export function finishRequest(ctx: RequestContext): number | undefined {
  if (ctx.finished) return undefined;
  ctx.finished = true;
  ctx.cancel.disarm();
  ctx.seat?.release();
  ctx.longRunningEnd?.();
  const res = ctx.res;
  const now = performance.now();
  observeRequest(metricLabels(ctx), res.statusCode, (now - ctx.receivedAt) / 1000, sentLength(ctx));
  ctx.audit?.complete(res.statusCode, now);
  return now;
}
