// One revision domain of the Redis store as a process sees it: the keys of
// one hash slot (redis-keys.ts), the watch cache fed by that domain's change
// feed, its consistent-read point, its compactor and its open watches.
// Standalone Redis: one domain holds every type. Redis Cluster: one domain
// per type (see README.md, "Redis Cluster").
import type { Redis } from 'ioredis';
import type { WatchSink, Watcher } from './types.js';
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import type { StoreState, StateOptions } from './state.js';
import type { RedisKeys } from './redis-keys.js';
import { unreachable } from './redis-connect.js';
import { readPoint } from './redis-scripts.js';
import { loadState } from './redis-state.js';
import { FeedReader, type FeedHost } from './redis-feed.js';
import { ReadFence, type FenceStats } from './redis-readindex.js';
import { FeedCompactor } from './redis-compact.js';

export interface DomainOptions extends Omit<StateOptions, 'startRev'> {
  syncTimeoutMs: number;
  compactIntervalMs: number;
  /** Cluster domains raise their allocator to the process clock on reads. */
  cluster: boolean;
  log?: (msg: string) => void;
}

/** The process-wide part a domain reports to: the highest revision seen across domains. */
export interface DomainOwner {
  /** The highest revision this process has seen in any domain. */
  readonly floor: number;
  observed(rev: number): void;
}

interface OpenWatch {
  watcher: Watcher;
  sink: WatchSink;
}

/** Where a domain stands in Redis: the allocator (next write > alloc) and the newest write. */
export interface Point {
  alloc: number;
  last: number;
}

export class Domain implements FeedHost {
  private current: StoreState;
  private downErr: StoreError | undefined;
  private closed = false;
  private readonly watches = new Set<OpenWatch>();
  private readonly points: ReadFence<Point>;
  private readonly feed: FeedReader;
  private readonly compactor: FeedCompactor;

  private constructor(
    private readonly client: Redis,
    private readonly blocking: Redis,
    readonly keys: RedisKeys,
    state: StoreState,
    private readonly opts: DomainOptions,
    private readonly owner: DomainOwner,
  ) {
    this.current = state;
    this.points = new ReadFence<Point>(async () => {
      if (opts.cluster) return readPoint(this.client, this.keys, this.owner.floor);
      const rev = Number((await this.client.get(this.keys.rev)) ?? 0);
      return { alloc: rev, last: rev };
    });
    this.feed = new FeedReader(blocking, client, keys, this);
    this.compactor = new FeedCompactor(client, keys, opts.historyWindowMs, state.clock, opts.compactIntervalMs);
  }

  /** Loads the domain's snapshot and starts following its feed (blocking is this domain's own connection). */
  static async open(client: Redis, blocking: Redis, keys: RedisKeys, opts: DomainOptions, owner: DomainOwner): Promise<Domain> {
    // A cluster domain opens on the type's first use, possibly for a watch from a revision before it.
    const state = await loadState(client, keys, opts, opts.cluster);
    owner.observed(state.rev);
    const d = new Domain(client, blocking, keys, state, opts, owner);
    try {
      await d.feed.mark();
    } catch (err) {
      d.compactor.stop();
      state.close(unreachable(err));
      throw err;
    }
    d.feed.start();
    return d;
  }

  get state(): StoreState {
    return this.current;
  }

  live(): StoreState {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
    if (this.downErr) throw this.downErr;
    return this.current;
  }

  /** A write of this process was acknowledged (its feed entry may reuse obj). */
  wrote(rev: number, prev: number, key: string, json: string, obj: KObject | undefined, at: number): void {
    this.feed.wrote(rev, prev, key, json, obj, at);
  }

  /** Redis's read point (shared by concurrent readers, never older than the call). */
  async point(): Promise<Point> {
    try {
      return await this.points.point();
    } catch (err) {
      throw unreachable(err);
    }
  }

  /** Revision checks sent and reads the feed answered without one (tests, bench). */
  get readStats(): Readonly<FenceStats> {
    return this.points.stats;
  }

  /** The cache and the point it is consistent with: every write Redis had acknowledged when this call began. */
  async sync(): Promise<{ state: StoreState; point: Point }> {
    this.live();
    let point;
    try {
      point = await this.points.fresh();
    } catch (err) {
      throw unreachable(err);
    }
    if (point === undefined) {
      // A feed read sent after the call began came back not full: the cache is at Redis's revision.
      const state = this.live();
      return { state, point: { alloc: state.rev, last: state.rev } };
    }
    return { state: await this.catchUp(point.last), point };
  }

  async catchUp(rev: number): Promise<StoreState> {
    const state = this.live();
    if (rev <= state.rev) return state;
    try {
      await state.waitForRev(rev, this.opts.syncTimeoutMs);
    } catch (err) {
      if (this.current !== state) return this.catchUp(rev); // rebuilt meanwhile
      if (err instanceof StoreError && err.code === 'too-large') {
        throw new StoreError('unreachable', `the watch cache is behind redis: at ${state.rev}, want ${rev}`);
      }
      throw err;
    }
    return this.current;
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    const state = this.live();
    const open: OpenWatch = {
      sink,
      watcher: state.watch(prefix, fromRev, {
        event: (ev) => sink.event(ev),
        error: (err) => {
          this.watches.delete(open);
          sink.error(err);
        },
      }),
    };
    this.watches.add(open);
    return {
      stop: () => {
        this.watches.delete(open);
        open.watcher.stop();
      },
    };
  }

  compact(): Promise<number> {
    return this.compactor.run();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.compactor.stop();
    await this.feed.stop();
    const err = new StoreError('unreachable', 'store is closed');
    this.failWatches(err);
    this.current.close(err);
    this.blocking.disconnect();
  }

  // FeedHost

  async resync(reason: string): Promise<void> {
    const state = await loadState(this.client, this.keys, this.opts);
    const old = this.current;
    this.current = state;
    this.owner.observed(state.rev);
    const err = new StoreError('gone', `watch history was lost: ${reason}`, state.rev);
    this.failWatches(err);
    old.close(err);
    this.opts.log?.(`redis store: cache of ${this.keys.stem} rebuilt at revision ${state.rev}: ${reason}`);
  }

  down(err: StoreError): void {
    this.downErr = err;
    // Reads waiting for a check would wait for a cache that no longer follows Redis.
    this.points.failAll(err);
    this.current.failWaits(err);
    this.failWatches(err);
    this.opts.log?.(`redis store: ${this.keys.stem} unavailable: ${err.message}`);
  }

  up(): void {
    this.downErr = undefined;
    this.opts.log?.(`redis store: ${this.keys.stem} available again`);
  }

  observed(rev: number): void {
    this.owner.observed(rev);
  }

  sending(): number {
    return this.points.tick();
  }

  caughtUp(sent: number): void {
    // A cluster read point is the allocator raised to the process's floor, which the feed cannot show.
    if (!this.opts.cluster) this.points.caughtUp(sent);
  }

  private failWatches(err: StoreError): void {
    const all = [...this.watches];
    this.watches.clear();
    for (const w of all) {
      w.watcher.stop();
      try {
        w.sink.error(err);
      } catch (e) {
        process.emitWarning(`watch sink error handler threw: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
