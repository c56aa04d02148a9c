// A list+watch cache of one resource type over an ObjectSource (the
// in-process store or a remote core backend): list, then watch from the
// list's revision; when the watch ends (410, backend gone) list again after a
// short backoff. `onChange` runs after every change, synchronously, so the
// caches that derive from this one (routes, endpoints) are rebuilt at once.
import type { KObject } from '../../lib/api/meta.js';
import type { ObjectSource, ObjectWatch } from '../../lib/api/objectsource.js';

export interface InformerOptions {
  readonly objects: ObjectSource;
  readonly group: string;
  readonly resource: string;
  readonly log: (msg: string) => void;
  readonly onChange?: (obj: KObject, type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC') => void;
  /** Longest wait before a re-list after a failure. */
  readonly maxBackoffMs?: number;
}

const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export class Informer {
  #items = new Map<string, KObject>();
  #watch: ObjectWatch | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #backoffMs = 100;
  #synced!: () => void;
  /** Resolves after the first successful list. */
  readonly synced: Promise<void> = new Promise((r) => { this.#synced = r; });
  /** Bumped on every change: derived caches compare it. */
  generation = 0;

  constructor(private readonly opts: InformerOptions) {}

  get name(): string { return `${this.opts.resource}${this.opts.group ? `.${this.opts.group}` : ''}`; }

  start(): void {
    void this.#relist();
  }

  get(namespace: string, name: string): KObject | undefined {
    return this.#items.get(`${namespace}/${name}`);
  }

  list(namespace?: string): KObject[] {
    const all = [...this.#items.values()];
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace);
  }

  stop(): void {
    this.#stopped = true;
    this.#watch?.stop();
    if (this.#timer) clearTimeout(this.#timer);
  }

  async #relist(): Promise<void> {
    if (this.#stopped) return;
    try {
      const { items, resourceVersion } = await this.opts.objects.list(this.opts.group, this.opts.resource);
      if (this.#stopped) return;
      const next = new Map(items.map((o) => [keyOf(o), o]));
      const gone = [...this.#items.values()].filter((o) => !next.has(keyOf(o)));
      this.#items = next;
      this.generation++;
      for (const o of gone) this.opts.onChange?.(o, 'DELETED');
      for (const o of items) this.opts.onChange?.(o, 'SYNC');
      this.#backoffMs = 100;
      this.#synced();
      this.#watch = this.opts.objects.watch(this.opts.group, this.opts.resource, resourceVersion, (ev) => {
        const k = keyOf(ev.object);
        if (ev.type === 'DELETED') this.#items.delete(k); else this.#items.set(k, ev.object);
        this.generation++;
        this.opts.onChange?.(ev.object, ev.type);
      }, (err) => {
        if (this.#stopped) return;
        this.opts.log(`aggregation: watch of ${this.name} ended (${err.message}); listing again`);
        this.#retry();
      });
    } catch (err) {
      if (this.#stopped) return;
      this.opts.log(`aggregation: cannot list ${this.name}: ${err instanceof Error ? err.message : String(err)}`);
      this.#retry();
    }
  }

  #retry(): void {
    this.#watch?.stop();
    this.#watch = undefined;
    const wait = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, this.opts.maxBackoffMs ?? 5000);
    this.#timer = setTimeout(() => void this.#relist(), wait);
    this.#timer.unref();
  }
}
