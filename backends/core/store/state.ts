// The in-memory state both stores serve reads from: live objects per type
// (sorted keys + map), one revision counter, the history log, watchers and
// revision waiters. Stores decide *when* a write becomes visible (memory: at
// once; file: after fsync) and call commit() then, in revision order.
import { LRUCache } from 'lru-cache';
import type { KObject } from '../../../lib/api/meta.js';
import { listItemBytes } from '../../../lib/api/json.js';
import type { ListOptions, ListResult, StoreEvent, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { History } from './history.js';
import type { KeptEvent } from './history.js';
import { ParsedCache, isBytes, objectOfKept } from './kept.js';
import type { Kept } from './kept.js';
import { WatchHub } from './watchers.js';
import { RevisionWaiters } from './revwaiters.js';
import { assertKey, typePrefixOf } from './keys.js';
import { SortedKeys } from './sortedkeys.js';
import { restamp } from './objects.js';
import { listView, snapshotAt } from './views.js';
import type { TypeView } from './views.js';

export interface StateOptions {
  historyWindowMs: number;
  clock?: () => number;
  /** How long get(key, minRev) waits for a future revision before `too-large` (default 3000). */
  tooLargeWaitMs?: number;
  /** Revision the state starts at (a loaded snapshot); history before it is gone. */
  startRev?: number;
}

const SNAPSHOT_CACHE = 8;
/**
 * The last events committed, kept as dispatched (a ring by revision): a watch replaying them gets the live
 * watchers' own event objects, and so the encodings memoized on those (one per encoding however many
 * watchers, as with objects kept), not its own parse of the history's bytes.
 */
const RECENT_EVENTS = 1024;

export class StoreState {
  readonly clock: () => number;
  readonly tooLargeWaitMs: number;
  private revision: number;
  private readonly types = new Map<string, TypeView>();
  private readonly history: History;
  private readonly hub = new WatchHub();
  private readonly snapshots = new LRUCache<string, TypeView>({ max: SNAPSHOT_CACHE });
  private readonly waiters = new RevisionWaiters();
  private readonly timer: NodeJS.Timeout;
  /** Keys whose stored value cannot be decoded: key → why (see markCorrupt). */
  private readonly corrupt = new Map<string, string>();
  /**
   * The last get's type prefix and its view (a view, once made, stays): a key that starts with that prefix
   * has it as its own, so reads of one type cut and hash no prefix string each (~0.2k instructions a GET).
   */
  private lastType = '';
  private lastView: TypeView | undefined;
  /** The objects last parsed from kept bytes (a hot key's GET parses nothing). */
  private readonly parsed = new ParsedCache();
  /** The last RECENT_EVENTS events as dispatched, at rev % RECENT_EVENTS. */
  private readonly recent: (StoreEvent | undefined)[] = new Array<StoreEvent | undefined>(RECENT_EVENTS).fill(undefined);
  /** A history entry as a replay sends it: the dispatched event while it is among the recent ones, else parsed. */
  private readonly replayed = (kept: KeptEvent): StoreEvent => {
    const ev = this.recent[kept.rev % RECENT_EVENTS];
    return ev !== undefined && ev.rev === kept.rev ? ev : eventOf(kept);
  };
  /** listView's items: parsed or found among the recent ones, none remembered (a list would push out the hot keys). */
  private readonly peek = (key: string, kept: Kept): KObject => this.parsed.peek(key, kept);

  constructor(opts: StateOptions) {
    if (!(opts.historyWindowMs > 0)) throw new Error(`invalid historyWindowMs ${opts.historyWindowMs}: must be > 0`);
    this.clock = opts.clock ?? Date.now;
    this.tooLargeWaitMs = opts.tooLargeWaitMs ?? 3000;
    this.revision = opts.startRev ?? 0;
    this.history = new History(opts.historyWindowMs, this.clock, this.revision);
    // Lazy compaction covers readers; the timer bounds memory when nobody reads.
    this.timer = setInterval(() => this.history.compact(), Math.min(opts.historyWindowMs, 30_000));
    this.timer.unref();
  }

  get rev(): number {
    return this.revision;
  }

  get compactedRev(): number {
    this.history.compact();
    return this.history.compactedRev;
  }

  get(key: string): KObject | undefined {
    let view = this.lastView;
    if (view === undefined || !key.startsWith(this.lastType)) {
      const type = typePrefixOf(key);
      if (type === undefined) return undefined;
      view = this.types.get(type);
      if (view === undefined) return undefined;
      this.lastType = type;
      this.lastView = view;
    }
    const kept = view.objects.get(key);
    return kept === undefined ? undefined : this.parsed.objectOf(key, kept);
  }

  /** get() for a client read: `corrupt` when the key holds a value that cannot be decoded. */
  read(key: string): KObject | undefined {
    const why = this.corrupt.size === 0 ? undefined : this.corrupt.get(key);
    if (why !== undefined) throw corruptError([[key, why]]);
    return this.get(key);
  }

  /** read(key) as its list piece: the kept bytes themselves, or the kept object's (listItemBytes). */
  readPiece(key: string): Buffer | undefined {
    const why = this.corrupt.size === 0 ? undefined : this.corrupt.get(key);
    if (why !== undefined) throw corruptError([[key, why]]);
    const view = this.types.get(typePrefixOf(key) ?? '');
    const kept = view?.objects.get(key);
    return kept === undefined ? undefined : isBytes(kept) ? kept : listItemBytes(kept);
  }

  /** Whether key holds an undecodable value. */
  isCorrupt(key: string): boolean {
    return this.corrupt.has(key);
  }

  /**
   * Records that key holds a value that cannot be decoded (a snapshot row, a
   * test hook), without an event: reads of it and lists over it fail with
   * `corrupt` until a write replaces it or deleteCorrupt removes it.
   */
  markCorrupt(key: string, why: string): void {
    const view = this.viewFor(assertKey(key));
    if (view.objects.delete(key)) view.keys.remove(key);
    this.corrupt.set(key, why);
  }

  /** Places a loaded object (or its kept bytes) without an event (snapshot load at startRev). */
  load(key: string, obj: Kept): void {
    const view = this.viewFor(assertKey(key));
    if (!view.objects.has(key)) view.keys.insert(key);
    view.objects.set(key, obj);
  }

  /**
   * Makes a write visible: `obj` (frozen, stamped with rev) for a put, undefined
   * for a delete. `at` is the commit time (replayed logs pass their own). With
   * `bytes` (obj's list piece, lib/api/json.ts keptJsonBytes), the state keeps
   * the bytes only, and the history the same bytes: one form per object (kept.ts).
   */
  commit(key: string, rev: number, obj: KObject | undefined, at = this.clock(), bytes?: Buffer): StoreEvent {
    return this.apply(key, rev, obj, at, bytes, true);
  }

  /**
   * commit of a replayed record (a store's open): `obj` is not remembered as the bytes' parse, so a replay of
   * 100,000 records does not keep the last few thousand objects alive long enough to be promoted with them.
   */
  replay(key: string, rev: number, obj: KObject | undefined, at: number, bytes?: Buffer): StoreEvent {
    return this.apply(key, rev, obj, at, bytes, false);
  }

  private apply(key: string, rev: number, obj: KObject | undefined, at: number, bytes: Buffer | undefined, remember: boolean): StoreEvent {
    const type = assertKey(key);
    if (rev <= this.revision) throw new Error(`revision ${rev} committed after ${this.revision}`);
    const view = this.viewFor(type);
    const prevKept = view.objects.get(key);
    // Kept bytes' object is usually among the recent ones: the write read it first (checkWrite).
    const prev = prevKept === undefined ? undefined : remember ? this.parsed.objectOf(key, prevKept) : this.parsed.peek(key, prevKept);
    const wasCorrupt = this.corrupt.delete(key);
    let event: StoreEvent;
    // The history's own entry (never handed out: a replay sends the event, or one made from it): not frozen.
    let kept: KeptEvent;
    if (!obj && !prev && wasCorrupt) {
      // Removing an undecodable value: watchers get a DELETED with what the key names.
      kept = event = Object.freeze({ type: 'DELETED', key, rev, object: stubOf(key, rev) });
    } else if (obj) {
      if (!prev) view.keys.insert(key);
      view.objects.set(key, bytes ?? obj);
      if (bytes !== undefined && remember) this.parsed.written(key, bytes, obj);
      event = Object.freeze(prev ? { type: 'MODIFIED', key, rev, object: obj, prev } : { type: 'ADDED', key, rev, object: obj });
      kept =
        bytes === undefined && (prevKept === undefined || !isBytes(prevKept)) ? event : { type: event.type, key, rev, object: bytes ?? obj, prev: prevKept };
    } else {
      if (!prev) throw new Error(`delete of missing key "${key}" at revision ${rev}`);
      view.keys.remove(key);
      view.objects.delete(key);
      event = Object.freeze({ type: 'DELETED', key, rev, object: restamp(prev, rev), prev });
      kept = !isBytes(prevKept!) ? event : { type: 'DELETED', key, rev, object: prevKept!, prev: prevKept };
    }
    this.revision = rev;
    this.history.append(kept, type, at);
    if (kept !== event) this.recent[rev % RECENT_EVENTS] = event;
    this.waiters.reached(rev);
    this.hub.dispatch(event, type);
    return event;
  }

  list(prefix: string, opts: ListOptions = {}): ListResult {
    const type = typePrefixOf(prefix);
    if (type === undefined) throw new Error(`invalid list prefix "${prefix}": want group/resource/ at least`);
    const rev = opts.rev ?? this.revision;
    const bad = [...this.corrupt].filter(([k]) => k.startsWith(prefix));
    if (bad.length > 0) throw corruptError(bad);
    const view = rev === this.revision ? this.types.get(type) : this.viewAt(type, rev);
    // Assigned, not spread: a page of kept bytes parses its items only when they are read (views.ts).
    return Object.assign(listView(view, prefix, opts, this.peek), { rev });
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    const compacted = this.compactedRev;
    if (fromRev < compacted) throw this.gone(fromRev, compacted);
    const type = typePrefixOf(prefix);
    const replay = this.history
      .since(fromRev, type)
      .filter((ev) => ev.key.startsWith(prefix))
      .map(this.replayed);
    return this.hub.add(prefix, fromRev, replay, sink);
  }

  waitForRev(rev: number, timeoutMs: number): Promise<void> {
    if (rev <= this.revision) return Promise.resolve();
    return this.waiters.wait(rev, timeoutMs, () => this.tooLarge(rev));
  }

  /** Ends pending waits with err (Redis store: the feed feeding this state broke). */
  failWaits(err: StoreError): void {
    this.waiters.failAll(err);
  }

  tooLarge(rev: number): StoreError {
    return new StoreError('too-large', `too large resource version: ${rev}, current: ${this.revision}`, this.revision);
  }

  gone(rev: number, compacted: number): StoreError {
    return new StoreError('gone', `too old resource version: ${rev} (${compacted})`, this.revision);
  }

  /** Stops timers, ends watches and pending waits with err. */
  close(err: StoreError): void {
    clearInterval(this.timer);
    this.waiters.failAll(err);
    this.hub.failAll(err);
  }

  /** Every live object, type by type in key order (snapshot writing). */
  *entries(): Generator<[string, KObject]> {
    for (const view of this.types.values()) {
      for (const key of view.keys) yield [key, objectOfKept(view.objects.get(key)!)];
    }
  }

  private viewAt(type: string, rev: number): TypeView | undefined {
    if (rev > this.revision) throw this.tooLarge(rev);
    const compacted = this.compactedRev;
    if (rev < compacted) throw this.gone(rev, compacted);
    // Nothing of this type changed since rev: the live view is that snapshot.
    if (!this.history.touchedSince(rev, type)) return this.types.get(type);
    const cacheKey = `${rev}@${type}`;
    let snap = this.snapshots.get(cacheKey);
    if (!snap) {
      snap = snapshotAt(this.types.get(type), this.history.since(rev, type));
      this.snapshots.set(cacheKey, snap);
    }
    return snap;
  }

  private viewFor(type: string): TypeView {
    let view = this.types.get(type);
    if (!view) this.types.set(type, (view = { keys: new SortedKeys(), objects: new Map() }));
    return view;
  }
}

/**
 * The `corrupt` error of undecodable keys, in kube-apiserver's words
 * (storage.NewCorruptObjError, aggregated for lists): the message names each key.
 */
export function corruptError(keys: ReadonlyArray<readonly [string, string]>): StoreError {
  const one = ([k, why]: readonly [string, string]) =>
    `StorageError: corrupt object, Code: 7, Key: ${k}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable: ${why}`;
  const message = keys.length === 1 ? one(keys[0]!) : `unable to transform or decode ${keys.length} objects: {\n${keys.map((k) => `\t${one(k)}\n`).join('')}}`;
  return new StoreError('corrupt', message);
}

/** The StoreEvent of a history entry: its bytes parsed (a DELETED's object restamped with its revision). */
function eventOf(kept: KeptEvent): StoreEvent {
  if (!isBytes(kept.object) && (kept.prev === undefined || !isBytes(kept.prev))) return kept as StoreEvent;
  const prev = kept.prev === undefined ? undefined : objectOfKept(kept.prev);
  const object = kept.type === 'DELETED' ? restamp(prev!, kept.rev) : objectOfKept(kept.object);
  return Object.freeze(
    prev === undefined ? { type: kept.type, key: kept.key, rev: kept.rev, object } : { type: kept.type, key: kept.key, rev: kept.rev, object, prev },
  );
}

/** What a DELETED event of an undecodable key carries: its name and namespace, from the key. */
function stubOf(key: string, rev: number): KObject {
  const parts = key.split('/');
  const name = parts[parts.length - 1] ?? '';
  const metadata = parts.length >= 4 ? { name, namespace: parts[2] ?? '', resourceVersion: String(rev) } : { name, resourceVersion: String(rev) };
  return Object.freeze({ metadata: Object.freeze(metadata) }) as KObject;
}
