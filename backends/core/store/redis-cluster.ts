// The Redis Cluster half of RedisStore: one revision domain per resource
// type (its own hash slot, allocator and feed), opened when the process first
// touches the type and at start for every type other processes registered;
// the cluster-wide currentRev() and the waits on the highest revision the
// process has seen. See README.md, "Ordering across types, and Redis Cluster".
import type { Redis } from 'ioredis';
import type { WatchSink, Watcher } from './types.js';
import { StoreError } from './types.js';
import { typePrefixOf } from './keys.js';
import { registryKey, typeKeys } from './redis-keys.js';
import { connect, CONNECT_TIMEOUT_MS, unreachable, type RedisTarget } from './redis-connect.js';
import { raiseFloor, readPoint } from './redis-scripts.js';
import { Domain, type DomainOptions, type DomainOwner } from './redis-domain.js';
import { RevisionWaiters } from './revwaiters.js';

export class TypeDomains {
  private closed = false;
  /** Open (or opening) domains by type prefix. */
  private readonly domains = new Map<string, Promise<Domain>>();
  private readonly open = new Map<string, Domain>();
  private readonly registered = new Set<string>();
  /** waitForRev callers, woken as the owner's highest seen revision rises (reached). */
  private readonly waiters = new RevisionWaiters();

  constructor(
    private readonly client: Redis,
    private readonly target: RedisTarget,
    private readonly prefix: string,
    private readonly domainOpts: DomainOptions,
    private readonly owner: DomainOwner,
  ) {}

  /** Follows every type other processes already use, so watches start at once. */
  async openRegistered(): Promise<void> {
    const types = await this.client.smembers(registryKey(this.prefix));
    await Promise.all(types.map((t) => this.domainFor(t)));
  }

  /** The domains open now. */
  opened(): Domain[] {
    return [...this.open.values()];
  }

  /** The owner saw rev: wakes the waits it satisfies. */
  reached(rev: number): void {
    this.waiters.reached(rev);
  }

  /** The type's domain, opened on first use. */
  domainFor(type: string): Promise<Domain> {
    let p = this.domains.get(type);
    if (!p) {
      p = this.openDomain(type);
      this.domains.set(type, p);
      p.then(
        (d) => {
          if (this.closed) void d.close();
          else this.open.set(type, d);
        },
        () => this.domains.delete(type), // the next call tries again
      );
    }
    return p;
  }

  /** A watch of one type; one spanning types is the caller's error, since types have separate revision orders. */
  watch(prefix: string, fromRev: number, sink: WatchSink): Watcher {
    const type = typePrefixOf(prefix);
    if (type === undefined) {
      throw new StoreError('invalid', `watching "${prefix}" needs one resource type: on a Redis Cluster, types have separate revision orders`);
    }
    const open = this.open.get(type);
    if (open) return open.watch(prefix, fromRev, sink);
    // The type's domain is opening: attach when it is ready.
    let stopped = false;
    let inner: Watcher | undefined;
    this.domainFor(type).then(
      (d) => {
        if (stopped) return;
        try {
          inner = d.watch(prefix, fromRev, sink);
        } catch (err) {
          sink.error(unreachable(err));
        }
      },
      (err: unknown) => {
        if (!stopped) sink.error(unreachable(err));
      },
    );
    return {
      stop: () => {
        stopped = true;
        inner?.stop();
      },
    };
  }

  /**
   * The highest allocator of any type, after which every type's allocator is
   * raised to it, so a watch of any type from the answer misses no later write.
   */
  async currentRev(): Promise<number> {
    try {
      const types = new Set([...(await this.client.smembers(registryKey(this.prefix))), ...this.open.keys()]);
      const keys = [...types].map((t) => this.open.get(t)?.keys ?? typeKeys(this.prefix, t));
      for (const d of this.open.values()) d.live();
      let want = this.owner.floor;
      const points = await Promise.all(keys.map((k) => readPoint(this.client, k, want)));
      for (const p of points) want = Math.max(want, p.alloc);
      await Promise.all(keys.filter((_, i) => points[i]!.alloc < want).map((k) => raiseFloor(this.client, k, want, false)));
      this.owner.observed(want);
      return want;
    } catch (err) {
      throw unreachable(err);
    }
  }

  /** Revisions of one type are not dense: waits until the process has seen rev in any type. */
  async waitForRev(rev: number, timeoutMs: number): Promise<void> {
    if (rev <= this.owner.floor) return;
    await this.currentRev();
    if (rev <= this.owner.floor) return;
    return this.waiters.wait(
      rev,
      timeoutMs,
      () => new StoreError('too-large', `too large resource version: ${rev}, current: ${this.owner.floor}`, this.owner.floor),
    );
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiters.failAll(new StoreError('unreachable', 'store is closed'));
    const all = await Promise.all([...this.domains.values()].map((p) => p.catch(() => undefined)));
    await Promise.all(all.map((d) => d?.close()));
  }

  private async openDomain(type: string): Promise<Domain> {
    const keys = typeKeys(this.prefix, type);
    const blocking = await connect(this.target.make({ blocking: true, name: 'gatehouse-feed' }), CONNECT_TIMEOUT_MS, this.target.where);
    try {
      if (!this.registered.has(type)) {
        // Registered before its first write, so every process's currentRev() covers the type.
        await this.client.sadd(registryKey(this.prefix), type);
        this.registered.add(type);
      }
      return await Domain.open(this.client, blocking, keys, this.domainOpts, this.owner);
    } catch (err) {
      blocking.disconnect();
      throw unreachable(err);
    }
  }
}
