// The APF dispatcher, in the chain where the plain in-flight limit was: the
// server's concurrency limit (--max-requests-inflight plus
// --max-mutating-requests-inflight) is split over the priority levels by
// nominalConcurrencyShares (kube's NominalCL = ceil(ServerCL·NCS/ΣNCS), the
// Exempt level's shares included). Each level is a QueueSet (queueset.ts):
// fair queuing over shuffle-sharded queues, or Reject when full. Exempt
// levels never wait; their seats are counted all the same. Every 10 s the
// levels' limits are moved by borrowing (borrowing.ts): idle levels lend
// (lendablePercent), busy ones borrow (up to borrowingLimitPercent).
import { tooManyRequests } from '../../lib/api/status.js';
import { carryHeader } from '../../lib/http/carried.js';
import { isLongRunning, type RequestContext } from '../pipeline/context.js';
import type { Seat } from '../pipeline/seat.js';
import { isMutatingVerb } from '../../lib/api/verbs.js';
import { inflight } from '../metrics/requests.js';
import type { Classification, Classifier } from './classifier.js';
import type { PriorityLevel } from './config.js';
import { BORROWING_PERIOD_MS, boundsOf, currentLimits, emptyStats, updateStats, type Bounds, type DemandStats } from './borrowing.js';
import { QueueSet, type QsRequest } from './queueset.js';
import { flowHash } from './shuffle.js';
import { maxSeatsOf, seatsOf, type ObjectCounts } from './width.js';
import { flowSeries, setLevelLimits, type FlowSeries } from '../metrics/flowcontrol.js';

/** kube-apiserver's APF response headers. */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

const RETRY_AFTER_S = 1;
/** An upgrade's: classified, but holding nothing. */
const NO_SEAT: Seat = Object.freeze({ release() {} });
/** kube's wait limits: a quarter of the request's deadline, at most a minute; 15 s without a deadline. */
const MAX_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 15_000;
const DEMAND_SAMPLE_MS = 100;

export class LevelState {
  bounds: Bounds = boundsOf(0, 0, undefined);
  /** The limit in force: NominalCL until borrowing moves it. */
  currentCL = 0;
  maxSeats = 1;
  readonly stats: DemandStats = emptyStats();
  readonly qs: QueueSet;
  /** The metrics series of this level with each flow schema, looked up once. */
  private readonly series = new Map<string, FlowSeries>();
  constructor(
    public config: PriorityLevel,
    clock: () => number,
  ) {
    this.qs = new QueueSet(config.name, clock);
  }

  seriesFor(schema: string): FlowSeries {
    let s = this.series.get(schema);
    if (!s) {
      s = flowSeries(this.config.name, schema);
      this.series.set(schema, s);
    }
    return s;
  }
}

export interface DispatcherOptions {
  /** Milliseconds; the queues' virtual time and wait limits read it (tests pass a fake). */
  clock?: () => number;
  /** Stored object counts, for the width of LISTs. */
  objectCounts?: ObjectCounts;
  /** How often limits are moved by borrowing (kube: 10 s); 0 = only when `adjustBorrowing()` is called. */
  borrowingPeriodMs?: number;
}

/** A seat, or the promise of one (the request waits in a queue). */
export type Admission = Seat | Promise<Seat>;

/** apiserver_current_inflight_requests' kind of a request holding a seat; none for a watch (long-running: kube counts it apart). */
type InflightKind = 'mutating' | 'readOnly' | undefined;

function inflightKind(verb: string): InflightKind {
  return verb === 'watch' ? undefined : isMutatingVerb(verb) ? 'mutating' : 'readOnly';
}

/** An Exempt level's request: counted (one seat, never limited), with no request record — the hot path of system:masters. */
class ExemptSeat implements Seat {
  #held = true;
  constructor(
    private readonly qs: QueueSet,
    private readonly series: FlowSeries,
    private readonly kind: InflightKind,
  ) {
    qs.executeExempt();
    series.executing++;
    series.dispatched++;
    series.ran.observe(0);
    if (kind) inflight[kind]++;
  }

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.qs.finishExempt();
    this.series.executing--;
    if (this.kind) inflight[this.kind]--;
  }
}

/** A request's seats in a limited level, from the moment it executes. */
class LevelSeat implements Seat {
  constructor(
    private readonly qs: QueueSet,
    private readonly req: QsRequest,
    private readonly series: FlowSeries,
    private readonly kind: InflightKind,
  ) {}

  /** The request runs (at once, or dispatched from its queue). */
  executing(waitedS: number): this {
    const series = this.series;
    series.executing++;
    series.dispatched++;
    series.ran.observe(waitedS);
    if (this.kind) inflight[this.kind]++;
    return this;
  }

  release(): void {
    if (this.req.state !== 'executing') return;
    this.qs.finish(this.req);
    this.series.executing--;
    if (this.kind) inflight[this.kind]--;
  }
}

export class Dispatcher {
  readonly states = new Map<string, LevelState>();
  /**
   * The last classification admitted, with its level's state and its series: the classifier hands a client's
   * repeated requests one Classification object, and the two lookups by name compared the level's and the schema's
   * names character by character (two strings of one content), ~0.7k instructions a request. Forgotten on resize.
   */
  #last: { readonly c: Classification; readonly s: LevelState; readonly series: FlowSeries } | undefined;
  private readonly clock: () => number;
  private readonly counts: ObjectCounts | undefined;
  private readonly timers: NodeJS.Timeout[] = [];

  /** `total` 0 = no limit (the in-flight flags' meaning of 0). */
  constructor(
    private readonly classifier: Classifier,
    private readonly total: number,
    opts: DispatcherOptions = {},
  ) {
    this.clock = opts.clock ?? Date.now;
    this.counts = opts.objectCounts;
    classifier.onLevels((levels) => this.resize(levels));
    const period = opts.borrowingPeriodMs ?? BORROWING_PERIOD_MS;
    if (period > 0 && total > 0) {
      // Seat demand is integrated at 10 Hz (its hot-path updates read no clock), limits moved every period.
      this.timers.push(
        setInterval(() => {
          for (const s of this.states.values()) s.qs.demand.tick();
        }, DEMAND_SAMPLE_MS),
      );
      this.timers.push(setInterval(() => this.adjustBorrowing(), period));
      for (const t of this.timers) t.unref();
    }
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
  }

  /**
   * One borrowing period's end (kube's updateBorrowing): each level's seat
   * demand since the last is folded into its stats, and the limits are
   * shared out again.
   */
  adjustBorrowing(): void {
    if (this.total === 0) return;
    const states = [...this.states.values()];
    for (const s of states) {
      s.qs.syncTime();
      const obs = s.qs.demand.reset();
      updateStats(s.stats, obs);
    }
    const limits = currentLimits(states.map((s) => ({ exempt: s.config.exempt, bounds: s.bounds, stats: s.stats })));
    states.forEach((s, i) => this.setLimit(s, limits[i]!));
  }

  private setLimit(s: LevelState, cl: number): void {
    s.currentCL = cl;
    setLevelLimits(s.config.name, s.bounds.nominalCL, cl);
    if (!s.config.exempt) s.qs.configure(s.config.queuing, cl);
  }

  private resize(levels: ReadonlyMap<string, PriorityLevel>): void {
    this.#last = undefined;
    let sum = 0;
    for (const l of levels.values()) sum += l.shares;
    for (const l of levels.values()) {
      let s = this.states.get(l.name);
      if (!s) {
        s = new LevelState(l, this.clock);
        this.states.set(l.name, s);
      }
      s.config = l;
      const nominalCL = this.total === 0 ? Infinity : sum === 0 ? 0 : Math.ceil((this.total * l.shares) / sum);
      const before = s.bounds;
      s.bounds = boundsOf(nominalCL, l.lendablePercent, l.exempt ? undefined : l.borrowingLimitPercent);
      s.maxSeats = maxSeatsOf(nominalCL, l.queuing?.handSize ?? 1);
      // A new or resized level starts at its NominalCL; otherwise what borrowing gave it, within the new bounds.
      const current = before.nominalCL !== nominalCL ? nominalCL : Math.min(Math.max(s.currentCL, s.bounds.minCL), s.bounds.maxCL);
      s.currentCL = current;
      s.qs.configure(l.exempt ? undefined : l.queuing, l.exempt ? Infinity : current);
      setLevelLimits(l.name, nominalCL, current);
    }
    // A removed level's state goes; its executing requests finish on the QueueSet they hold.
    for (const name of [...this.states.keys()]) if (!levels.has(name)) this.states.delete(name);
  }

  /**
   * Classifies the request (setting kube's APF headers), then takes its seats
   * in its level: the release at once when they are free (no promise turn),
   * a promise when the request waits in a queue; throws 429 when refused.
   * A watch holds its seats until it is initialized (ctx.watchInitialized);
   * other long-running requests (upgrades: exec, attach, port-forward) are
   * classified but hold no seat, as kube's filter lets them through.
   */
  admit(ctx: RequestContext): Admission {
    const i = ctx.info;
    const c = this.classifier.classifyAs(ctx.user, i);
    carryHeader(ctx, FLOW_SCHEMA_UID_HEADER, c.schema.uid);
    carryHeader(ctx, PRIORITY_LEVEL_UID_HEADER, c.level.uid);
    if (i.verb !== 'watch' && isLongRunning(ctx)) return NO_SEAT;
    let s: LevelState | undefined;
    let series: FlowSeries;
    const last = this.#last;
    if (last !== undefined && last.c === c) {
      s = last.s;
      series = last.series;
    } else {
      s = this.states.get(c.level.name);
      if (!s) {
        // Classified against a level the dispatcher has not sized yet (a race with a watch event): size now.
        this.resize(this.classifier.priorityLevels());
        s = this.states.get(c.level.name);
        if (!s) throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
      }
      series = s.seriesFor(c.schema.name);
      this.#last = { c, s, series };
    }
    const qs = s.qs;
    if (c.level.exempt) return new ExemptSeat(qs, series, inflightKind(i.verb));
    const seats = seatsOf(i, ctx.query, this.counts, s.maxSeats);
    const flow = c.flow;
    const started = qs.start(flow, () => flowHash(flow), seats, c.schema.name, c.distinguisher);
    if (started.kind === 'reject') {
      series.rejected[started.reason]++;
      series.refused.observe(0);
      throw tooManyRequests('Too many requests, please try again later.', RETRY_AFTER_S);
    }
    const req = started.req;
    const seat = new LevelSeat(qs, req, series, inflightKind(i.verb));
    if (started.kind === 'execute') return seat.executing(0);
    req.detail = { user: ctx.user.username, info: i };
    return this.wait(ctx, qs, req, series, seat);
  }

  /** A queued request: resolves when dispatched; 429 when its wait limit passes or its client goes. */
  private wait(ctx: RequestContext, qs: QueueSet, req: QsRequest, series: FlowSeries, seat: LevelSeat): Promise<Seat> {
    series.inqueue++;
    return new Promise<Seat>((resolve, reject) => {
      ctx.queued = true;
      const waited = () => (this.clock() - req.arrivalMs) / 1000;
      const leave = (why: 'time-out' | 'cancelled') => {
        if (!qs.cancel(req, why)) return;
        ctx.queued = false;
        cleanup();
        series.inqueue--;
        series.rejected[why]++;
        series.refused.observe(waited());
        reject(
          tooManyRequests(
            why === 'cancelled' ? 'the client went away while the request was queued' : 'Too many requests, please try again later.',
            RETRY_AFTER_S,
          ),
        );
      };
      const onDeadline = () => leave('time-out');
      const onClose = () => leave('cancelled');
      const waitMs = ctx.timeoutMs !== undefined ? Math.min(ctx.timeoutMs / 4, MAX_WAIT_MS) : DEFAULT_WAIT_MS;
      const timer = setTimeout(onDeadline, waitMs);
      const cleanup = () => {
        clearTimeout(timer);
        ctx.cancel.offAbort(onDeadline);
        ctx.res.off('close', onClose);
      };
      req.onDispatch = () => {
        ctx.queued = false;
        cleanup();
        series.inqueue--;
        resolve(seat.executing(waited()));
      };
      ctx.cancel.onAbort(onDeadline);
      // on(), not once() (a wrapper more per queued request): cleanup() takes it off either way.
      ctx.res.on('close', onClose);
    });
  }
}
