// The in-memory state both stores serve reads from: live objects per type
// (sorted keys + map), one revision counter, the history log, watchers and
// revision waiters. Stores decide *when* a write becomes visible (memory: at
// once; file: after fsync) and call commit() then, in revision order.
import { LRUCache } from 'lru-cache';
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult, StoreEvent, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { History } from './history.js';
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
  /** The type read before the last one, and its view: a create reads its namespace, then writes (two types in turn). */
  private otherType = '';
  private otherView: TypeView | undefined;

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
    if (this.lastView !== undefined && key.startsWith(this.lastType)) return this.lastView.objects.get(key);
    if (this.otherView !== undefined && key.startsWith(this.otherType)) {
      // The two swap places: the last read's type is the one a commit after it finds (commit's `known`).
      const type = this.otherType;
      const view = this.otherView;
      this.otherType = this.lastType;
      this.otherView = this.lastView;
      this.lastType = type;
      this.lastView = view;
      return view.objects.get(key);
    }
    const type = typePrefixOf(key);
    if (type === undefined) return undefined;
    const view = this.types.get(type);
    if (view === undefined) return undefined;
    this.otherType = this.lastType;
    this.otherView = this.lastView;
    this.lastType = type;
    this.lastView = view;
    return view.objects.get(key);
  }

  /** get() for a client read: `corrupt` when the key holds a value that cannot be decoded. */
  read(key: string): KObject | undefined {
    const why = this.corrupt.size === 0 ? undefined : this.corrupt.get(key);
    if (why !== undefined) throw corruptError([[key, why]]);
    return this.get(key);
  }

  /** Whether key holds an undecodable value. */
  isCorrupt(key: string): boolean {
    // Usually none: no lookup (the first of a new key hashes it).
    return this.corrupt.size !== 0 && this.corrupt.has(key);
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

  /** Places a loaded object without an event (snapshot load at startRev). */
  load(key: string, obj: KObject): void {
    const view = this.viewFor(assertKey(key));
    if (!view.objects.has(key)) view.keys.insert(key);
    view.objects.set(key, obj);
  }

  /**
   * Makes a write visible: `obj` (frozen, stamped with rev) for a put, undefined
   * for a delete. `at` is the commit time (replayed logs pass their own). `type`: the key's type prefix,
   * when the caller has checked the key already (assertKey's answer).
   */
  commit(key: string, rev: number, obj: KObject | undefined, at = this.clock(), cut = assertKey(key)): StoreEvent {
    if (rev <= this.revision) throw new Error(`revision ${rev} committed after ${this.revision}`);
    // The last read's type when the key is of it: its view and its string, whose hash is kept, so the type's
    // Maps here, in the history and in the watch fan-out hash no freshly cut prefix.
    const known = this.lastView !== undefined && cut === this.lastType;
    const type = known ? this.lastType : cut;
    const view = known ? this.lastView! : this.viewFor(type);
    const prev = view.objects.get(key);
    const wasCorrupt = this.corrupt.size !== 0 && this.corrupt.delete(key);
    let event: StoreEvent;
    if (!obj && !prev && wasCorrupt) {
      // Removing an undecodable value: watchers get a DELETED with what the key names.
      event = { type: 'DELETED', key, rev, object: stubOf(key, rev) };
    } else if (obj) {
      if (!prev) view.keys.insert(key);
      view.objects.set(key, obj);
      event = prev ? { type: 'MODIFIED', key, rev, object: obj, prev } : { type: 'ADDED', key, rev, object: obj };
    } else {
      if (!prev) throw new Error(`delete of missing key "${key}" at revision ${rev}`);
      view.keys.remove(key);
      view.objects.delete(key);
      event = { type: 'DELETED', key, rev, object: restamp(prev, rev), prev };
    }
    this.revision = rev;
    this.history.append(Object.freeze(event), type, at);
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
    return { rev, ...listView(view, prefix, opts) };
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    const compacted = this.compactedRev;
    if (fromRev < compacted) throw this.gone(fromRev, compacted);
    const type = typePrefixOf(prefix);
    const replay = this.history.since(fromRev, type).filter((ev) => ev.key.startsWith(prefix));
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
      for (const key of view.keys) yield [key, view.objects.get(key)!];
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

/** What a DELETED event of an undecodable key carries: its name and namespace, from the key. */
function stubOf(key: string, rev: number): KObject {
  const parts = key.split('/');
  const name = parts[parts.length - 1] ?? '';
  const metadata = parts.length >= 4 ? { name, namespace: parts[2] ?? '', resourceVersion: String(rev) } : { name, resourceVersion: String(rev) };
  return Object.freeze({ metadata: Object.freeze(metadata) }) as KObject;
}
