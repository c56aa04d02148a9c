// The APF dispatcher, in the chain where the plain in-flight limit was: the
// server's concurrency limit (--max-requests-inflight plus
// --max-mutating-requests-inflight) is split over the priority levels by
// nominalConcurrencyShares (kube's NominalCL = ceil(ServerCL·NCS/ΣNCS), the
// Exempt level's shares included). Each level is a QueueSet (queueset.ts):
// fair queuing over shuffle-sharded queues, or Reject when full. Exempt
// levels never wait; their seats are counted all the same.
import { tooManyRequests } from '../../lib/api/status.js';
import { isLongRunning, type RequestContext } from '../pipeline/context.js';
import type { Classifier } from './classifier.js';
import type { PriorityLevel } from './config.js';
import { QueueSet, type QsRequest } from './queueset.js';
import { flowHash } from './shuffle.js';
import { maxSeatsOf, seatsOf, type ObjectCounts } from './width.js';

/** kube-apiserver's APF response headers. */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

const RETRY_AFTER_S = 1;
const NOOP = () => {};
/** kube's wait limits: a quarter of the request's deadline, at most a minute; 15 s without a deadline. */
const MAX_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 15_000;

export class LevelState {
  nominalCL = 0;
  maxSeats = 1;
  readonly qs: QueueSet;
  constructor(public config: PriorityLevel, clock: () => number) {
    this.qs = new QueueSet(config.name, clock);
  }
}

export interface DispatcherOptions {
  /** Milliseconds; the queues' virtual time and wait limits read it (tests pass a fake). */
  clock?: () => number;
  /** Stored object counts, for the width of LISTs. */
  objectCounts?: ObjectCounts;
}

/** A seat's release, or the promise of one (the request waits in a queue). */
export type Admission = (() => void) | Promise<() => void>;

export class Dispatcher {
  readonly states = new Map<string, LevelState>();
  private readonly clock: () => number;
  private readonly counts: ObjectCounts | undefined;

  /** `total` 0 = no limit (the in-flight flags' meaning of 0). */
  constructor(private readonly classifier: Classifier, private readonly total: number, opts: DispatcherOptions = {}) {
    this.clock = opts.clock ?? Date.now;
    this.counts = opts.objectCounts;
    classifier.onLevels((levels) => this.resize(levels));
  }

  private resize(levels: ReadonlyMap<string, PriorityLevel>): void {
    let sum = 0;
    for (const l of levels.values()) sum += l.shares;
    for (const l of levels.values()) {
      let s = this.states.get(l.name);
      if (!s) { s = new LevelState(l, this.clock); this.states.set(l.name, s); }
      s.config = l;
      s.nominalCL = this.total === 0 ? Infinity : sum === 0 ? 0 : Math.ceil((this.total * l.shares) / sum);
      s.maxSeats = maxSeatsOf(s.nominalCL, l.queuing?.handSize ?? 1);
      s.qs.configure(l.exempt ? undefined : l.queuing, l.exempt ? Infinity : s.nominalCL);
    }
    // A removed level's state goes; its executing requests finish on the QueueSet they hold.
    for (const name of [...this.states.keys()]) if (!levels.has(name)) this.states.delete(name);
  }

  /**
   * Classifies the request (setting kube's APF headers), then takes its seats
   * in its level: the release at once when they are free (no promise turn),
   * a promise when the request waits in a queue; throws 429 when refused.
   * Long-running requests other than watches are classified but hold no seat.
   */
  admit(ctx: RequestContext): Admission {
    const i = ctx.info;
    const c = this.classifier.classify({
      user: ctx.user, isResourceRequest: i.isResourceRequest, verb: i.verb, apiGroup: i.apiGroup,
      resource: i.resource, subresource: i.subresource, namespace: i.namespace, path: i.path,
    });
    ctx.res.setHeader(FLOW_SCHEMA_UID_HEADER, c.schema.uid);
    ctx.res.setHeader(PRIORITY_LEVEL_UID_HEADER, c.level.uid);
    if (isLongRunning(ctx)) return NOOP;
    let s = this.states.get(c.level.name);
    if (!s) {
      // Classified against a level the dispatcher has not sized yet (a race with a watch event): size now.
      this.resize(this.classifier.priorityLevels());
      s = this.states.get(c.level.name);
      if (!s) throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
    }
    const qs = s.qs;
    const seats = c.level.exempt ? 1 : seatsOf(i, ctx.query, this.counts, s.maxSeats);
    const flow = c.flow;
    const started = qs.start(flow, () => flowHash(flow), seats, c.schema.name, c.distinguisher);
    if (started.kind === 'reject') throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
    const req = started.req;
    const release = () => qs.finish(req);
    if (started.kind === 'execute') return release;
    return this.wait(ctx, qs, req, release);
  }

  /** A queued request: resolves when dispatched; 429 when its wait limit passes or its client goes. */
  private wait(ctx: RequestContext, qs: QueueSet, req: QsRequest, release: () => void): Promise<() => void> {
    return new Promise<() => void>((resolve, reject) => {
      ctx.queued = true;
      const leave = (why: 'time-out' | 'cancelled') => {
        if (!qs.cancel(req, why)) return;
        ctx.queued = false;
        cleanup();
        reject(tooManyRequests(why === 'cancelled' ? 'the client went away while the request was queued' : 'Too many requests, please try again later.', RETRY_AFTER_S));
      };
      const onDeadline = () => leave('time-out');
      const onClose = () => leave('cancelled');
      const waitMs = ctx.timeoutMs !== undefined ? Math.min(ctx.timeoutMs / 4, MAX_WAIT_MS) : DEFAULT_WAIT_MS;
      const timer = setTimeout(onDeadline, waitMs);
      const cleanup = () => {
        clearTimeout(timer);
        ctx.deadline.removeEventListener('abort', onDeadline);
        ctx.res.off('close', onClose);
      };
      req.onDispatch = () => { ctx.queued = false; cleanup(); resolve(release); };
      ctx.deadline.addEventListener('abort', onDeadline, { once: true });
      ctx.res.once('close', onClose);
    });
  }
}
