// Data a client or a configuration file supplies is walked by own properties
// only: there `__proto__`, `constructor` and `prototype` are ordinary keys.
// `key in obj` and `obj[key]` see what a plain object inherits (the
// `__proto__` accessor, `constructor`, `toString`), and `obj[key] = v` with
// the key `__proto__` swaps the object's prototype instead of storing data;
// these three helpers are the one place that knows it.

type Obj = Record<string, unknown>;

/** Whether `obj` holds `key` itself (never through its prototype). */
export const hasOwn: (obj: object, key: PropertyKey) => boolean = Object.hasOwn;

/** `obj[key]` if `obj` holds it itself, else undefined. */
export function ownValue(obj: object, key: string): unknown {
  return Object.hasOwn(obj, key) ? (obj as Obj)[key] : undefined;
}

/** Stores `value` as `obj`'s own `key`, `__proto__` included. */
export function setOwn(obj: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else (obj as Obj)[key] = value;
}

/**
 * A shallow copy of `src`'s own enumerable string-keyed members, in their order (`{ ...src }` for
 * the plain data a decoder makes), `__proto__` an own member. Not the spread itself: on Node 20's V8
 * an object made by `{ ...src }` that is then given a member it lacked gets a hidden class of its
 * own, so every later property access on it misses V8's caches and calls into the runtime
 * (a ConfigMap create's metadata: ~25k instructions; docs/decisions/2026-11-30-create-cpu-cuts-4.md).
 */
export function copyOwn(src: object): Obj {
  const out: Obj = {};
  for (const k of Object.keys(src)) setOwn(out, k, (src as Obj)[k]);
  return out;
}

/**
 * Removes `obj`'s own `key` when it holds one. A `delete` of a member that is not there still calls
 * into V8's runtime: a create's metadata lacks most of the server fields it clears, and checking
 * first saves ~2.7k instructions on its five (docs/decisions/2026-11-30-create-cpu-cuts-3.md).
 */
export function deleteOwn(obj: object, key: string): void {
  if (Object.hasOwn(obj, key)) delete (obj as Obj)[key];
}
