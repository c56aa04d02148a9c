// The skeleton of the core backend's small controllers: watch some store
// prefixes from the current revision, run a full pass at start, after a
// broken watch, and whenever the controller asks (changes, timers); work is
// serialized so passes never overlap. Time-based work (expirations) asks for
// a pass at a given moment of the injected clock. A prefix can be added or
// removed alone (types coming and going) without reopening the others.
import { rfc3339, type KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { prepareCreate } from '../objects.js';
import { guaranteedUpdate, retryOnConflict, RETRY, StoreError, type StoreEvent, type Watcher } from '../store/types.js';

/** Longest single timer; a pass then re-arms it (clock jumps, long expirations). */
const MAX_TIMER_MS = 60 * 60_000;

export abstract class WatchingController {
  /** One watch per prefix while started. */
  private readonly watchers = new Map<string, Watcher>();
  private running = false;
  private chain: Promise<void> = Promise.resolve();
  private passQueued = false;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    protected readonly env: CoreEnv,
    readonly name: string,
    private prefixes: readonly string[],
    private readonly retryMs = 1000,
  ) {}

  /** One full pass; returns the clock time (ms) of the next pass it needs, if any. */
  protected abstract pass(): Promise<number | undefined>;

  /** A watched change; the default asks for a full pass. */
  protected onEvent(_ev: StoreEvent): void {
    this.requestPass();
  }

  async start(): Promise<void> {
    this.stopped = false;
    const rev = await this.env.store.currentRev();
    this.closeWatches();
    for (const prefix of this.prefixes) this.openWatch(prefix, rev);
    this.running = true;
    this.requestPass();
    await this.chain;
  }

  /** Whether the watches are open (started, not stopped, not between a broken watch and its restart). */
  protected get watching(): boolean {
    return this.running && !this.stopped;
  }

  /**
   * Watches one more prefix from `fromRev` (a type came with the live registry; the caller
   * read it at that revision). Before start or during a restart it only joins the prefixes
   * the next start watches, with its full pass.
   */
  protected addWatch(prefix: string, fromRev: number): void {
    if (!this.prefixes.includes(prefix)) this.prefixes = [...this.prefixes, prefix];
    if (this.watching && !this.watchers.has(prefix)) this.openWatch(prefix, fromRev);
  }

  /** Stops watching one prefix (its type went with the live registry). */
  protected removeWatch(prefix: string): void {
    this.prefixes = this.prefixes.filter((p) => p !== prefix);
    this.watchers.get(prefix)?.stop();
    this.watchers.delete(prefix);
  }

  private openWatch(prefix: string, rev: number): void {
    this.watchers.set(
      prefix,
      this.env.store.watch(prefix, rev, {
        event: (ev) => {
          if (!this.stopped) this.onEvent(ev);
        },
        error: (err) => this.restart(err),
      }),
    );
  }

  private closeWatches(): void {
    for (const w of this.watchers.values()) w.stop();
    this.watchers.clear();
  }

  stop(): void {
    this.stopped = true;
    this.running = false;
    this.closeWatches();
    if (this.timer) clearTimeout(this.timer);
    if (this.retry) clearTimeout(this.retry);
  }

  /** Runs work after everything queued before it; failures are logged, never thrown. */
  protected enqueue(what: string, work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((err: unknown) => {
      this.env.log(`${this.name}: ${what}: ${err instanceof Error ? err.message : String(err)}`);
      this.scheduleRetry();
    });
  }

  protected requestPass(): void {
    if (this.passQueued || this.stopped) return;
    this.passQueued = true;
    this.enqueue('pass', async () => {
      this.passQueued = false;
      if (this.stopped) return;
      this.arm(await this.pass());
    });
  }

  private arm(at: number | undefined): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (at === undefined || this.stopped) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(10, at - this.env.clock()));
    this.timer = setTimeout(() => this.requestPass(), delay);
    this.timer.unref();
  }

  private scheduleRetry(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.requestPass();
    }, this.retryMs);
    this.retry.unref();
  }

  private restart(err: StoreError): void {
    if (this.stopped) return;
    this.env.log(`${this.name}: watch ended (${err.message}); restarting`);
    this.running = false;
    this.closeWatches();
    setTimeout(() => {
      if (!this.stopped)
        void this.start().catch((e: unknown) => {
          this.env.log(`${this.name}: ${String(e)}`);
          this.restart(new StoreError('unreachable', String(e)));
        });
    }, this.retryMs).unref();
  }
}

/** Deletes an object read earlier: at once, or by marking it when finalizers hold it. Gone or changed = nothing to do. */
export async function deleteStored(env: CoreEnv, t: ResourceType, obj: KObject): Promise<boolean> {
  const key = objectKey(t, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
  try {
    if ((obj.metadata.finalizers ?? []).length > 0) {
      if (obj.metadata.deletionTimestamp) return false;
      await guaranteedUpdate(env.store, key, (cur) =>
        cur.metadata.uid !== obj.metadata.uid || cur.metadata.deletionTimestamp
          ? null
          : { ...cur, metadata: { ...cur.metadata, deletionTimestamp: rfc3339(env.clock()), deletionGracePeriodSeconds: 0 } },
      );
    } else {
      await env.store.delete(key, Number(obj.metadata.resourceVersion));
    }
    return true;
  } catch (err) {
    if (err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict')) return false;
    throw err;
  }
}

const GET_OR_CREATE_ATTEMPTS = 5;

/**
 * The object stored at `key`, or null once `expected` was created there (a create that
 * loses a race with another process reads again; null too if that keeps failing).
 */
export async function getOrCreate(env: CoreEnv, t: ResourceType, key: string, expected: KObject): Promise<KObject | null> {
  return retryOnConflict<KObject | null>(
    async () => {
      const current = await env.store.get(key);
      if (current) return current;
      try {
        await env.store.create(key, prepareCreate(t, structuredClone(expected), env.clock()));
        return null;
      } catch (err) {
        // Created meanwhile, and perhaps gone again before this read: read again.
        if (err instanceof StoreError && err.code === 'exists') return RETRY;
        throw err;
      }
    },
    { giveUp: null },
    GET_OR_CREATE_ATTEMPTS,
  );
}

export function coreType(env: CoreEnv, resource: string): ResourceType {
  const t = env.registry.lookup('', 'v1', resource);
  if (!t) throw new Error(`the registry has no core/v1 ${resource} type`);
  return t;
}
