// client-go's leaderelection.LeaderElector over a coordination.k8s.io/v1
// Lease in the core backend's own store: candidates poll the lease every
// retry period (jittered), take it once its holder has not changed it for a
// lease duration of their own observation (never by its renewTime: clocks
// differ), the holder renews every retry period (a compare-and-swap on the
// resourceVersion it last wrote: one write, no read) and steps down when it
// cannot renew within the renew deadline — before anyone may take the lease.
// A graceful stop releases the lease (ReleaseOnCancel) so the next candidate
// takes it at once.
import type { KObject } from '../../../../lib/api/meta.js';
import type { ResourceType } from '../../../../lib/registry/types.js';
import { objectKey } from '../../keys.js';
import { prepareCreate, prepareUpdate } from '../../objects.js';
import { StoreError, type Store } from '../../store/types.js';
import { electionMetrics } from './metrics.js';
import { leaseWith, microTime, rawRecord, recordOf, type ElectionRecord } from './record.js';
import { JITTER_FACTOR, validTiming } from './timing.js';

export interface ElectionConfig {
  readonly namespace: string;
  readonly name: string;
  /** `<hostname>_<uuid>`, unique per process. */
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  /**
   * The store is this process's alone (the file store's directory lock, the memory store): a lease
   * found there at start was left by an earlier run of this process and is taken at once.
   */
  readonly exclusive?: boolean;
}

export interface ElectionDeps {
  readonly store: Store;
  readonly leases: ResourceType;
  /** Wall clock for the lease's times. */
  readonly clock: () => number;
  /** Monotonic clock for this process's own observations (expiry, deadlines). */
  readonly now?: () => number;
  readonly log: (msg: string) => void;
  readonly random?: () => number;
}

export interface ElectionCallbacks {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

export class LeaderElector {
  private readonly key: string;
  private readonly now: () => number;
  private readonly random: () => number;
  /** The lease as last read or written (its resourceVersion is the next compare-and-swap's). */
  private lease: KObject | undefined;
  private observed: ElectionRecord | undefined;
  private observedRaw = '';
  /** Monotonic time the observed record last changed. */
  private observedAt = -Infinity;
  /** Monotonic time the last successful write was sent: the fence counts from it. */
  private renewedSentAt = -Infinity;
  private leadingNow = false;
  private attempts = 0;
  private stopped = true;
  private stopping: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private deadline: NodeJS.Timeout | undefined;
  /** Bumped on every phase change: an attempt finishing in an older phase is ignored. */
  private phase = 0;
  private inFlight: Promise<unknown> = Promise.resolve();
  private settleFirst: ((leading: boolean) => void) | undefined;
  /** The outcome of the first attempt: leading or not (a failed read counts as not). */
  readonly firstAttempt: Promise<boolean>;

  constructor(
    readonly config: ElectionConfig,
    private readonly deps: ElectionDeps,
    private readonly callbacks: ElectionCallbacks,
  ) {
    const c = config;
    if (!validTiming(c.leaseDurationMs, c.renewDeadlineMs, c.retryPeriodMs))
      throw new Error('leader election needs leaseDuration > renewDeadline > 1.2 × retryPeriod > 0');
    this.key = objectKey(deps.leases, c.namespace, c.name);
    this.now = deps.now ?? (() => performance.now());
    this.random = deps.random ?? Math.random;
    this.firstAttempt = new Promise((resolve) => (this.settleFirst = resolve));
  }

  get identity(): string {
    return this.config.identity;
  }

  /** Leading, and renewed recently enough that nobody else can hold the lease: what a controller's write checks. */
  isLeading(): boolean {
    return this.leadingNow && this.now() - this.renewedSentAt < this.config.renewDeadlineMs;
  }

  /** The holder this process last saw ('' when none). */
  get observedHolder(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * kube's leaderElection health check: fails only while this process believes it leads but
   * has not renewed for a lease duration plus `toleranceMs` (the elector itself is stuck).
   */
  check(toleranceMs: number): void {
    if (!this.leadingNow) return;
    const since = this.now() - this.observedAt;
    if (since > this.config.leaseDurationMs + toleranceMs)
      throw new Error(`failed election to renew leadership on lease ${this.config.namespace}/${this.config.name}`);
  }

  start(): void {
    if (!this.stopped || this.stopping) return;
    this.stopped = false;
    electionMetrics.leading(this.config.name, false);
    this.deps.log(`leaderelection: attempting to acquire leader lease ${this.config.namespace}/${this.config.name} as ${this.identity}`);
    this.acquireRound(++this.phase);
  }

  /**
   * Stops electing for good; with `release`, a held lease is handed back (holder cleared, 1 s
   * duration). A second call awaits the first; a stop before any start settles `firstAttempt`.
   */
  stop(release: boolean): Promise<void> {
    this.stopping ??= this.halt(release);
    return this.stopping;
  }

  private async halt(release: boolean): Promise<void> {
    this.stopped = true;
    this.phase++;
    this.clearTimers();
    await this.inFlight.catch(() => undefined);
    if (this.leadingNow) this.stepDown('stopping');
    // An attempt that won just as the stop began left the lease ours too: it is released as well.
    if (release) await this.release();
    this.settleFirst?.(false);
  }

  private clearTimers(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.deadline) clearTimeout(this.deadline);
    this.timer = this.deadline = undefined;
  }

  private later(ms: number, phase: number, run: (phase: number) => void): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (phase === this.phase && !this.stopped) run(phase);
    }, ms);
    this.timer.unref();
  }

  /** One candidate attempt; then leading, or another attempt after a jittered retry period. */
  private acquireRound(phase: number): void {
    void this.attempt().then((ok) => {
      if (phase !== this.phase || this.stopped) return;
      if (ok) {
        this.leadingNow = true;
        electionMetrics.leading(this.config.name, true);
        this.deps.log(`leaderelection: successfully acquired lease ${this.config.namespace}/${this.config.name} as ${this.identity}`);
        this.settleFirst?.(true);
        this.callbacks.onStartedLeading();
        const renewing = ++this.phase;
        this.later(this.config.retryPeriodMs, renewing, (p) => this.renewRound(p));
        return;
      }
      this.settleFirst?.(false);
      this.later(this.nextAttemptIn(), phase, (p) => this.acquireRound(p));
    });
  }

  /**
   * client-go's jittered retry, except that a holder who went silent is tried again the moment its
   * lease expires by this process's observation rather than up to 2.2 retry periods later: only when
   * the next attempt is made changes, never what makes the lease takeable.
   */
  private nextAttemptIn(): number {
    const jittered = this.config.retryPeriodMs * (1 + this.random() * JITTER_FACTOR);
    if (!this.observed || this.observed.holderIdentity === '') return jittered;
    const untilExpiry = this.observedAt + this.config.leaseDurationMs - this.now();
    return untilExpiry > 0 ? Math.min(jittered, untilExpiry + 1) : jittered;
  }

  /**
   * One renewal round (client-go's PollImmediateUntil under the renew deadline): attempts every
   * retry period until one succeeds; none by the deadline = leadership lost.
   */
  private renewRound(phase: number): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = setTimeout(() => {
      this.deadline = undefined;
      if (phase !== this.phase || this.stopped) return;
      this.stepDown(`failed to renew lease ${this.config.namespace}/${this.config.name}: timed out after ${this.config.renewDeadlineMs}ms`);
      this.acquireRound(++this.phase);
    }, this.config.renewDeadlineMs);
    this.deadline.unref();
    const tryOnce = (): void => {
      void this.attempt().then((ok) => {
        if (phase !== this.phase || this.stopped) return;
        if (!ok) {
          // Another holder is on the lease (it was taken meanwhile): no point waiting for the deadline.
          if (this.observedHolder !== this.identity) {
            this.stepDown(`lease ${this.config.namespace}/${this.config.name} is held by ${this.observedHolder || 'nobody'}`);
            this.acquireRound(++this.phase);
            return;
          }
          this.later(this.config.retryPeriodMs, phase, tryOnce);
          return;
        }
        if (this.deadline) clearTimeout(this.deadline);
        this.deadline = undefined;
        const next = ++this.phase;
        this.later(this.config.retryPeriodMs, next, (p) => this.renewRound(p));
      });
    };
    tryOnce();
  }

  private stepDown(why: string): void {
    this.leadingNow = false;
    this.renewedSentAt = -Infinity;
    electionMetrics.leading(this.config.name, false);
    this.deps.log(`leaderelection: lost lease ${this.config.namespace}/${this.config.name}: ${why}`);
    this.callbacks.onStoppedLeading();
  }

  private attempt(): Promise<boolean> {
    const p = this.tryAcquireOrRenew().catch((err: unknown) => {
      this.deps.log(`leaderelection: ${this.config.namespace}/${this.config.name}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    });
    this.inFlight = p;
    return p;
  }

  private isLeaseValid(at: number): boolean {
    return this.observedAt + this.config.leaseDurationMs > at;
  }

  private isLeader(): boolean {
    return this.observed?.holderIdentity === this.identity;
  }

  private setObserved(r: ElectionRecord, at: number): void {
    this.observed = r;
    this.observedRaw = rawRecord(r);
    this.observedAt = at;
  }

  /** client-go's tryAcquireOrRenew, step by step. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const first = this.attempts++ === 0;
    const sentAt = this.now();
    const stamp = microTime(this.deps.clock());
    const mine: ElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.floor(this.config.leaseDurationMs / 1000),
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: 0,
    };
    // 1. The leader's fast path: update the lease it last wrote, without reading it.
    if (this.isLeader() && this.isLeaseValid(sentAt) && this.lease && this.observed) {
      const next = { ...mine, acquireTime: this.observed.acquireTime, leaseTransitions: this.observed.leaseTransitions };
      try {
        await this.write(next, this.lease);
        this.renewed(next, sentAt);
        return true;
      } catch (err) {
        this.deps.log(`leaderelection: failed to update lease optimistically: ${describe(err)}, falling back to slow path`);
      }
    }
    // 2. Read the lease, or create it.
    const current = await this.deps.store.get(this.key);
    if (!current) {
      try {
        await this.write(mine, undefined);
      } catch (err) {
        this.deps.log(`leaderelection: error initially creating lease: ${describe(err)}`);
        return false;
      }
      this.renewed(mine, sentAt);
      return true;
    }
    this.lease = current;
    // 3. A changed record restarts this process's count towards its expiry.
    const found = recordOf(current);
    if (rawRecord(found) !== this.observedRaw) this.setObserved(found, this.now());
    const expiredForUs = first && this.config.exclusive === true;
    if (found.holderIdentity !== '' && this.isLeaseValid(sentAt) && !this.isLeader() && !expiredForUs) return false;
    // 4. Take it (a new holder adds a transition) or keep it.
    let next: ElectionRecord;
    if (this.isLeader()) {
      next = { ...mine, acquireTime: found.acquireTime, leaseTransitions: found.leaseTransitions };
      electionMetrics.slowpath(this.config.name);
    } else {
      next = { ...mine, leaseTransitions: found.leaseTransitions + 1 };
    }
    try {
      await this.write(next, current);
    } catch (err) {
      this.deps.log(`leaderelection: failed to update lease: ${describe(err)}`);
      return false;
    }
    this.renewed(next, sentAt);
    return true;
  }

  private renewed(r: ElectionRecord, sentAt: number): void {
    this.setObserved(r, this.now());
    this.renewedSentAt = sentAt;
  }

  /** A compare-and-swap on the resourceVersion of `current`, or a create when there is none. */
  private async write(r: ElectionRecord, current: KObject | undefined): Promise<void> {
    const t = this.deps.leases;
    const c = this.config;
    if (!current) {
      this.lease = await this.deps.store.create(this.key, prepareCreate(t, leaseWith(r, c.namespace, c.name), this.deps.clock()));
      return;
    }
    const next = prepareUpdate(t, leaseWith(r, c.namespace, c.name, current), current, 'main', undefined, this.deps.clock());
    if (!next) return;
    this.lease = await this.deps.store.update(this.key, next, Number(current.metadata.resourceVersion));
  }

  /** client-go's release: holder cleared, duration 1 s, transitions kept. */
  private async release(): Promise<void> {
    const observed = this.observed;
    if (!this.lease || !observed || observed.holderIdentity !== this.identity) return;
    const stamp = microTime(this.deps.clock());
    const r: ElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: stamp,
      renewTime: stamp,
      leaseTransitions: observed.leaseTransitions,
    };
    try {
      await this.write(r, this.lease);
      this.setObserved(r, this.now());
      this.deps.log(`leaderelection: released lease ${this.config.namespace}/${this.config.name}`);
    } catch (err) {
      this.deps.log(`leaderelection: failed to release lease: ${describe(err)}`);
    }
  }
}

function describe(err: unknown): string {
  return err instanceof StoreError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
}
