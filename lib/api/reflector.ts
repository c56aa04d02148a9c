// Keeps state derived from some types of an ObjectSource current, as
// client-go's reflector does: list a type and hand over every object, then
// watch from the list's revision; when the watch ends (410 Gone, the source
// went away) or a list fails, list that type again after a pause, which
// doubles after each failure up to a cap and starts over after a success.
// Used by the RBAC policy, the Node authorizer's graph and the aggregation
// informers.
import { qualified } from './status.js';
import type { KObject } from './meta.js';
import type { ObjectEvent, ObjectSource, ObjectWatch } from './objectsource.js';

export interface ReflectedType {
  readonly group: string;
  readonly resource: string;
  /** Every object of the type, after each (re-)list. */
  reset(items: readonly KObject[]): void;
  /** An object added or changed. */
  set(obj: KObject, type: 'ADDED' | 'MODIFIED'): void;
  remove(obj: KObject): void;
}

export interface ReflectorOptions {
  /** Names the owner in log lines ("RBAC", "node authorizer", "aggregation"). */
  readonly who: string;
  readonly log: (msg: string) => void;
  /** Pause before the first re-list after a failure (default 1000 ms). */
  readonly retryMs?: number;
  /** Longest pause (default retryMs: no backoff). */
  readonly maxRetryMs?: number;
  /**
   * Whether a failed first list is retried like a later one (start resolves once it
   * succeeds) or rejects start (default: rejects, so a misconfigured start fails loudly).
   */
  readonly retryFirstList?: boolean;
}

interface Follow {
  readonly type: ReflectedType;
  watch: ObjectWatch | undefined;
  timer: NodeJS.Timeout | undefined;
  pauseMs: number;
}

export class Reflector {
  private readonly follows: Follow[];
  private readonly retryMs: number;
  private readonly maxRetryMs: number;
  private stopped = false;

  constructor(
    private readonly source: ObjectSource,
    types: readonly ReflectedType[],
    private readonly opts: ReflectorOptions,
  ) {
    this.retryMs = opts.retryMs ?? 1000;
    this.maxRetryMs = Math.max(this.retryMs, opts.maxRetryMs ?? this.retryMs);
    this.follows = types.map((type) => ({ type, watch: undefined, timer: undefined, pauseMs: this.retryMs }));
  }

  /** Lists every type once (resolves then) and follows their changes from there. */
  async start(): Promise<void> {
    this.stopped = false;
    await Promise.all(
      this.follows.map((f) =>
        this.opts.retryFirstList
          ? new Promise<void>((listed) => {
              void this.sync(f, listed);
            })
          : this.listAndWatch(f),
      ),
    );
  }

  stop(): void {
    this.stopped = true;
    for (const f of this.follows) {
      f.watch?.stop();
      f.watch = undefined;
      if (f.timer) clearTimeout(f.timer);
      f.timer = undefined;
    }
  }

  /** listAndWatch, retried after failures; `listed` runs after the first success. */
  private async sync(f: Follow, listed?: () => void): Promise<void> {
    if (this.stopped) return;
    try {
      await this.listAndWatch(f);
      listed?.();
    } catch (err) {
      if (this.stopped) return;
      this.opts.log(`${this.opts.who}: listing ${qualified(f.type)} failed, retrying: ${err instanceof Error ? err.message : String(err)}`);
      this.retry(f, listed);
    }
  }

  private async listAndWatch(f: Follow): Promise<void> {
    const { type } = f;
    const { items, resourceVersion } = await this.source.list(type.group, type.resource);
    if (this.stopped) return;
    type.reset(items);
    f.pauseMs = this.retryMs;
    f.watch?.stop();
    f.watch = this.source.watch(
      type.group,
      type.resource,
      resourceVersion,
      (ev: ObjectEvent) => {
        if (ev.type === 'DELETED') type.remove(ev.object);
        else type.set(ev.object, ev.type);
      },
      (err: Error) => {
        f.watch?.stop();
        f.watch = undefined;
        if (this.stopped) return;
        this.opts.log(`${this.opts.who}: watch of ${qualified(type)} ended (${err.message}); listing again`);
        this.retry(f);
      },
    );
  }

  private retry(f: Follow, listed?: () => void): void {
    const wait = f.pauseMs;
    f.pauseMs = Math.min(f.pauseMs * 2, this.maxRetryMs);
    f.timer = setTimeout(() => {
      f.timer = undefined;
      void this.sync(f, listed);
    }, wait);
    f.timer.unref();
  }
}
