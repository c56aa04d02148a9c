// JSON values compared and copied without a serialization round trip (the
// write path compares and copies whole objects several times per request, and
// stringify + parse costs 3–5× a direct walk),
// and frozen values serialized once for every reader.
import { setOwn } from './own.js';

/**
 * Equality of two JSON-shaped values as their JSON would compare after a
 * parse: key order ignored, members whose value is undefined treated as absent.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  return membersEqual(a as Record<string, unknown>, b as Record<string, unknown>, undefined);
}

/** jsonEqual of two objects' members, skipping the names in `skip` on both sides. */
export function membersEqual(a: Record<string, unknown>, b: Record<string, unknown>, skip: ReadonlySet<string> | undefined): boolean {
  let n = 0;
  for (const k in a) {
    if (a[k] === undefined || skip?.has(k)) continue;
    n++;
    if (!jsonEqual(a[k], b[k])) return false;
  }
  for (const k in b) if (b[k] !== undefined && !skip?.has(k)) n--;
  return n === 0;
}

class NotPlain extends Error {}

/**
 * A deep-frozen copy of a JSON-shaped value holding exactly what
 * `JSON.parse(JSON.stringify(v))` would (undefined members dropped, undefined
 * array items and non-finite numbers as null). Frozen subtrees are shared,
 * not copied: in this project only stores freeze, and what they freeze is
 * already such a copy. Values JSON would transform in other ways (toJSON,
 * class instances, bigint) take the round trip.
 */
export function frozenJsonCopy<T>(v: T): T {
  try {
    return copy(v) as T;
  } catch (err) {
    if (err instanceof NotPlain || err instanceof RangeError) return deepFreezeJson(JSON.parse(JSON.stringify(v))) as T;
    throw err;
  }
}

function copy(v: unknown): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? v : null;
    case 'object':
      break;
    default:
      throw new NotPlain(); // undefined, function, symbol, bigint at the top or in an array: left to JSON's rules
  }
  if (v === null || Object.isFrozen(v)) return v;
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      out[i] = x === undefined ? null : copy(x);
    }
    return Object.freeze(out);
  }
  const proto = Object.getPrototypeOf(v);
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') throw new NotPlain();
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    setOwn(out, k, copy(x));
  }
  return Object.freeze(out);
}

/** Freezes a freshly parsed JSON value in place. */
export function deepFreezeJson<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (Array.isArray(value)) for (const x of value) deepFreezeJson(x);
    else for (const k in value) deepFreezeJson((value as Record<string, unknown>)[k]);
  }
  return value;
}

const jsonMemo = new WeakMap<object, string>();

/** JSON of a value; frozen objects (as stores hand them out) are serialized once. */
export function toJson(value: object): string {
  if (!Object.isFrozen(value)) return JSON.stringify(value);
  let s = jsonMemo.get(value);
  if (s === undefined) {
    s = JSON.stringify(value);
    jsonMemo.set(value, s);
  }
  return s;
}

const itemMemo = new WeakMap<object, Buffer>();

/**
 * toJson as UTF-8 bytes followed by a comma, encoded once per frozen object:
 * a JSON list's items are these pieces back to back, the last one viewed
 * without its comma. One piece per item instead of item + separator halves
 * what joining a page costs (callgrind, 500 items of ~520 bytes: 365k → 188k
 * instructions per Buffer.concat).
 */
export function listItemBytes(value: object): Buffer {
  if (!Object.isFrozen(value)) return Buffer.from(JSON.stringify(value) + ',', 'utf8');
  let b = itemMemo.get(value);
  if (b === undefined) {
    b = Buffer.from(toJson(value) + ',', 'utf8');
    itemMemo.set(value, b);
  }
  return b;
}

/** toJson as UTF-8 bytes: listItemBytes's piece viewed without its comma (no copy; kept per frozen object). */
export function jsonBytes(value: object): Buffer {
  const b = listItemBytes(value);
  return b.subarray(0, b.length - 1);
}

/**
 * Records the JSON of a frozen object made without JSON.stringify (a store that
 * already built it from the text it wrote), so toJson does not serialize it again.
 */
export function rememberJson(value: object, json: string): void {
  if (Object.isFrozen(value)) jsonMemo.set(value, json);
}
