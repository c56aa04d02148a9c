// Watch fan-out. Watchers are indexed by type prefix so a write visits only
// the watchers of its own type; prefixes shorter than a type (`core/`) sit in
// a `broad` set that sees every write. Delivery is serialised through one
// queue so that a sink which writes to the store from inside event() cannot
// make another watcher see revisions out of order.
import type { StoreEvent, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { typePrefixOf } from './keys.js';

// What a live entry holds is what every idle watch holds: its set rather than a closure over it, and
// no queue once it is live (the closure's context kept the replayed events for the watch's life).
class Entry implements Watcher {
  private stopped = false;
  /** Events that arrived before the replay ran; undefined once live. */
  private queued: StoreEvent[] | undefined = [];

  constructor(
    readonly prefix: string,
    private readonly sink: WatchSink,
    /** Highest rev delivered or skipped; events at or below it are never sent. */
    private cursor: number,
    private readonly set: Set<Entry>,
  ) {}

  /** Replays history, then whatever arrived meanwhile (also while this drains: a sink may write), then goes live. */
  start(replay: StoreEvent[]): void {
    for (const ev of replay) this.emit(ev);
    const queued = this.queued ?? [];
    for (let i = 0; i < queued.length; i++) this.emit(queued[i]!);
    this.queued = undefined;
  }

  deliver(ev: StoreEvent): void {
    if (this.stopped || !ev.key.startsWith(this.prefix)) return;
    if (this.queued === undefined) this.emit(ev);
    else this.queued.push(ev);
  }

  private emit(ev: StoreEvent): void {
    if (this.stopped || ev.rev <= this.cursor) return;
    this.cursor = ev.rev;
    try {
      this.sink.event(ev);
    } catch (err) {
      // A throwing consumer must not break the write that fed it; it loses its feed instead.
      this.fail(new StoreError('unreachable', `watch consumer failed: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  fail(err: StoreError): void {
    if (this.stopped) return;
    this.stop();
    try {
      this.sink.error(err);
    } catch (e) {
      process.emitWarning(`watch sink error handler threw: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    if (this.queued) this.queued = [];
    this.set.delete(this);
  }
}

export class WatchHub {
  private readonly byType = new Map<string, Set<Entry>>();
  private readonly broad = new Set<Entry>();
  private readonly pending: { ev: StoreEvent; type: string }[] = [];
  private dispatching = false;

  /**
   * Registers a watcher now (so no commit is missed) and replays `replay`
   * (events up to `currentRev`) in a microtask, so the caller holds the
   * Watcher before its sink runs.
   */
  add(prefix: string, fromRev: number, replay: StoreEvent[], sink: WatchSink): Watcher {
    const type = typePrefixOf(prefix);
    const set = type === undefined ? this.broad : this.setFor(type);
    const entry = new Entry(prefix, sink, fromRev, set);
    set.add(entry);
    queueMicrotask(() => entry.start(replay));
    return entry;
  }

  dispatch(ev: StoreEvent, type: string): void {
    if (this.dispatching) {
      this.pending.push({ ev, type });
      return;
    }
    this.dispatching = true;
    try {
      // The event itself at once (no queue entry made for it), then what its watchers' sinks wrote meanwhile.
      this.deliver(ev, type);
      for (let i = 0; i < this.pending.length; i++) {
        const p = this.pending[i]!;
        this.deliver(p.ev, p.type);
      }
    } finally {
      this.pending.length = 0;
      this.dispatching = false;
    }
  }

  private deliver(ev: StoreEvent, type: string): void {
    const set = this.byType.get(type);
    if (set !== undefined) for (const w of set) w.deliver(ev);
    if (this.broad.size !== 0) for (const w of this.broad) w.deliver(ev);
  }

  /** Ends every watch with err (store closing or broken). */
  failAll(err: StoreError): void {
    const all = [...this.broad, ...[...this.byType.values()].flatMap((s) => [...s])];
    for (const w of all) w.fail(err);
  }

  private setFor(type: string): Set<Entry> {
    let set = this.byType.get(type);
    if (!set) this.byType.set(type, (set = new Set()));
    return set;
  }
}
