// The seat step: a request's place under the server's concurrency limit,
// taken after authentication (the user is known, which priority and fairness
// classifies by) and before authorization, as kube-apiserver places
// WithMaxInFlightLimit / WithPriorityAndFairness. The place is one object on
// the context (`ctx.seat`), given back once: when the answer is handed to the
// socket or the client goes (the chain's finish), or, for a watch under
// priority and fairness, once it is initialized. The limiter that hands out a
// seat counts it in apiserver_current_inflight_requests itself. A
// long-running request is counted in apiserver_longrunning_requests instead.
import { longRunningStarted } from '../metrics/requests.js';
import type { ChainConfig } from './config.js';
import { isLongRunning, type RequestContext } from './context.js';
import { metricLabels } from './finish.js';

/** A place under the concurrency limit, held until released. */
export interface Seat {
  /** Gives the place back; later calls do nothing. */
  release(): void;
}

/**
 * Takes the request's seat: synchronously when one is free (no promise turn
 * on the hot path), a promise while priority and fairness queues it; throws
 * the limit's 429 (the request then counts as terminated). Time queued is
 * left out of the request's SLI latency.
 */
export function takeSeat(ctx: RequestContext, cfg: ChainConfig): Promise<void> | undefined {
  try {
    if (cfg.flowControl) {
      const admitted = cfg.flowControl.admit(ctx);
      if (!(admitted instanceof Promise)) {
        hold(ctx, admitted);
        return undefined;
      }
      const queuedAt = performance.now();
      return admitted.then(
        (seat) => {
          ctx.excludedMs += performance.now() - queuedAt;
          hold(ctx, seat);
        },
        (err: unknown) => {
          ctx.terminated = true;
          throw err;
        },
      );
    }
    if (!isLongRunning(ctx)) ctx.seat = cfg.inflight.acquire(ctx.info.verb);
    else countLongRunning(ctx);
    return undefined;
  } catch (err) {
    // Refused by a concurrency limit: kube counts it among the requests it terminated in self-defense.
    ctx.terminated = true;
    throw err;
  }
}

function countLongRunning(ctx: RequestContext): void {
  if (ctx.finished) return;
  const labels = metricLabels(ctx);
  longRunningStarted(labels);
  ctx.longRunning = labels;
}

function hold(ctx: RequestContext, seat: Seat): void {
  // The client may have gone, and the chain's finish run, while the request waited for its seat.
  if (ctx.finished) seat.release();
  else ctx.seat = seat;
  // kube: a watch counts while it initializes, then not.
  if (ctx.info.verb === 'watch')
    // Let go of once called: an open watch would hold the closure for its life.
    ctx.watchInitialized = () => {
      ctx.watchInitialized = undefined;
      seat.release();
    };
  if (isLongRunning(ctx)) countLongRunning(ctx);
}
