// A list+watch cache of one resource type over an ObjectSource (the
// in-process store or a remote core backend), kept by lib/api/reflector.ts:
// list, then watch from the list's revision; when the watch ends (410,
// backend gone) or a list fails, list again after a backoff (100 ms doubling
// to 5 s). The `onChange` given to start() runs after every change,
// synchronously, so the caches that derive from this one (routes, endpoints)
// are rebuilt at once; nothing is delivered before start(), so whatever the
// callback uses can be built after the informer.
import type { KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { Reflector } from '../../lib/api/reflector.js';

export interface InformerOptions {
  readonly objects: ObjectSource;
  readonly group: string;
  readonly resource: string;
  readonly log: (msg: string) => void;
}

export type ChangeHandler = (obj: KObject, type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC') => void;

const keyOf = (o: KObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export class Informer {
  #items = new Map<string, KObject>();
  readonly #reflector: Reflector;
  #onChange: ChangeHandler | undefined;
  /** Bumped on every change: derived caches compare it. */
  generation = 0;

  constructor(opts: InformerOptions) {
    const changed = (obj: KObject, type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'SYNC'): void => {
      this.generation++;
      this.#onChange?.(obj, type);
    };
    this.#reflector = new Reflector(
      opts.objects,
      [
        {
          group: opts.group,
          resource: opts.resource,
          reset: (items) => {
            const next = new Map(items.map((o) => [keyOf(o), o]));
            const gone = [...this.#items.values()].filter((o) => !next.has(keyOf(o)));
            this.#items = next;
            this.generation++;
            for (const o of gone) this.#onChange?.(o, 'DELETED');
            for (const o of items) this.#onChange?.(o, 'SYNC');
          },
          set: (o, type) => {
            this.#items.set(keyOf(o), o);
            changed(o, type);
          },
          remove: (o) => {
            this.#items.delete(keyOf(o));
            changed(o, 'DELETED');
          },
        },
      ],
      { who: 'aggregation', log: opts.log, retryMs: 100, maxRetryMs: 5000, retryFirstList: true },
    );
  }

  /** Lists and watches; `onChange` is told of every change from the first list on. */
  start(onChange?: ChangeHandler): void {
    this.#onChange = onChange;
    void this.#reflector.start();
  }

  get(namespace: string, name: string): KObject | undefined {
    return this.#items.get(`${namespace}/${name}`);
  }

  list(namespace?: string): KObject[] {
    const all = [...this.#items.values()];
    return namespace === undefined ? all : all.filter((o) => (o.metadata.namespace ?? '') === namespace);
  }

  stop(): void {
    this.#reflector.stop();
  }
}
