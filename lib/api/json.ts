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
  if (!plainNoToJson(v)) throw new NotPlain();
  return copyMembers(v as Record<string, unknown>);
}

/**
 * frozenJsonCopy of `{ ...v, [member]: { ...v[member], [field]: value } }` without
 * the two spread copies the expression makes first (a store's write: the object
 * and its metadata, then both copied again). Key order is the expression's: the
 * member and the field keep their places, or come last.
 */
export function frozenJsonCopyWith(v: object, member: string, field: string, value: string): object {
  const inner = (v as Record<string, unknown>)[member];
  try {
    if (!plainNoToJson(v) || (inner !== undefined && !plainNoToJson(inner))) throw new NotPlain();
    const innerOut = copyMembers((inner ?? {}) as Record<string, unknown>, field, value);
    return copyMembers(v as Record<string, unknown>, member, innerOut);
  } catch (err) {
    if (err instanceof NotPlain || err instanceof RangeError) {
      return frozenJsonCopy({ ...v, [member]: { ...(inner as object), [field]: value } });
    }
    throw err;
  }
}

function plainNoToJson(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return (proto === Object.prototype || proto === null) && typeof (v as { toJSON?: unknown }).toJSON !== 'function';
}

/** copy's object case; with `key`, that member set to the already copied `value` (in its place, else last). */
function copyMembers(v: Record<string, unknown>, key?: string, value?: unknown): object {
  const out: Record<string, unknown> = {};
  let placed = false;
  for (const k of Object.keys(v)) {
    if (k === key) {
      setOwn(out, k, value);
      placed = true;
      continue;
    }
    const x = v[k];
    if (x === undefined || typeof x === 'function' || typeof x === 'symbol') continue;
    setOwn(out, k, copy(x));
  }
  if (key !== undefined && !placed) setOwn(out, key, value);
  return Object.freeze(out);
}

class NotJson extends Error {}

/**
 * structuredClone of a JSON-shaped value (plain objects, arrays, primitives;
 * undefined members kept, shared and cyclic references kept shared), without
 * structuredClone's serialization round trip (a stored ConfigMap: ~3.5 µs against ~13 µs; docs/decisions/2026-11-29-write-path-costs.md);
 * anything else, or nesting deeper than the stack, goes to structuredClone.
 */
export function cloneJson<T>(v: T): T {
  try {
    return cloneWalk(v, new Map()) as T;
  } catch (err) {
    if (err instanceof NotJson || err instanceof RangeError) return structuredClone(v);
    throw err;
  }
}

function cloneWalk(v: unknown, seen: Map<object, unknown>): unknown {
  if (typeof v !== 'object' || v === null) {
    if (typeof v === 'function' || typeof v === 'symbol') throw new NotJson();
    return v;
  }
  const hit = seen.get(v);
  if (hit !== undefined) return hit;
  if (Array.isArray(v)) {
    if (Object.getPrototypeOf(v) !== Array.prototype) throw new NotJson();
    const out: unknown[] = new Array(v.length);
    seen.set(v, out);
    for (let i = 0; i < v.length; i++) {
      if (!(i in v)) throw new NotJson(); // holes
      out[i] = cloneWalk(v[i], seen);
    }
    if (Object.keys(v).length !== v.length) throw new NotJson(); // extra members
    return out;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw new NotJson();
  const out: Record<string, unknown> = {};
  seen.set(v, out);
  for (const k of Object.keys(v)) setOwn(out, k, cloneWalk((v as Record<string, unknown>)[k], seen));
  return out;
}

// One frozen `{}` stands for every empty object a store keeps: JSON.parse gives
// each its own with room for four members (56 B), and a managedFields entry's
// fieldsV1 is mostly empty objects (5 of a small ConfigMap's 14 objects).
const EMPTY_OBJECT: object = Object.freeze({});

/**
 * deepFreezeJson for an object a store keeps (its open's replay, a Redis read):
 * frozen in place, its empty objects replaced by one shared frozen `{}` and its
 * strings that repeat across objects (timestamps, managers) shared (see sharedCopy).
 */
export function freezeStored<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value;
  return (freezeStoredWalk(value) ? EMPTY_OBJECT : value) as T;
}

/** Freezes v in place, sharing what it holds; true when v is a plain empty object (for the caller to replace). */
function freezeStoredWalk(v: object): boolean {
  if (Object.isFrozen(v)) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object' && x !== null) {
        if (freezeStoredWalk(x)) v[i] = EMPTY_OBJECT;
      } else if (typeof x === 'string') {
        const y = sharedCopy(x);
        if (y !== undefined) v[i] = y;
      }
    }
    Object.freeze(v);
    return false;
  }
  const o = v as Record<string, unknown>;
  let n = 0;
  for (const k in o) {
    n++;
    const x = o[k];
    if (typeof x === 'object' && x !== null) {
      if (freezeStoredWalk(x)) setOwn(o, k, EMPTY_OBJECT);
    } else if (typeof x === 'string') {
      const y = sharedCopy(x);
      if (y !== undefined) setOwn(o, k, y);
    }
  }
  Object.freeze(v);
  return n === 0 && Object.getPrototypeOf(v) === Object.prototype;
}

// Strings V8's JSON.parse does not already share (it internalizes values of up
// to 10 characters) and short enough to repeat (timestamps, managers' names; a
// uid's 36 never does): one copy per value among the last few thousand seen.
// At 100,000 small ConfigMaps this shares each one's creation time with its
// managedFields time and the manager's name: ~105 B per object for 1.4 µs
// (docs/decisions/2026-11-29-memory-per-object.md).
const SHARED_MAX = 4096;
const shared = new Map<string, string>();

/** The copy of s seen before, to put in its place (strings compare by value: === cannot tell the copies apart); undefined for a first sighting. */
function sharedCopy(s: string): string | undefined {
  if (s.length <= 10 || s.length > 32) return undefined;
  const known = shared.get(s);
  if (known !== undefined) return known;
  // Forgetting all at once keeps the table bounded without an LRU's bookkeeping per string.
  if (shared.size >= SHARED_MAX) shared.clear();
  shared.set(s, s);
  return undefined;
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

/**
 * Characters Go's encoding/json writes as `\uXXXX` (its default HTML-safe
 * escaping, which kube's serializer keeps): `<`, `>`, `&`, U+2028, U+2029.
 * JSON.stringify leaves them as they are; the text is otherwise the same.
 */
const GO_ESCAPED_ALL = /[<>&\u2028\u2029]/g;
/**
 * Whether s has a character Go escapes: five indexOf scans, not the character class
 * `/[<>&\u2028\u2029]/` (a stored ConfigMap's 608 characters: ~0.1 µs against ~1.2 µs,
 * on every store write; docs/decisions/2026-11-29-create-cpu-cuts.md).
 */
export function hasGoEscaped(s: string): boolean {
  return s.indexOf('<') >= 0 || s.indexOf('>') >= 0 || s.indexOf('&') >= 0 || s.indexOf('\u2028') >= 0 || s.indexOf('\u2029') >= 0;
}
const goEscape = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** JSON.stringify's text as Go's encoding/json writes it (compact). */
export function goJson(value: unknown, indent?: number): string {
  const s = JSON.stringify(value, null, indent);
  return hasGoEscaped(s) ? s.replace(GO_ESCAPED_ALL, goEscape) : s;
}

// The answer form: JSON followed by the newline kube's encoder
// (json.Encoder.Encode) ends every body with; toJson views it without.
const jsonMemo = new WeakMap<object, string>();
// listItemBytes's pieces; when an object has one, it is the only encoding kept for it.
const itemMemo = new WeakMap<object, Buffer>();

/**
 * An object's JSON body as kube writes it: goJson followed by "\n"; frozen
 * objects (as stores hand them out) are serialized once. One encoding is kept
 * per object: once a list has its bytes (listItemBytes), the text is decoded
 * from them per answer rather than kept as a second copy.
 */
export function jsonAnswerText(value: object): string {
  if (!Object.isFrozen(value)) return goJson(value) + '\n';
  let s = jsonMemo.get(value);
  if (s === undefined) {
    const b = itemMemo.get(value);
    if (b !== undefined) return b.toString('utf8', 0, b.length - 1) + '\n';
    s = goJson(value) + '\n';
    jsonMemo.set(value, s);
  }
  return s;
}

/** JSON of a value as Go writes it (goJson); frozen objects are serialized once. */
export function toJson(value: object): string {
  if (!Object.isFrozen(value)) return goJson(value);
  return jsonAnswerText(value).slice(0, -1);
}

/**
 * toJson as UTF-8 bytes followed by a comma, encoded once per frozen object:
 * a JSON list's items are these pieces back to back, the last one viewed
 * without its comma. One piece per item instead of item + separator halves
 * what joining a page costs (callgrind, 500 items of ~520 bytes: 365k → 188k
 * instructions per Buffer.concat).
 */
export function listItemBytes(value: object): Buffer {
  if (!Object.isFrozen(value)) return Buffer.from(goJson(value) + ',', 'utf8');
  let b = itemMemo.get(value);
  if (b === undefined) {
    const s = jsonMemo.get(value);
    b = keptText((s === undefined ? goJson(value) : s.slice(0, -1)) + ',');
    itemMemo.set(value, b);
    // The bytes stand for the text from now on (jsonAnswerText decodes them): one copy per object, not two.
    if (s !== undefined) jsonMemo.delete(value);
  }
  return b;
}

// Node's Buffer.from(string) takes a small string's bytes from its shared 8 KiB
// pool but first reserves 3 bytes per character, so ~560-byte items fill only
// 11 per slab (75%). Bytes kept per object are packed into slabs of their own
// instead: 1/4 less memory per listed object (docs/decisions/2026-11-29-memory-per-object.md).
const KEPT_SLAB = 8192;
let keptSlab = Buffer.allocUnsafeSlow(KEPT_SLAB);
let keptUsed = 0;

/** n bytes to be kept as long as some object lives: packed end to end with other kept bytes. */
function keptSpace(n: number): Buffer {
  if (n > KEPT_SLAB >>> 2) return Buffer.allocUnsafeSlow(n);
  if (n > KEPT_SLAB - keptUsed) {
    keptSlab = Buffer.allocUnsafeSlow(KEPT_SLAB);
    keptUsed = 0;
  }
  const b = keptSlab.subarray(keptUsed, keptUsed + n);
  keptUsed += n;
  return b;
}

/** A string's UTF-8 bytes, kept (keptSpace). */
function keptText(text: string): Buffer {
  const b = keptSpace(Buffer.byteLength(text, 'utf8'));
  b.write(text, 0, b.length, 'utf8');
  return b;
}

/**
 * Records the list bytes of a freshly loaded frozen object (one with no encoding kept yet) from the UTF-8
 * JSON it was parsed from, buf[start, end): a store loading what it wrote with JSON.stringify, whose text
 * is toJson's when it holds no character Go escapes (the caller skips those: goEscapedOffsets). The bytes
 * are copied out of buf, which may be a whole file.
 */
export function rememberJsonBytes(value: object, buf: Buffer, start: number, end: number): void {
  if (!Object.isFrozen(value)) return;
  const n = end - start;
  const b = keptSpace(n + 1);
  buf.copy(b, 0, start, end);
  b[n] = 0x2c; // ','
  itemMemo.set(value, b);
}

/**
 * rememberJsonBytes without a copy: `piece` is the object's JSON followed by a comma, a view the caller
 * never changes (a loaded file's buffer, which the view keeps alive).
 */
export function rememberListBytes(value: object, piece: Buffer): void {
  if (Object.isFrozen(value)) itemMemo.set(value, piece);
}

/**
 * The offsets in buf of the characters Go escapes (hasGoEscaped) in UTF-8, ascending: a few native scans
 * of a whole file instead of several per object (usually none are found).
 */
export function goEscapedOffsets(buf: Buffer): number[] {
  const at: number[] = [];
  for (const c of [0x3c, 0x3e, 0x26]) for (let i = buf.indexOf(c); i >= 0; i = buf.indexOf(c, i + 1)) at.push(i);
  // U+2028, U+2029: E2 80 A8, E2 80 A9.
  for (let i = buf.indexOf(LINE_SEPARATORS); i >= 0; i = buf.indexOf(LINE_SEPARATORS, i + 1)) if (buf[i + 2] === 0xa8 || buf[i + 2] === 0xa9) at.push(i);
  return at.sort((x, y) => x - y);
}
const LINE_SEPARATORS = Buffer.from([0xe2, 0x80]);

/** toJson as UTF-8 bytes: listItemBytes's piece viewed without its comma (no copy; kept per frozen object). */
export function jsonBytes(value: object): Buffer {
  const b = listItemBytes(value);
  return b.subarray(0, b.length - 1);
}

const answerBytesMemo = new WeakMap<object, Buffer>();

/**
 * jsonAnswerText as UTF-8 bytes, kept per frozen object: for large answers,
 * which would otherwise be encoded outside V8's heap per request.
 */
export function jsonAnswerBytes(value: object): Buffer {
  if (!Object.isFrozen(value)) return Buffer.from(jsonAnswerText(value), 'utf8');
  let b = answerBytesMemo.get(value);
  if (b === undefined) {
    b = Buffer.from(jsonAnswerText(value), 'utf8');
    answerBytesMemo.set(value, b);
  }
  return b;
}

/**
 * Records the JSON of a frozen object made without JSON.stringify (a store that
 * already built it from the text it wrote), so toJson does not serialize it again.
 * The text must be goJson's (HTML-safe escaped); a text with characters Go
 * escapes is not recorded.
 */
export function rememberJson(value: object, json: string): void {
  if (Object.isFrozen(value) && !hasGoEscaped(json)) jsonMemo.set(value, json + '\n');
}
