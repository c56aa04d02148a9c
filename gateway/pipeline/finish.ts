// The request's end, once the answer is handed to the socket or the client
// went: what the context holds is given back (its deadline, its seat, its
// long-running count), and the request is counted (its SLI latency without
// what it waited on webhooks and queues, and a termination when the server
// ended it) and its audit event closed with one clock read.
import { sentLength } from '../../lib/http/carried.js';
import { labelsOf, longRunningEnded, observeRequest, observeTermination } from '../metrics/requests.js';
import { isLongRunning, type RequestContext } from './context.js';

/**
 * The request's series of the request metrics (kube's labels). A path no route
 * served is counted without its group, version, resource and subresource: the
 * client chose them (kube does not count such requests at all).
 */
export function metricLabels(ctx: RequestContext): ReturnType<typeof labelsOf> {
  const info = ctx.unrouted ? { ...ctx.info, apiGroup: '', apiVersion: '', resource: '', subresource: '', path: '' } : ctx.info;
  return labelsOf({ info, method: ctx.req.method ?? 'GET', contentType: ctx.req.headers['content-type'], dryRun: ctx.query.has('dryRun') });
}

/** Returns performance.now() as read for the request's end (undefined when it had ended already). */
export function finishRequest(ctx: RequestContext): number | undefined {
  if (ctx.finished) return undefined;
  ctx.finished = true;
  ctx.cancel.disarm();
  ctx.seat?.release();
  if (ctx.longRunning) longRunningEnded(ctx.longRunning);
  const res = ctx.res;
  const now = performance.now();
  const labels = metricLabels(ctx);
  const ms = now - ctx.receivedAt;
  observeRequest(labels, res.statusCode, ms / 1000, sentLength(ctx), isLongRunning(ctx) ? undefined : (ms - ctx.excludedMs) / 1000);
  if (ctx.terminated) observeTermination(labels, res.statusCode);
  ctx.audit?.complete(res.statusCode, now);
  return now;
}
