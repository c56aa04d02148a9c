// The storage contract of the core backend (DESIGN.md section 5).
//
// Keys: `<group>/<resource>/<namespace>/<name>` for namespaced objects and
// `<group>/<resource>/<name>` for cluster-scoped ones, with group `core` for
// the legacy group. A prefix selects a contiguous key range: `core/pods/`
// (all namespaces), `core/pods/team-a/` (one namespace).
//
// Every write gets a new revision from one counter, so revisions order all
// writes of a store. Objects handed out by a store carry
// `metadata.resourceVersion = String(revision)` and are frozen: callers
// clone before they change anything.
import type { KObject } from '../../../lib/api/meta.js';
import { CONFLICT_ATTEMPTS, RETRY, retryOnConflict } from '../../../lib/api/retry.js';

/** `invalid`: the caller asked what this store cannot answer (a watch across types on a Redis Cluster). */
/** `entity-too-large`: the object's stored form is over etcd's request limit (MAX_STORED_BYTES); nothing is written. */
export type StoreErrorCode = 'not-found' | 'exists' | 'conflict' | 'gone' | 'too-large' | 'unreachable' | 'corrupt' | 'invalid' | 'entity-too-large';

export class StoreError extends Error {
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    /** The store's revision when the error was raised (for `gone` and `too-large` messages). */
    readonly currentRev?: number,
  ) {
    super(message);
  }
}

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  readonly type: EventType;
  readonly key: string;
  readonly rev: number;
  /** The object after the change; for DELETED, the last state with the deletion's resourceVersion. */
  readonly object: KObject;
  /** The object before the change (absent for ADDED). */
  readonly prev?: KObject;
}

export interface ListOptions {
  /** Read at exactly this revision (a consistent snapshot); absent = the current revision. */
  rev?: number;
  /**
   * Instead of `rev`: any state at least this new, as get(key, minRev) reads —
   * from the store's watch cache (waiting briefly when it is behind, then
   * `too-large`); 0 = whatever the cache holds, without asking a shared store.
   */
  minRev?: number;
  /** Start after this key (paging). */
  after?: string;
  /** At most this many items (after filtering). */
  limit?: number;
  /** Only objects for which this is true count and are returned. */
  filter?: (obj: KObject) => boolean;
}

export interface ListResult {
  /** The revision the list was read at. */
  rev: number;
  items: KObject[];
  /** Key of the last returned item, when more matching items follow it. */
  continueAfter?: string;
  /** Items after this chunk, when known (no filter). */
  remaining?: number;
}

export interface Watcher {
  stop(): void;
}

export interface WatchSink {
  /** Called in revision order, once per event, never concurrently. */
  event(ev: StoreEvent): void;
  /** The feed broke (store unreachable, history lost); no events follow. */
  error(err: StoreError): void;
}

export interface Store {
  /** Creates; `exists` when the key is taken. */
  create(key: string, obj: KObject): Promise<KObject>;
  /** Replaces; `not-found`, or `conflict` when expectedRev is given and differs. */
  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject>;
  /** Removes; returns the last state stamped with the deletion's revision. */
  delete(key: string, expectedRev?: number): Promise<KObject>;
  /**
   * Removes whatever key holds without decoding it, with no revision check —
   * the unsafe deletion of a corrupt object (get/list of it fail with `corrupt`).
   * Watchers get DELETED with an object carrying only the key's name, namespace
   * and the deletion's resourceVersion. `not-found` when the key holds nothing.
   */
  deleteCorrupt(key: string): Promise<void>;
  /**
   * Reads the current object, or undefined. With minRev, waits briefly for that revision, then `too-large`;
   * minRev 0 answers from what the store's watch cache holds, without asking a shared store.
   */
  get(key: string, minRev?: number): Promise<KObject | undefined>;
  /**
   * get(key) without minRev, answered at once: offered by the stores that hold their current state in
   * this process (memory, file), so a GET takes no promise turn for its read. Throws as get rejects.
   */
  getNow?: ((key: string) => KObject | undefined) | undefined;
  /**
   * create(key, obj) answered at once: offered only by a store whose write is done when it returns (memory;
   * not the file store, whose create answers after its batch's fsync), so a create takes no promise turn
   * for its write. Throws as create rejects.
   */
  createNow?: ((key: string, obj: KObject) => KObject) | undefined;
  /** Lists a prefix. `gone` when opts.rev is older than the retained history, `too-large` when newer than the store. */
  list(prefix: string, opts?: ListOptions): Promise<ListResult>;
  /** Delivers every change under prefix with revision > fromRev. Throws `gone` when fromRev is no longer retained. */
  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher;
  /** The newest revision. */
  currentRev(): Promise<number>;
  /** Waits until the store has reached rev; `too-large` after timeoutMs. */
  waitForRev(rev: number, timeoutMs: number): Promise<void>;
  /** Resolves when the store can serve; rejects with `unreachable` otherwise (health checks). */
  check(): Promise<void>;
  close(): Promise<void>;
}

// The retry loop lives in lib/ so that the gateway's writes use it too; kept
// importable from here, where the store's callers look for it.
export { CONFLICT_ATTEMPTS, RETRY, retryOnConflict, type Exhausted } from '../../../lib/api/retry.js';

/** Read-modify-write with retries on revision conflicts (apiserver's GuaranteedUpdate); `conflict` after CONFLICT_ATTEMPTS. */
export async function guaranteedUpdate(
  store: Store,
  key: string,
  tryUpdate: (current: KObject) => KObject | null | Promise<KObject | null>,
): Promise<KObject | undefined> {
  return retryOnConflict(
    async () => {
      const current = await store.get(key);
      if (!current) return undefined;
      const next = await tryUpdate(current);
      if (next === null) return current;
      try {
        return await store.update(key, next, Number(current.metadata.resourceVersion));
      } catch (err) {
        if (err instanceof StoreError && err.code === 'conflict') return RETRY;
        throw err;
      }
    },
    () => new StoreError('conflict', `${key}: still conflicting after ${CONFLICT_ATTEMPTS} attempts`),
  );
}

/**
 * Reads key from the store's watch cache, and from the store itself only when
 * the cache lacks it: kube's lister with a live lookup on a miss. For checks on
 * every request (namespace lifecycle, credential lookups), which would
 * otherwise wait for a round trip to a shared store; an object another
 * process created a moment ago is still found.
 */
export async function getCachedFirst(store: Store, key: string): Promise<KObject | undefined> {
  return (await store.get(key, 0)) ?? store.get(key);
}

export function revisionOf(obj: KObject): number {
  return Number(obj.metadata.resourceVersion);
}
