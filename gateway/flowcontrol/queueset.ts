// One priority level's queues, as kube's fairqueuing/queueset: fair queuing
// for server requests. A virtual clock R advances, in seat-seconds, at the
// rate min(seats asked for, concurrency limit) / active queues: what each
// busy queue would get if the seats were split evenly. A queue remembers the
// R at which its next request may start (nextDispatchR); the queue whose head
// would finish first in virtual time (nextDispatchR + the head's work) is
// served next, so a flow that sends much only advances its own queue's clock
// and a quiet flow's request overtakes it. Work is charged up front at an
// estimated service time and corrected when the request finishes (kube's
// (G − S)·width adjustment), so long requests cost their queue more.
// Shuffle sharding picks a request's queue: the least loaded (waiting work)
// of the flow's hand. Everything runs on the one JS thread: no locks.
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { dealHand } from './shuffle.js';

export interface QueuingConfig {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

/** kube's estimatedServiceDuration G (3 ms), in seconds: the work charged per seat at dispatch. */
export const ESTIMATED_SERVICE_S = 0.003;

export type RejectReason = 'queue-full' | 'concurrency-limit';

/** A request of this set: waiting in a queue, executing, or done. */
export interface QsRequest {
  readonly seats: number;
  /** The FlowSchema's name (metrics and dumps). */
  readonly schema: string;
  /** The flow distinguisher's value (dumps). */
  readonly distinguisher: string;
  readonly queue: Queue | undefined;
  state: 'waiting' | 'executing' | 'done';
  readonly arrivalMs: number;
  arrivalR: number;
  startMs: number;
  /** Called once when a waiting request is given its seats. */
  onDispatch: (() => void) | undefined;
  /** Who asked for what, for dump_requests (set on queued requests only). */
  detail?: { user: string; info: RequestInfo };
}

export class Queue {
  readonly waiting: QsRequest[] = [];
  waitingSeats = 0;
  executing = 0;
  seatsInUse = 0;
  /** R at which this queue's next request may start. */
  nextDispatchR = 0;
  constructor(public index: number) {}
  get active(): boolean {
    return this.waiting.length > 0 || this.executing > 0;
  }
}

/**
 * Time-weighted average, deviation and maximum of a level's seat demand
 * (kube's seatDemandIntegrator). `set` reads no clock (a clock read costs
 * ~300 ns on a VM, more than the rest of a free seat's path): the value is
 * integrated when `tick` or `reset` reads it, which the dispatcher does ten
 * times a second; the maximum is exact.
 */
export class Integrator {
  private last: number;
  private value = 0;
  private sum = 0;
  private sumSq = 0;
  private span = 0;
  private max = 0;
  constructor(private readonly clock: () => number) {
    this.last = clock();
  }

  set(v: number): void {
    this.value = v;
    if (v > this.max) this.max = v;
  }

  /** Adds the time since the last reading at the current value. */
  tick(): void {
    const now = this.clock();
    const dt = (now - this.last) / 1000;
    this.last = now;
    if (dt <= 0) return;
    this.sum += this.value * dt;
    this.sumSq += this.value * this.value * dt;
    this.span += dt;
  }

  /** The period's figures; the next period starts now, from the current value. */
  reset(): { avg: number; stdDev: number; max: number; seconds: number } {
    this.tick();
    const avg = this.span > 0 ? this.sum / this.span : this.value;
    const variance = this.span > 0 ? this.sumSq / this.span - avg * avg : 0;
    const out = { avg, stdDev: variance > 0 ? Math.sqrt(variance) : 0, max: this.max, seconds: this.span };
    this.sum = 0;
    this.sumSq = 0;
    this.span = 0;
    this.max = this.value;
    return out;
  }
}

export type StartResult =
  | { readonly kind: 'execute'; readonly req: QsRequest }
  | { readonly kind: 'queued'; readonly req: QsRequest }
  | { readonly kind: 'reject'; readonly reason: RejectReason };

export class QueueSet {
  queues: Queue[] = [];
  queuing: QueuingConfig | undefined = undefined;
  /** The current concurrency limit in seats (NominalCL, or what borrowing made of it). */
  limit = 0;
  currentR = 0;
  private lastMs: number;
  private activeQueues = 0;
  /** Seats in use by requests that came through a queue (what R's rate counts). */
  private queuedSeatsInUse = 0;
  /** The last queue dispatched from; the search for the next starts after it (kube's robinIndex). */
  private robin = -1;
  private enqueues = 0;
  /** Seats of requests executing (queued and queueless) and waiting. */
  seatsInUse = 0;
  seatsWaiting = 0;
  requestsWaiting = 0;
  requestsExecuting = 0;
  // Totals since start, for dump_priority_levels.
  dispatched = 0;
  rejected = 0;
  timedOut = 0;
  cancelled = 0;
  readonly demand: Integrator;
  /** Hands by flow, for the current queue count and hand size (dealing hashes and divides BigInts). */
  private hands = new Map<string, number[]>();

  constructor(
    readonly name: string,
    private readonly clock: () => number,
  ) {
    this.lastMs = clock();
    this.demand = new Integrator(clock);
  }

  configure(queuing: QueuingConfig | undefined, limit: number): void {
    this.syncTime();
    const before = this.queuing;
    this.queuing = queuing;
    this.limit = limit;
    if (queuing && (!before || before.queues !== queuing.queues || before.handSize !== queuing.handSize)) this.hands.clear();
    // Queues are added at once; surplus ones go when they are empty (kube removes them by attrition).
    const want = queuing?.queues ?? 0;
    while (this.queues.length < want) this.queues.push(new Queue(this.queues.length));
    this.dropEmptySurplus();
    this.dispatchAsMuchAsPossible();
  }

  /** Surplus queues (beyond the configured count) go from the end once empty; hands only name the first ones. */
  private dropEmptySurplus(): void {
    const want = this.queuing?.queues ?? 0;
    while (this.queues.length > want && !this.queues[this.queues.length - 1]!.active) this.queues.pop();
    if (this.robin >= this.queues.length) this.robin = -1;
  }

  /** Moves R forward to now at the rate in force since the last change. */
  syncTime(): void {
    const now = this.clock();
    const dt = (now - this.lastMs) / 1000;
    this.lastMs = now;
    if (dt > 0 && this.activeQueues > 0) {
      this.currentR += (Math.min(this.queuedSeatsInUse + this.seatsWaiting, this.limit) / this.activeQueues) * dt;
    }
  }

  private canAccommodate(seats: number): boolean {
    // A request wider than the whole level runs alone (kube's quick fix before borrowing).
    if (seats > this.limit) return this.requestsExecuting === 0;
    return this.seatsInUse + seats <= this.limit;
  }

  /** Starts a request: it executes now, waits in a queue (onDispatch is called later), or is rejected. */
  start(flow: string, hash: () => bigint, seats: number, schema: string, distinguisher: string): StartResult {
    const q = this.queuing;
    if (!q || this.queues.length === 0) {
      // No queues, no virtual time: nothing here reads the clock (Exempt levels take this path on every request).
      if (!this.canAccommodate(seats)) {
        this.rejected++;
        return { kind: 'reject', reason: 'concurrency-limit' };
      }
      const req = this.newRequest(seats, schema, distinguisher, undefined, 0);
      req.state = 'executing';
      this.requestsExecuting++;
      this.seatsInUse += seats;
      this.dispatched++;
      this.demand.set(this.seatsInUse + this.seatsWaiting);
      return { kind: 'execute', req };
    }
    this.syncTime();
    const now = this.lastMs;
    const queue = this.shuffleShard(flow, hash);
    if (this.seatsInUse >= this.limit && queue.waiting.length >= q.queueLengthLimit) {
      this.rejected++;
      return { kind: 'reject', reason: 'queue-full' };
    }
    if (!queue.active) {
      queue.nextDispatchR = this.currentR;
      this.activeQueues++;
    }
    const req = this.newRequest(seats, schema, distinguisher, queue, now);
    // Nothing else waits and the seats are free: kube would enqueue and dispatch this very request at once.
    if (this.requestsWaiting === 0 && this.canAccommodate(seats)) {
      this.robin = queue.index;
      this.execute(req, queue, now);
      return { kind: 'execute', req };
    }
    queue.waiting.push(req);
    queue.waitingSeats += seats;
    this.requestsWaiting++;
    this.seatsWaiting += seats;
    this.boundNextDispatch(queue);
    this.demand.set(this.seatsInUse + this.seatsWaiting);
    this.dispatchAsMuchAsPossible();
    return req.state === 'executing' ? { kind: 'execute', req } : { kind: 'queued', req };
  }

  /** A request of an Exempt level: one seat counted (demand, dumps), never limited, never queued. */
  executeExempt(): void {
    this.requestsExecuting++;
    this.seatsInUse++;
    this.dispatched++;
    this.demand.set(this.seatsInUse);
  }

  finishExempt(): void {
    this.requestsExecuting--;
    this.seatsInUse--;
    this.demand.set(this.seatsInUse);
  }

  private newRequest(seats: number, schema: string, distinguisher: string, queue: Queue | undefined, now: number): QsRequest {
    return { seats, schema, distinguisher, queue, state: 'waiting', arrivalMs: now, arrivalR: this.currentR, startMs: 0, onDispatch: undefined };
  }

  /** The queue of the flow's hand with the least waiting work, starting the scan at a rotating offset (as kube). */
  private shuffleShard(flow: string, hash: () => bigint): Queue {
    const q = this.queuing!;
    if (this.queues.length === 1) return this.queues[0]!;
    let hand = this.hands.get(flow);
    if (!hand) {
      hand = dealHand(hash(), q.queues, q.handSize);
      // Bounded: a flood of distinct users must not grow it without end.
      if (this.hands.size >= 10_000) this.hands.clear();
      this.hands.set(flow, hand);
    }
    const offset = this.enqueues++ % hand.length;
    let best: Queue | undefined;
    for (let i = 0; i < hand.length; i++) {
      const queue = this.queues[hand[(offset + i) % hand.length]!]!;
      if (!best || queue.waitingSeats < best.waitingSeats) best = queue;
    }
    return best!;
  }

  private execute(req: QsRequest, queue: Queue, now: number): void {
    req.state = 'executing';
    req.startMs = now;
    this.requestsExecuting++;
    this.seatsInUse += req.seats;
    this.queuedSeatsInUse += req.seats;
    queue.executing++;
    queue.seatsInUse += req.seats;
    queue.nextDispatchR += req.seats * ESTIMATED_SERVICE_S;
    this.dispatched++;
    this.demand.set(this.seatsInUse + this.seatsWaiting);
  }

  dispatchAsMuchAsPossible(): void {
    while (this.requestsWaiting > 0 && this.seatsInUse < this.limit && this.dispatchOne());
    // A limit of zero (all seats lent away) still lets a request through when nothing executes.
    if (this.requestsWaiting > 0 && this.requestsExecuting === 0) this.dispatchOne();
  }

  /** Dispatches the head of the queue whose head finishes first in virtual time; false when it cannot run now. */
  private dispatchOne(): boolean {
    const n = this.queues.length;
    let min: Queue | undefined;
    let minFinish = Infinity;
    let minAt = -1;
    for (let k = 1; k <= n; k++) {
      const i = (this.robin + k) % n;
      const queue = this.queues[i]!;
      const head = queue.waiting[0];
      if (!head) continue;
      const finish = queue.nextDispatchR + head.seats * ESTIMATED_SERVICE_S;
      if (finish < minFinish) {
        minFinish = finish;
        min = queue;
        minAt = i;
      }
    }
    if (!min) return false;
    const head = min.waiting[0]!;
    if (!this.canAccommodate(head.seats)) return false;
    min.waiting.shift();
    min.waitingSeats -= head.seats;
    this.requestsWaiting--;
    this.seatsWaiting -= head.seats;
    this.robin = minAt;
    this.execute(head, min, this.lastMs);
    this.boundNextDispatch(min);
    const fn = head.onDispatch;
    head.onDispatch = undefined;
    fn?.();
    return true;
  }

  /** Anti-windup, as kube: a queue's next dispatch never precedes its head's arrival in virtual time. */
  private boundNextDispatch(queue: Queue): void {
    const head = queue.waiting[0];
    if (head && queue.nextDispatchR < head.arrivalR) queue.nextDispatchR = head.arrivalR;
  }

  /** An executing request is done: its queue is charged for the time it really took, and waiters get the seats. */
  finish(req: QsRequest): void {
    if (req.state !== 'executing') return;
    req.state = 'done';
    this.requestsExecuting--;
    this.seatsInUse -= req.seats;
    const queue = req.queue;
    if (queue) {
      this.syncTime();
      queue.executing--;
      queue.seatsInUse -= req.seats;
      this.queuedSeatsInUse -= req.seats;
      queue.nextDispatchR -= req.seats * (ESTIMATED_SERVICE_S - (this.lastMs - req.startMs) / 1000);
      this.boundNextDispatch(queue);
      if (!queue.active) {
        this.activeQueues--;
        this.dropEmptySurplus();
      }
    }
    this.demand.set(this.seatsInUse + this.seatsWaiting);
    this.dispatchAsMuchAsPossible();
  }

  /** A waiting request leaves its queue (its wait limit passed, or its client went); false if it was not waiting. */
  cancel(req: QsRequest, why: 'time-out' | 'cancelled'): boolean {
    const queue = req.queue;
    if (req.state !== 'waiting' || !queue) return false;
    const at = queue.waiting.indexOf(req);
    if (at < 0) return false;
    this.syncTime();
    queue.waiting.splice(at, 1);
    queue.waitingSeats -= req.seats;
    req.state = 'done';
    req.onDispatch = undefined;
    this.requestsWaiting--;
    this.seatsWaiting -= req.seats;
    this.rejected++;
    if (why === 'time-out') this.timedOut++;
    else this.cancelled++;
    this.boundNextDispatch(queue);
    if (!queue.active) {
      this.activeQueues--;
      this.dropEmptySurplus();
    }
    this.demand.set(this.seatsInUse + this.seatsWaiting);
    return true;
  }

  /** This set's clock (milliseconds). */
  now(): number {
    return this.clock();
  }

  isIdle(): boolean {
    return this.requestsWaiting === 0 && this.requestsExecuting === 0;
  }
}
