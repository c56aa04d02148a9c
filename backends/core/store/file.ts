// FileStore: the embedded durable store. Writes are checked against the newest
// state (including queued ones), appended to `<dir>/log` in group-commit
// batches (one write + one fdatasync per batch) and become visible to readers
// and watchers only once durable. See README.md for the format and the
// crash-safety argument.
import { open, rename, mkdir, stat } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import type { KObject } from '../../../lib/api/meta.js';
import { keptJsonBytes, rememberJson } from '../../../lib/api/json.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { StoreState } from './state.js';
import type { StateOptions } from './state.js';
import { assertKey } from './keys.js';
import { storedCopy } from './objects.js';
import { checkStoredSize, checkWrite } from './preconditions.js';
import type { WriteKind } from './preconditions.js';
import { encodeBatch, encodeSnapshot } from './file-format.js';
import { acquireLock, fsyncDir } from './file-dir.js';
import { LOG, SNAPSHOT, SNAPSHOT_TMP, recover } from './file-load.js';
import type { DirLock } from './file-dir.js';
import type { LogAppender, SyncStats } from './file-append.js';

export interface FileStoreOptions extends Omit<StateOptions, 'startRev'> {
  /** Directory holding the store; created when missing. */
  dir: string;
  /** Compaction needs at least this much log (default 8 MiB)… */
  compactMinBytes?: number;
  /** …and a log this many times the live data (default 4). */
  compactRatio?: number;
}

interface PendingWrite {
  key: string;
  rev: number;
  at: number;
  /** Stamped, frozen object; undefined for a delete. */
  object: KObject | undefined;
  json: string | undefined;
  resolve(obj: KObject): void;
  reject(err: StoreError): void;
  /** Settled: committed (readable) or failed. */
  settled: boolean;
  /**
   * Writes waiting for this one to settle (a precondition failed against it), made
   * on demand: one promise per write instead of two, the usual write has no waiter.
   */
  waiters: (() => void)[] | undefined;
}

/** Cap per batch so one fdatasync never carries an unbounded buffer. */
const MAX_BATCH = 4096;

export class FileStore implements Store {
  /** Newest rev handed out; ≥ state.rev (the visible, durable one). */
  private nextRev: number;
  /** Accepted but not yet durable writes, newest per key; undefined object = delete. */
  private readonly overlay = new Map<string, PendingWrite>();
  private queue: PendingWrite[] = [];
  private compactWaiters: { resolve(): void; reject(err: unknown): void }[] = [];
  private running: Promise<void> | undefined;
  private failed: StoreError | undefined;
  private closed = false;
  private readonly minBytes: number;
  private readonly ratio: number;
  private liveBytes = 0;

  private constructor(
    private readonly dir: string,
    private readonly state: StoreState,
    private readonly log: LogAppender,
    private readonly lock: DirLock,
    private logSize: number,
    /** Record length per live key, to tell when the log is mostly dead records. */
    private readonly sizes: Map<string, number>,
    opts: FileStoreOptions,
  ) {
    this.nextRev = state.rev;
    this.minBytes = opts.compactMinBytes ?? 8 << 20;
    this.ratio = opts.compactRatio ?? 4;
    for (const n of sizes.values()) this.liveBytes += n;
  }

  static async open(opts: FileStoreOptions): Promise<FileStore> {
    const dir = resolve(opts.dir);
    await mkdir(dir, { recursive: true });
    const lock = await acquireLock(dir);
    try {
      const { state, sizes, log, logSize } = await recover(dir, opts);
      return new FileStore(dir, state, log, lock, logSize, sizes, opts);
    } catch (err) {
      await lock.release();
      throw err;
    }
  }

  create(key: string, obj: KObject): Promise<KObject> {
    return this.enqueue('create', key, obj);
  }

  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return this.enqueue('update', key, obj, expectedRev);
  }

  delete(key: string, expectedRev?: number): Promise<KObject> {
    return this.enqueue('delete', key, undefined, expectedRev);
  }

  /**
   * The file store never holds an undecodable object: every record is
   * CRC-checked JSON, and a bad record fails the whole open (see README).
   * So there is nothing corrupt to remove and this is a plain delete.
   */
  async deleteCorrupt(key: string): Promise<void> {
    await this.delete(key);
  }

  async get(key: string, minRev?: number): Promise<KObject | undefined> {
    this.readable();
    if (minRev !== undefined && minRev > this.state.rev) await this.state.waitForRev(minRev, this.state.tooLargeWaitMs);
    return this.state.get(key);
  }

  getNow(key: string): KObject | undefined {
    this.readable();
    return this.state.get(key);
  }

  getPieceNow(key: string): Buffer | undefined {
    this.readable();
    return this.state.readPiece(key);
  }

  async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
    this.readable();
    if (opts?.minRev !== undefined && opts.minRev > this.state.rev) await this.state.waitForRev(opts.minRev, this.state.tooLargeWaitMs);
    return this.state.list(prefix, opts);
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    this.readable();
    return this.state.watch(prefix, fromRev, sink);
  }

  async currentRev(): Promise<number> {
    this.readable();
    return this.state.rev;
  }

  async waitForRev(rev: number, timeoutMs: number): Promise<void> {
    this.readable();
    return this.state.waitForRev(rev, timeoutMs);
  }

  async check(): Promise<void> {
    this.readable();
    if (this.failed) throw this.failed;
  }

  /** Syncs of the log so far and the writes they made durable (group commit: fewer syncs than writes). */
  syncStats(): SyncStats {
    return this.log.syncStats();
  }

  /** Bytes the store's files take on disk (its snapshot and log, as allocated): kube's apiserver_storage_size_bytes. */
  async sizeBytes(): Promise<number> {
    let n = 0;
    for (const name of [SNAPSHOT, LOG]) {
      const st = await stat(join(this.dir, name)).catch(() => undefined);
      if (st) n += st.blocks * 512;
    }
    return n;
  }

  /** The store's identity in metrics (kube's storage_cluster_id is etcd's cluster ID): its directory, hashed. */
  get clusterId(): string {
    return createHash('sha256').update(this.dir).digest('hex').slice(0, 16);
  }

  /** Writes a snapshot and starts an empty log (normally triggered by log size). */
  async compact(): Promise<void> {
    this.readable();
    return new Promise((resolve, reject) => {
      this.compactWaiters.push({ resolve, reject });
      this.kick();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.running;
    this.state.close(new StoreError('unreachable', 'store is closed'));
    await this.log.close();
    await this.lock.release();
  }

  /**
   * Not async: the write's own promise is the one the caller gets (an async
   * function would wrap it in a second one and resolve it a tick later).
   */
  private enqueue(kind: WriteKind, key: string, obj: KObject | undefined, expectedRev?: number): Promise<KObject> {
    let object: KObject | undefined;
    let json: string | undefined;
    try {
      this.readable();
      if (this.failed) throw this.failed;
      assertKey(key);
      const pending = this.overlay.get(key);
      try {
        checkWrite(kind, key, pending ? pending.object : this.state.get(key), expectedRev);
      } catch (err) {
        // Failing against a write readers cannot see yet would send a retry loop
        // (guaranteedUpdate) round again on the same stale read: report the
        // failure once the state it refers to is readable.
        if (pending && !pending.settled) return this.afterSettled(pending, err);
        throw err;
      }
      if (obj) {
        // Serialise before taking a revision so an unserialisable object fails alone, not its batch.
        object = storedCopy(obj, this.nextRev + 1);
        json = JSON.stringify(object);
        checkStoredSize(json, object);
        // The object answered and sent to watchers is this one: its text is already made.
        rememberJson(object, json);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const rev = ++this.nextRev;
    return new Promise<KObject>((resolve, reject) => {
      const p: PendingWrite = { key, rev, at: this.state.clock(), object, json, resolve, reject, settled: false, waiters: undefined };
      this.overlay.set(key, p);
      this.queue.push(p);
      this.kick();
    });
  }

  /** err once `pending` is settled (or the store's failure, when the log failed meanwhile). */
  private async afterSettled(pending: PendingWrite, err: unknown): Promise<never> {
    await new Promise<void>((r) => (pending.waiters ??= []).push(r));
    if (this.failed) throw this.failed;
    throw err;
  }

  private static settle(p: PendingWrite): void {
    p.settled = true;
    const waiters = p.waiters;
    if (waiters === undefined) return;
    p.waiters = undefined;
    for (const w of waiters) w();
  }

  private static fail(p: PendingWrite, err: StoreError): void {
    FileStore.settle(p);
    p.reject(err);
  }

  private kick(): void {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
      // Work queued while the loop was finishing.
      if (this.queue.length > 0 || this.compactWaiters.length > 0) this.kick();
    });
  }

  private async run(): Promise<void> {
    while (this.queue.length > 0 || this.compactWaiters.length > 0) {
      // The batch is cut after the I/O callbacks of this event-loop turn ran: the requests
      // read in the turn that queued the first write (or that saw the last sync end) join
      // it instead of waiting a whole sync for the next one.
      await new Promise<void>((r) => setImmediate(r));
      if (this.queue.length > 0) await this.flush(this.queue.splice(0, MAX_BATCH));
      if (this.failed) return this.rejectAll(this.failed);
      const waiters = this.compactWaiters;
      if (waiters.length > 0 || this.logSize > Math.max(this.minBytes, this.ratio * this.liveBytes)) {
        this.compactWaiters = [];
        try {
          await this.compactNow();
          for (const w of waiters) w.resolve();
        } catch (err) {
          for (const w of waiters) w.reject(err);
          if (waiters.length === 0) process.emitWarning(`store compaction failed: ${String(err)}`);
        }
      }
    }
  }

  /** One append + one fdatasync for the whole batch, then the writes become visible in rev order. */
  private async flush(batch: PendingWrite[]): Promise<void> {
    const start = this.logSize;
    const { buf, ends } = encodeBatch(start, batch);
    try {
      await this.log.append(buf, batch.length);
    } catch (err) {
      this.fail(`write to "${join(this.dir, LOG)}" failed: ${err instanceof Error ? err.message : String(err)}`);
      for (const p of batch) FileStore.fail(p, this.failed!);
      return;
    }
    this.logSize += buf.length;
    for (let i = 0; i < batch.length; i++) {
      const p = batch[i]!;
      // The state keeps the object's list piece alone (kept.ts), made from the text the log holds.
      const ev = this.state.commit(p.key, p.rev, p.object, undefined, p.object && p.json !== undefined ? keptJsonBytes(p.object, p.json) : undefined);
      if (this.overlay.get(p.key) === p) this.overlay.delete(p.key);
      // The line's bytes, as replay measures it.
      this.setSize(p.key, p.object ? ends[i]! - (i === 0 ? 0 : ends[i - 1]!) : undefined);
      FileStore.settle(p);
      p.resolve(p.object ?? ev.object);
    }
  }

  /**
   * Snapshot then empty log. Every step leaves a loadable store: until the
   * rename the old snapshot + full log are intact; after it the snapshot
   * covers every record still in the log (replay skips rev ≤ snapshot rev).
   */
  private async compactNow(): Promise<void> {
    const tmp = join(this.dir, SNAPSHOT_TMP);
    const out = await open(tmp, 'w');
    try {
      let chunk: Buffer[] = [];
      let bytes = 0;
      for (const line of encodeSnapshot(this.state.rev, this.state.entries(), this.sizes.size)) {
        chunk.push(line);
        bytes += line.length;
        if (bytes >= 1 << 20) {
          await out.write(Buffer.concat(chunk));
          chunk = [];
          bytes = 0;
        }
      }
      await out.write(Buffer.concat(chunk));
      await out.sync();
    } finally {
      await out.close();
    }
    await rename(tmp, join(this.dir, SNAPSHOT));
    try {
      await fsyncDir(this.dir);
      await this.log.truncate(0);
      this.logSize = 0;
    } catch (err) {
      // The log's length is now unknown to us: stop taking writes rather than guess.
      this.fail(`compaction of "${this.dir}" failed: ${err instanceof Error ? err.message : String(err)}`);
      throw err;
    }
  }

  private setSize(key: string, bytes: number | undefined): void {
    this.liveBytes += (bytes ?? 0) - (this.sizes.get(key) ?? 0);
    if (bytes === undefined) this.sizes.delete(key);
    else this.sizes.set(key, bytes);
  }

  private fail(message: string): void {
    this.failed ??= new StoreError('unreachable', message);
  }

  private rejectAll(err: StoreError): void {
    for (const p of this.queue.splice(0)) FileStore.fail(p, err);
    for (const w of this.compactWaiters.splice(0)) w.reject(err);
    this.overlay.clear();
  }

  private readable(): void {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
  }
}
