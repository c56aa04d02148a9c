// RedisStore: the core backend's store on Redis, shared by several
// processes. Writes are one Lua script each (redis-scripts.ts); every
// process keeps a watch cache per revision domain (redis-domain.ts) fed by
// that domain's change feed (redis-feed.ts); consistent reads fetch the
// domain's revision from Redis and wait for the cache to reach it.
// Standalone Redis: one domain for everything. Redis Cluster: one domain per
// resource type, opened when the process first touches the type
// (redis-cluster.ts). See README.md, "Redis store" and "Redis Cluster".
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult, Store, WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import type { StoreState, StateOptions } from './state.js';
import { assertKey, typePrefixOf } from './keys.js';
import { redisKeys } from './redis-keys.js';
import { connect, CONNECT_TIMEOUT_MS, masters, redisTarget, unreachable, type RedisTarget } from './redis-connect.js';
import { runWrite, type WriteOp } from './redis-scripts.js';
import { decodeObject, splitStored } from './redis-codec.js';
import { restamp, storedCopy } from './objects.js';
import { checkStoredSize } from './preconditions.js';
import { Domain, type DomainOptions, type DomainOwner } from './redis-domain.js';
import { TypeDomains } from './redis-cluster.js';
import { traceCommands } from './redis-traced.js';

export interface RedisStoreOptions extends Omit<StateOptions, 'startRev'> {
  /** redis://, rediss://, or a cluster: several seeds or redis+cluster:// (see redis-connect.ts). */
  url: string;
  /** Namespaces every key (`{prefix}:…`, `{prefix:type}:…`); several stores may share one Redis. */
  prefix: string;
  /** How long a consistent read waits for the local cache to catch up (default 5000 ms). */
  syncTimeoutMs?: number;
  /** Per-command bound while connected (default 5000 ms). */
  commandTimeoutMs?: number;
  /** Feed compaction period (default: a quarter of the window, at most 10 s). */
  compactIntervalMs?: number;
  /** Outages, recoveries and cache rebuilds are reported here. */
  log?: (msg: string) => void;
  /** Commands as spans (redis-traced.ts); the blocking feed reads, never part of a request, are not. */
  traceCommands?: boolean;
}

export class RedisStore implements Store, DomainOwner {
  private closed = false;
  /** Standalone: the one domain. Cluster: undefined. */
  private single: Domain | undefined;
  /** Cluster: one domain per type (redis-cluster.ts). Standalone: undefined. */
  private readonly perType: TypeDomains | undefined;
  /** The highest revision this process has seen in any domain (a Lamport clock across types): the floor of its next write. */
  private seenRev = 0;
  private readonly domainOpts: DomainOptions;

  private readonly prefix: string;

  private constructor(
    private readonly client: Redis,
    private readonly target: RedisTarget,
    opts: RedisStoreOptions,
  ) {
    this.prefix = opts.prefix;
    const window = opts.historyWindowMs;
    this.domainOpts = {
      historyWindowMs: window,
      ...(opts.clock ? { clock: opts.clock } : {}),
      ...(opts.tooLargeWaitMs !== undefined ? { tooLargeWaitMs: opts.tooLargeWaitMs } : {}),
      syncTimeoutMs: opts.syncTimeoutMs ?? 5000,
      compactIntervalMs: opts.compactIntervalMs ?? Math.min(window / 4, 10_000),
      cluster: target.cluster,
      ...(opts.log ? { log: opts.log } : {}),
    };
    this.perType = target.cluster ? new TypeDomains(client, target, opts.prefix, this.domainOpts, this) : undefined;
  }

  static async open(opts: RedisStoreOptions): Promise<RedisStore> {
    const keys = redisKeys(opts.prefix); // validates the prefix
    const target = redisTarget(opts.url, opts.commandTimeoutMs ?? 5000);
    const client = await connect(target.make(), CONNECT_TIMEOUT_MS, target.where);
    if (opts.traceCommands) traceCommands(client, target.peer);
    let blocking: Redis | undefined;
    try {
      const store = new RedisStore(client, target, opts);
      if (!target.cluster) {
        // The blocking connection's command bound must outlast its BLOCK.
        blocking = await connect(target.make({ blocking: true, name: 'gatehouse-feed' }), CONNECT_TIMEOUT_MS, target.where);
        store.single = await Domain.open(client, blocking, keys, store.domainOpts, store);
      } else {
        await store.perType!.openRegistered();
      }
      return store;
    } catch (err) {
      client.disconnect();
      blocking?.disconnect();
      throw unreachable(err);
    }
  }

  /**
   * kube's apiserver_storage_size_bytes is etcd's whole database as allocated;
   * here it is the memory the Redis server (each master of a cluster) holds
   * for its data (INFO memory's used_memory), shared by whatever else that
   * Redis keeps.
   */
  async sizeBytes(): Promise<number> {
    let n = 0;
    for (const node of masters(this.client)) {
      const m = /^used_memory:(\d+)\r?$/m.exec(await node.info('memory'));
      if (!m) throw new Error('INFO memory without used_memory');
      n += Number(m[1]);
    }
    return n;
  }

  /** The store's identity in metrics (kube's storage_cluster_id is etcd's cluster ID): its Redis and key prefix, hashed. */
  get clusterId(): string {
    return createHash('sha256').update(`${this.target.where}\n${this.prefix}`).digest('hex').slice(0, 16);
  }

  /** Whether this store spreads types over a Redis Cluster (one revision domain per type). */
  get cluster(): boolean {
    return this.target.cluster;
  }

  /** Standalone: the watch cache (tests). */
  get state(): StoreState {
    if (!this.single) throw new Error('a cluster store has one watch cache per type');
    return this.single.state;
  }

  // DomainOwner: the highest revision seen across domains.

  get floor(): number {
    return this.seenRev;
  }

  observed(rev: number): void {
    if (rev <= this.seenRev) return;
    this.seenRev = rev;
    this.perType?.reached(rev);
  }

  // Store

  create(key: string, obj: KObject): Promise<KObject> {
    return this.write('c', key, obj);
  }

  update(key: string, obj: KObject, expectedRev?: number): Promise<KObject> {
    return this.write('u', key, obj, expectedRev);
  }

  delete(key: string, expectedRev?: number): Promise<KObject> {
    return this.write('d', key, undefined, expectedRev);
  }

  async deleteCorrupt(key: string): Promise<void> {
    try {
      await this.write('d', key, undefined);
    } catch (err) {
      // The script removed the key; only decoding the removed value failed, as expected here.
      if (!(err instanceof StoreError && err.code === 'corrupt')) throw err;
    }
  }

  get(key: string, minRev?: number): Promise<KObject | undefined> {
    try {
      const type = assertKey(key);
      if (this.single !== undefined && minRev !== undefined) {
        // The cache already holds minRev (resourceVersion=0, a namespace check on every create):
        // answered without an async step in between.
        const state = this.single.live();
        if (minRev <= state.rev) return Promise.resolve(state.read(key));
      }
      return this.getFrom(type, key, minRev);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private async getFrom(type: string, key: string, minRev: number | undefined): Promise<KObject | undefined> {
    const d = this.single ?? (await this.domainFor(type));
    if (minRev === undefined) return (await d.sync()).state.read(key);
    return (await this.atLeast(d, minRev)).read(key);
  }

  /** The domain's watch cache once it holds minRev: no round trip when it does already. */
  private async atLeast(d: Domain, minRev: number): Promise<StoreState> {
    const state = d.live();
    if (minRev <= state.rev) return state;
    if (!this.cluster) {
      await state.waitForRev(minRev, state.tooLargeWaitMs);
      return state;
    }
    // Revisions of one type are not dense in a cluster: wait until the process has
    // seen minRev anywhere, then read the type's newest state.
    await this.waitForRev(minRev, state.tooLargeWaitMs);
    return (await d.sync()).state;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const type = typePrefixOf(prefix);
    if (type === undefined) throw new Error(`invalid list prefix "${prefix}": want group/resource/ at least`);
    const d = this.single ?? (await this.domainFor(type));
    if (opts.minRev !== undefined) {
      const state = await this.atLeast(d, opts.minRev);
      return state.list(prefix, { ...opts, rev: undefined });
    }
    let state: StoreState;
    let at: number;
    if (opts.rev === undefined) {
      const { state: s, point } = await d.sync();
      state = s;
      at = Math.max(point.alloc, s.rev);
    } else {
      state = d.live();
      at = opts.rev;
      if (opts.rev > state.rev) {
        const point = await d.point();
        if (opts.rev > point.alloc) throw new StoreError('too-large', `too large resource version: ${opts.rev}, current: ${point.alloc}`, point.alloc);
        state = await d.catchUp(Math.min(opts.rev, point.last));
      }
    }
    if (at <= state.rev) return state.list(prefix, { ...opts, rev: at });
    // Cluster: no write of this type lies in (state.rev, at] and every later one is
    // above the allocator, so the live view is the type's state at `at`.
    return { ...state.list(prefix, { ...opts, rev: undefined }), rev: at };
  }

  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
    if (this.single) return this.single.watch(prefix, fromRev, sink);
    return this.perType!.watch(prefix, fromRev, sink);
  }

  async currentRev(): Promise<number> {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
    if (this.single) {
      this.single.live();
      return (await this.single.point()).alloc;
    }
    return this.perType!.currentRev();
  }

  async waitForRev(rev: number, timeoutMs: number): Promise<void> {
    if (this.single) return this.single.live().waitForRev(rev, timeoutMs);
    return this.perType!.waitForRev(rev, timeoutMs);
  }

  async check(): Promise<void> {
    if (this.closed) throw new StoreError('unreachable', 'store is closed');
    const all = this.single ? [this.single] : this.perType!.opened();
    for (const d of all) d.live();
    try {
      const nodes = masters(this.client);
      await Promise.all((nodes.length > 0 ? nodes : [this.client]).map((n) => n.ping()));
    } catch (err) {
      throw unreachable(err);
    }
    for (const d of all) d.live(); // a feed may have noticed an outage meanwhile
  }

  /** Consistent reads so far: revision checks sent to Redis, and reads a feed read answered without one (tests, bench). */
  readStats(): { checks: number; byFeed: number } {
    const all = this.single ? [this.single] : this.perType!.opened();
    const out = { checks: 0, byFeed: 0 };
    for (const d of all) {
      out.checks += d.readStats.checks;
      out.byFeed += d.readStats.byFeed;
    }
    return out;
  }

  /** One compaction pass of every domain now (normally on timers); returns the feed entries removed. */
  async compact(): Promise<number> {
    const all = this.single ? [this.single] : this.perType!.opened();
    let n = 0;
    for (const d of all) n += await d.compact();
    return n;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await (this.single ? this.single.close() : this.perType!.close());
    await this.client.quit().catch(() => this.client.disconnect());
  }

  /** The domain serving a type: the one domain, or (cluster) the type's own, opened on first use. */
  private domainFor(type: string): Promise<Domain> {
    if (this.closed) return Promise.reject(new StoreError('unreachable', 'store is closed'));
    if (this.single) return Promise.resolve(this.single);
    return this.perType!.domainFor(type);
  }

  private async write(op: WriteOp, key: string, obj: KObject | undefined, expectedRev?: number): Promise<KObject> {
    const type = assertKey(key);
    const d = this.single ?? (await this.domainFor(type));
    const state = d.live();
    // Copied before the round trip so the caller's object cannot change what is answered.
    // Serialized whole: V8's JSON.stringify beats reusing this text for the answer (bench/micro.ts:
    // 6.0–9.5 µs a small ConfigMap written and answered, 11.4–30.5 µs with the text spliced per member).
    const stored = obj ? storedCopy(obj) : undefined;
    const json = stored ? JSON.stringify(stored) : '';
    if (stored) checkStoredSize(json, stored);
    const at = state.clock();
    let reply;
    try {
      reply = await runWrite(this.client, d.keys, type, op, key, json, expectedRev, at, this.seenRev);
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
        const [, rev, prev, old] = reply;
        this.observed(rev);
        const out = stored ? restamp(stored, rev) : undefined;
        d.wrote(rev, prev, key, json, out, at);
        return out ?? decodeObject(splitStored(old ?? '', `"${key}"`).json, rev, `"${key}"`);
      }
    }
  }
}
