// The APF dispatcher, in the chain where the plain in-flight limit was: the
// server's total concurrency (--max-requests-inflight plus
// --max-mutating-requests-inflight) is split over the Limited priority levels
// by nominalConcurrencyShares (kube's NominalCL = ceil(total·shares/Σshares));
// Exempt levels never wait. A full level rejects (limitResponse Reject) or
// queues the request in the shortest queue of the flow's shuffle-sharded hand,
// each queue bounded by queueLengthLimit. A freed seat goes to the next
// non-empty queue in round-robin order: every flow with waiting requests gets
// seats in turn, whatever its rate (a first step towards kube's fair queuing,
// which orders queues by virtual finish time and request width). Borrowing
// between levels (lendablePercent, borrowingLimitPercent) is not done.
import { tooManyRequests } from '../../lib/api/status.js';
import { isLongRunning, type RequestContext } from '../pipeline/context.js';
import type { Classifier } from './classifier.js';
import type { PriorityLevel } from './config.js';
import { dealHand, flowHash } from './shuffle.js';

/** kube-apiserver's APF response headers. */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

const RETRY_AFTER_S = 1;
const NOOP = () => {};

interface Waiter { seat(): void; queue: Queue }
interface Queue { waiting: Waiter[]; executing: number }

class LevelState {
  limit = 0;
  executing = 0;
  queues: Queue[] = [];
  /** The queue the next freed seat looks at first (round robin). */
  next = 0;
  constructor(public config: PriorityLevel) {}

  configure(config: PriorityLevel, limit: number): void {
    this.config = config;
    this.limit = limit;
    const want = config.queuing?.queues ?? 1;
    if (this.queues.length === want) return;
    // Waiters keep their order; they are spread over the new queues by their old position.
    const waiting = this.queues.flatMap((q) => q.waiting);
    this.queues = Array.from({ length: want }, () => ({ waiting: [], executing: 0 }));
    waiting.forEach((w, i) => { w.queue = this.queues[i % want]!; w.queue.waiting.push(w); });
    this.next = 0;
  }

  waitingCount(): number {
    let n = 0;
    for (const q of this.queues) n += q.waiting.length;
    return n;
  }

  /** The least loaded queue of the flow's hand (waiting plus executing), the first on ties. */
  queueFor(flow: string): Queue {
    if (this.queues.length === 1) return this.queues[0]!;
    const hand = dealHand(flowHash(flow), this.queues.length, this.config.queuing?.handSize ?? 1);
    let best = this.queues[hand[0]!]!;
    for (const i of hand) {
      const q = this.queues[i]!;
      if (q.waiting.length + q.executing < best.waiting.length + best.executing) best = q;
    }
    return best;
  }

  /** Gives freed seats to waiters, one queue after another. */
  serve(): void {
    while (this.executing < this.limit) {
      let found: Waiter | undefined;
      for (let k = 0; k < this.queues.length && !found; k++) {
        const i = (this.next + k) % this.queues.length;
        const w = this.queues[i]!.waiting.shift();
        if (w) { found = w; this.next = (i + 1) % this.queues.length; }
      }
      if (!found) return;
      found.seat();
    }
  }
}

export class Dispatcher {
  private readonly states = new Map<string, LevelState>();

  /** `total` 0 = no limit (the in-flight flags' meaning of 0). */
  constructor(private readonly classifier: Classifier, private readonly total: number) {
    classifier.onLevels((levels) => this.resize(levels));
  }

  private resize(levels: ReadonlyMap<string, PriorityLevel>): void {
    let sum = 0;
    for (const l of levels.values()) if (!l.exempt) sum += l.shares;
    for (const l of levels.values()) {
      if (l.exempt) continue;
      const limit = this.total === 0 ? Infinity : sum === 0 ? 0 : Math.ceil((this.total * l.shares) / sum);
      let s = this.states.get(l.name);
      if (!s) { s = new LevelState(l); this.states.set(l.name, s); }
      s.configure(l, limit);
      s.serve();
    }
    // A removed level's state goes once its requests are done; its waiters still get seats as they free.
    for (const name of [...this.states.keys()]) if (!levels.has(name)) this.states.delete(name);
  }

  /**
   * Classifies the request (setting kube's APF headers), then takes a seat of
   * its level, waiting in a queue if need be; resolves with the release, or
   * rejects with 429. Long-running requests are classified but hold no seat.
   */
  async admit(ctx: RequestContext): Promise<() => void> {
    const i = ctx.info;
    const c = this.classifier.classify({
      user: ctx.user, isResourceRequest: i.isResourceRequest, verb: i.verb, apiGroup: i.apiGroup,
      resource: i.resource, subresource: i.subresource, namespace: i.namespace, path: i.path,
    });
    ctx.res.setHeader(FLOW_SCHEMA_UID_HEADER, c.schema.uid);
    ctx.res.setHeader(PRIORITY_LEVEL_UID_HEADER, c.level.uid);
    if (c.level.exempt || isLongRunning(ctx)) return NOOP;
    let s = this.states.get(c.level.name);
    if (!s) {
      // Classified against a level the dispatcher has not sized yet (a race with a watch event): size now.
      this.resize(this.classifier.priorityLevels());
      s = this.states.get(c.level.name);
      if (!s) throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
    }
    const state = s;
    const queue = state.queueFor(c.flow);
    const seat = (q: Queue): (() => void) => {
      state.executing++;
      q.executing++;
      let done = false;
      return () => {
        if (done) return;
        done = true;
        state.executing--;
        q.executing--;
        state.serve();
      };
    };
    if (state.executing < state.limit && state.waitingCount() === 0) return seat(queue);
    const limit = state.config.queuing?.queueLengthLimit ?? 0;
    if (!state.config.queuing || queue.waiting.length >= limit) throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
    return new Promise<() => void>((resolve, reject) => {
      ctx.queued = true;
      const leave = (why: string) => {
        const q = waiter.queue;
        const at = q.waiting.indexOf(waiter);
        if (at < 0) return;
        q.waiting.splice(at, 1);
        ctx.queued = false;
        cleanup();
        reject(tooManyRequests(why, RETRY_AFTER_S));
      };
      const onDeadline = () => leave('Too many requests, please try again later.');
      const onClose = () => leave('the client went away while the request was queued');
      const cleanup = () => {
        ctx.deadline.removeEventListener('abort', onDeadline);
        ctx.res.off('close', onClose);
      };
      const waiter: Waiter = {
        queue,
        seat: () => { ctx.queued = false; cleanup(); resolve(seat(waiter.queue)); },
      };
      queue.waiting.push(waiter);
      ctx.deadline.addEventListener('abort', onDeadline, { once: true });
      ctx.res.once('close', onClose);
    });
  }
}
