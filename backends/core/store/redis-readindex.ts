// Consistent reads ("Most Recent"): a read must see every write Redis had
// acknowledged to anyone when the read arrived. Two things prove the watch
// cache has that: a revision check *sent after the read arrived* (then the
// cache must reach the revision it answered), or a change-feed read *sent
// after the read arrived* that came back not full (the cache then holds
// everything Redis had when that read ran, at or after the arrival).
//
// Arrivals, check starts and feed sends are ordered by one counter (ticks).
// At most one check is in flight; every read arriving meanwhile waits for
// the next one, because the one in flight may have been answered before it
// arrived. When a check returns, the reads queued behind it start one more,
// unless a feed read sent after all of them already covered them: under a
// write load the feed answers most reads and checks become rare.

/** How a read was proven fresh: by a check's answer, or (undefined) by the feed itself. */
export type Freshness<T> = T | undefined;

interface Waiter<T> {
  arrival: number;
  /** currentRev(), too-large checks: the caller needs the check's answer itself. */
  needsPoint: boolean;
  resolve(v: Freshness<T>): void;
  reject(err: unknown): void;
}

export interface FenceStats {
  /** Revision checks sent to Redis. */
  checks: number;
  /** Reads answered because a feed read covered them. */
  byFeed: number;
}

export class ReadFence<T> {
  private ticks = 0;
  /** Waiting for the next check (none started after they arrived yet). */
  private queued: Waiter<T>[] = [];
  /** Waiting for the check in flight. */
  private batch: Waiter<T>[] = [];
  private inflight = false;
  readonly stats: FenceStats = { checks: 0, byFeed: 0 };

  constructor(private readonly fetch: () => Promise<T>) {}

  /** A feed read is about to be sent: pass the tick to caughtUp when it returned not full. */
  tick(): number {
    return ++this.ticks;
  }

  /** Resolves once the cache may answer: undefined when a feed read covered the read, else a check's answer. */
  fresh(): Promise<Freshness<T>> {
    return this.wait(false);
  }

  /** A check's answer, from a check started after this call. */
  point(): Promise<T> {
    return this.wait(true) as Promise<T>;
  }

  /** A feed read sent at tick `sent` came back not full and was applied: it covers every read that arrived before. */
  caughtUp(sent: number): void {
    this.batch = this.cover(this.batch, sent);
    this.queued = this.cover(this.queued, sent);
  }

  /** Ends every waiting read with err (the feed broke: the cache can no longer catch up). */
  failAll(err: unknown): void {
    const all = [...this.batch, ...this.queued];
    this.batch = [];
    this.queued = [];
    for (const w of all) w.reject(err);
  }

  private wait(needsPoint: boolean): Promise<Freshness<T>> {
    return new Promise((resolve, reject) => {
      this.queued.push({ arrival: this.tick(), needsPoint, resolve, reject });
      if (!this.inflight) this.start();
    });
  }

  private cover(list: Waiter<T>[], sent: number): Waiter<T>[] {
    if (list.length === 0) return list;
    const still: Waiter<T>[] = [];
    for (const w of list) {
      if (!w.needsPoint && w.arrival < sent) {
        this.stats.byFeed++;
        w.resolve(undefined);
      } else still.push(w);
    }
    return still;
  }

  private start(): void {
    // Everyone queued arrived before this point: the check covers them all.
    const batch = this.queued;
    this.queued = [];
    this.batch = batch;
    this.inflight = true;
    this.stats.checks++;
    this.fetch().then(
      (v) => this.settle((w) => w.resolve(v)),
      (err: unknown) => this.settle((w) => w.reject(err)),
    );
  }

  private settle(answer: (w: Waiter<T>) => void): void {
    const batch = this.batch;
    this.batch = [];
    this.inflight = false;
    for (const w of batch) answer(w);
    if (this.queued.length > 0) this.start();
  }
}
