// The registry in force, swapped whole when CustomResourceDefinitions change:
// readers take `current` when they need it (one property read), never keep a
// Registry from start. Whatever is derived from a registry (discovery
// documents, OpenAPI) is rebuilt once per swap (see `derived`), not per request.
import type { Registry } from './index.js';

/** Anything that hands out the registry in force; a LiveRegistry, or a fixed one. */
export interface RegistrySource {
  readonly current: Registry;
}

export class LiveRegistry implements RegistrySource {
  #current: Registry;
  readonly #listeners = new Set<(next: Registry) => void>();

  constructor(initial: Registry) {
    this.#current = initial;
  }

  get current(): Registry {
    return this.#current;
  }

  /** Puts `next` in force; listeners run synchronously, after the swap. */
  set(next: Registry): void {
    if (next === this.#current) return;
    this.#current = next;
    for (const fn of this.#listeners) fn(next);
  }

  /** Called after every swap; returns the unsubscribe function. */
  onChange(fn: (next: Registry) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }
}

/** A source that never changes (a sample backend, tests). */
export function fixedRegistry(r: Registry): RegistrySource {
  return Object.freeze({ current: r });
}

/** `build(registry)` for the registry in force, rebuilt only when another one is in force. */
export function derived<T>(source: RegistrySource, build: (r: Registry) => T): () => T {
  let from: Registry | undefined;
  let value: T;
  return () => {
    const r = source.current;
    if (r !== from) {
      value = build(r);
      from = r;
    }
    return value;
  };
}
