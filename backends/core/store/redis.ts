// RedisStore: the core backend's store on Redis, shared by several
// processes. Writes are one Lua script each (redis-scripts.ts); every
// process keeps a watch cache (StoreState) fed by the change feed
// (redis-feed.ts); consistent reads fetch Redis's revision and wait for the
// cache to reach it (redis-readindex.ts). See README.md, "Redis store".
import type { Redis } from 'ioredis';
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import type { StoreState, StateOptions } from './state.js';
import { assertKey } from './keys.js';
import { redisKeys, type RedisKeys } from './redis-keys.js';
import { connectClient, redact, redisOptions, unreachable } from './redis-connect.js';
import { defineScripts, runWrite, type WriteOp } from './redis-scripts.js';
import { decodeObject, encodeObject, splitStored } from './redis-codec.js';
import { loadState } from './redis-state.js';
import { FeedReader, type FeedHost } from './redis-feed.js';
import { RevisionReader } from './redis-readindex.js';
import { FeedCompactor } from './redis-compact.js';

export interface RedisStoreOptions extends Omit<StateOptions, 'startRev'> {
  url: string;
  /** Namespaces every key (`{prefix}:…`); several stores may share one Redis. */
  prefix: string;
  /** How long a consistent read waits for the local cache to catch up (default 5000 ms). */
  syncTimeoutMs?: number;
  /** Per-command bound while connected (default 5000 ms). */
  commandTimeoutMs?: number;
  /** Feed compaction period (default: a quarter of the window, at most 10 s). */
  compactIntervalMs?: number;
  /** Outages, recoveries and cache rebuilds are reported here. */
  log?: (msg: string) => void;
}

interface OpenWatch {
  watcher: Watcher;
  sink: WatchSink;
}

export class RedisStore implements Store, FeedHost {
  private current: StoreState;
  private downErr: StoreError | undefined;
  private closed = false;
  private readonly watches = new Set<OpenWatch>();
  private readonly revs: RevisionReader;
  private readonly feed: FeedReader;
  private readonly compactor: FeedCompactor;
  private readonly syncTimeoutMs: number;

  private constructor(
    private readonly client: Redis,
    blocking: Redis,
    private readonly keys: RedisKeys,
    state: StoreState,
    private readonly opts: RedisStoreOptions,
  ) {
    this.current = state;
    this.syncTimeoutMs = opts.syncTimeoutMs ?? 5000;
    this.revs = new RevisionReader(async () => Number((await this.client.get(this.keys.rev)) ?? 0));
    this.feed = new FeedReader(blocking, client, keys, this);
    const window = opts.historyWindowMs;
    this.compactor = new FeedCompactor(client, keys, window, state.clock, opts.compactIntervalMs ?? Math.min(window / 4, 10_000));
  }

  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const keys = redisKeys(opts.prefix);
    const base = redisOptions(opts.url, opts.commandTimeoutMs ?? 5000);
    const where = redact(opts.url);
    const client = await connectClient(base, 5000, where);
    let blocking: Redis | undefined;
    try {
      // The blocking connection's command bound must outlast its BLOCK.
      blocking = await connectClient({ ...base, commandTimeout: (opts.commandTimeoutMs ?? 5000) + 1000, connectionName: 'gatehouse-feed' }, 5000, where);
      defineScripts(client);
      const state = await loadState(client, keys, opts);
      const store = new RedisStore(client, blocking, keys, state, opts);
      await store.feed.mark();
      store.feed.start();
      return store;
    } catch (err) {
      client.disconnect();
      blocking?.disconnect();
      throw unreachable(err);
    }
  }

  get state(): StoreState {
    return this.current;
  }

  create(key: string, obj: KObject): Promise<KObject> {
    return this.write('c', key, obj);
  }

  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return this.write('u', key, obj, expectedRev);
  }

  delete(key: string, expectedRev?: number): Promise<KObject> {
    return this.write('d', key, undefined, expectedRev);
  }

  async get(key: string, minRev?: number): Promise<KObject | undefined> {
    if (minRev === undefined) return (await this.sync()).get(key);
    const state = this.live();
    if (minRev > state.rev) await state.waitForRev(minRev, state.tooLargeWaitMs);
    return state.get(key);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    if (opts.rev === undefined) return (await this.sync()).list(prefix, opts);
    let state = this.live();
    if (opts.rev > state.rev) {
      const redisRev = await this.redisRev();
      if (opts.rev > redisRev) throw new StoreError('too-large', `too large resource version: ${opts.rev}, current: ${redisRev}`, redisRev);
      state = await this.catchUp(opts.rev);
    }
    return state.list(prefix, opts);
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

  async currentRev(): Promise<number> {
    this.live();
    return this.redisRev();
  }

  async waitForRev(rev: number, timeoutMs: number): Promise<void> {
    return this.live().waitForRev(rev, timeoutMs);
  }

  async check(): Promise<void> {
    this.live();
    try {
      await this.client.ping();
    } catch (err) {
      throw unreachable(err);
    }
    this.live(); // the feed may have noticed an outage meanwhile
  }

  /** One compaction pass now (normally on a timer); returns the feed entries removed. */
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
    await this.client.quit().catch(() => this.client.disconnect());
  }

  // FeedHost

  async resync(reason: string): Promise<void> {
    const state = await loadState(this.client, this.keys, this.opts);
    const old = this.current;
    this.current = state;
    const err = new StoreError('gone', `watch history was lost: ${reason}`, state.rev);
    this.failWatches(err);
    old.close(err);
    this.opts.log?.(`redis store: cache rebuilt at revision ${state.rev}: ${reason}`);
  }

  down(err: StoreError): void {
    this.downErr = err;
    this.failWatches(err);
    this.opts.log?.(`redis store: unavailable: ${err.message}`);
  }

  up(): void {
    this.downErr = undefined;
    this.opts.log?.('redis store: available again');
  }

  private async write(op: WriteOp, key: string, obj: KObject | undefined, expectedRev?: number): Promise<KObject> {
    this.live();
    const type = assertKey(key);
    const json = obj ? encodeObject(obj) : '';
    let reply;
    try {
      reply = await runWrite(this.client, this.keys, type, op, key, json, expectedRev, this.current.clock());
    } catch (err) {
      throw unreachable(err);
    }
    switch (reply[0]) {
      case 'exists':
        throw new StoreError('exists', `key "${key}" already exists`);
      case 'not-found':
        throw new StoreError('not-found', `key "${key}" not found`);
      case 'conflict':
        throw new StoreError('conflict', `key "${key}" was modified: expected revision ${expectedRev}, current ${reply[1]}`, Number(reply[1]));
      case 'ok': {
        const rev = reply[1];
        if (op !== 'd') return decodeObject(json, rev, `"${key}"`);
        return decodeObject(splitStored(reply[2] ?? '', `"${key}"`).json, rev, `"${key}"`);
      }
    }
  }

  /** The cache, once it holds every write Redis had acknowledged when this call began. */
  private async sync(): Promise<StoreState> {
    this.live();
    const rev = await this.redisRev();
    return this.catchUp(rev);
  }

  private async catchUp(rev: number): Promise<StoreState> {
    const state = this.live();
    if (rev <= state.rev) return state;
    try {
      await state.waitForRev(rev, this.syncTimeoutMs);
    } catch (err) {
      if (this.current !== state) return this.catchUp(rev); // rebuilt meanwhile
      if (err instanceof StoreError && err.code === 'too-large') {
        throw new StoreError('unreachable', `the watch cache is behind redis: at ${state.rev}, want ${rev}`);
      }
      throw err;
    }
    return this.current;
  }

  private async redisRev(): Promise<number> {
    try {
      return await this.revs.read();
    } catch (err) {
      throw unreachable(err);
    }
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

  private live(): StoreState {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
    if (this.downErr) throw this.downErr;
    return this.current;
  }
}
