// Values to CBOR, as kube-apiserver writes them: deterministic (map keys in
// RFC 8949 §4.2.1 order: sorted by their encoded bytes, so shorter keys first;
// integers and lengths in their shortest form) and every top-level data item
// behind the self-described tag 55799 (d9 d9 f7). The value is what
// JSON.stringify would write: undefined members are left out, so the CBOR and
// the JSON of an object hold the same fields.
//
// writer.ts writes a JSON value's bytes in one walk. What it gives up on takes
// the older road: cbor-x (see README: cbor2, which sorts keys itself, costs
// ~30× more per object) keeps a plain object's key order, and a JS object
// cannot hold integer-like keys ("10") in any order but numeric, so the value
// is first copied into Maps whose keys are inserted sorted.
//
// A stored (frozen) object is encoded once and its bytes remembered, as its
// JSON is (lib/api/json.ts): lists and watch events splice those bytes.
import { Encoder } from 'cbor-x';
import { CborError } from './errors.js';
import { float16Bits } from './float16.js';
import { takeBytes, writeItem as writeDirect } from './writer.js';

const encoder = new Encoder({
  useRecords: false, // plain CBOR maps, never cbor-x's record extension
  useTag259ForMaps: false, // a Map is an ordinary map, not tag 259
  variableMapSize: true, // the shortest map head
  pack: false,
  tagUint8Array: false,
} as ConstructorParameters<typeof Encoder>[0]);
export const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

const TWO_32 = 2 ** 32;
const ASCII = /^[\x00-\x7f]*$/;

/** RFC 8949 §4.2.1 order of two text keys: UTF-8 length, then bytes. */
function keyOrder(a: string, b: string): number {
  if (ASCII.test(a) && ASCII.test(b)) return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ba.length - bb.length || Buffer.compare(ba, bb);
}

/**
 * The value JSON.stringify would serialize, objects as Maps in key order:
 * undefined members dropped, undefined items null, toJSON applied,
 * non-finite numbers null; integers from 2^32 up as bigints, which cbor-x
 * writes as 64-bit integers (as numbers it would write floats).
 */
function shaped(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return null;
      if (!Number.isSafeInteger(v)) sawFloat = true;
      return Number.isSafeInteger(v) && (v >= TWO_32 || v < -TWO_32) ? BigInt(v) : v;
    }
    if (typeof v === 'bigint') throw new CborError('invalid-value', 'a bigint has no JSON form');
    return v;
  }
  if (depth > 512) throw new CborError('too-deep', 'the value is nested too deeply to encode');
  const withToJson = v as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return shaped(withToJson.toJSON(), depth);
  if (Array.isArray(v)) return v.map((x) => (x === undefined || typeof x === 'function' ? null : shaped(x, depth + 1)));
  const out = new Map<string, unknown>();
  for (const k of Object.keys(v).sort(keyOrder)) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function') continue;
    out.set(k, shaped(x, depth + 1));
  }
  return out;
}

/** Whether the last `shaped` met a number that is not a safe integer (written as a float). */
let sawFloat = false;

/**
 * cbor-x's answer copied out of its shared buffer, since it is kept; a value
 * holding a non-integer number is written by `writeItem` instead, whose
 * floats are in their shortest exact width (cbor-x has no such mode).
 */
function encodeShaped(value: unknown): Buffer {
  return writeDirect(value, 0) >= 0 ? takeBytes() : encodeThroughMaps(value);
}

/**
 * The road writer.ts gives up to (and what test/cbor/writer.test.ts holds it
 * to): the value copied into Maps in key order, then cbor-x.
 */
export function encodeThroughMaps(value: unknown): Buffer {
  sawFloat = false;
  const v = shaped(value, 0);
  if (!sawFloat) return Buffer.from(encoder.encode(v));
  const parts: Buffer[] = [];
  writeItem(v, parts);
  return Buffer.concat(parts);
}

/** A float in the shortest of the 16, 32 and 64-bit forms that holds it exactly. */
function writeFloat(f: number, parts: Buffer[]): void {
  const half = float16Bits(f);
  if (half !== undefined) {
    const b = Buffer.alloc(3);
    b[0] = 0xf9;
    b.writeUInt16BE(half, 1);
    parts.push(b);
  } else if (Math.fround(f) === f) {
    const b = Buffer.alloc(5);
    b[0] = 0xfa;
    b.writeFloatBE(f, 1);
    parts.push(b);
  } else {
    const b = Buffer.alloc(9);
    b[0] = 0xfb;
    b.writeDoubleBE(f, 1);
    parts.push(b);
  }
}

/** A shaped value (null, boolean, number, bigint, string, array, Map in key order) written as cbor-x writes it, floats shortest. */
function writeItem(v: unknown, parts: Buffer[]): void {
  if (v === null) parts.push(Buffer.from([0xf6]));
  else if (v === true) parts.push(Buffer.from([0xf5]));
  else if (v === false) parts.push(Buffer.from([0xf4]));
  else if (typeof v === 'number' && !Number.isSafeInteger(v)) writeFloat(v, parts);
  else if (typeof v === 'number' || typeof v === 'bigint') {
    const n = Number(v);
    parts.push(n >= 0 ? head(0, n) : head(1, -1 - n));
  } else if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    parts.push(head(3, b.length), b);
  } else if (Array.isArray(v)) {
    parts.push(head(4, v.length));
    for (const x of v) writeItem(x, parts);
  } else if (v instanceof Map) {
    parts.push(head(5, v.size));
    for (const [k, x] of v) {
      writeItem(k, parts);
      writeItem(x, parts);
    }
  } else throw new CborError('invalid-value', `no CBOR form for ${typeof v}`);
}

const memo = new WeakMap<object, Buffer>();

/** One data item without the self-described tag; frozen objects are encoded once. */
export function cborItem(value: object): Buffer {
  if (!Object.isFrozen(value)) return encodeShaped(value);
  let b = memo.get(value);
  if (b === undefined) {
    b = encodeShaped(value);
    memo.set(value, b);
  }
  return b;
}

/** A response body: the self-described tag, then the value. */
export function encodeCbor(value: object): Buffer {
  return Buffer.concat([SELF_DESCRIBED, cborItem(value)]);
}

/** The head of a data item (major type, argument) in its shortest form. */
export function head(major: number, n: number): Buffer {
  const m = major << 5;
  if (n < 24) return Buffer.from([m | n]);
  if (n < 0x100) return Buffer.from([m | 24, n]);
  if (n < 0x10000) {
    const b = Buffer.alloc(3);
    b[0] = m | 25;
    b.writeUInt16BE(n, 1);
    return b;
  }
  if (n < 0x100000000) {
    const b = Buffer.alloc(5);
    b[0] = m | 26;
    b.writeUInt32BE(n, 1);
    return b;
  }
  const b = Buffer.alloc(9);
  b[0] = m | 27;
  b.writeBigUInt64BE(BigInt(n), 1);
  return b;
}

/**
 * A map from already encoded members, keys in deterministic order (sorted by
 * their encoded bytes: shorter keys first, then bytewise).
 */
export function splicedMap(members: ReadonlyArray<readonly [string, Buffer | readonly Buffer[]]>): Buffer[] {
  const keyed = members.map(([k, v]) => ({ k, key: encodeShaped(k), v }));
  keyed.sort((a, b) => keyOrder(a.k, b.k));
  const parts: Buffer[] = [head(5, keyed.length)];
  for (const { key, v } of keyed) {
    parts.push(key);
    if (Buffer.isBuffer(v)) parts.push(v);
    else parts.push(...(v as readonly Buffer[]));
  }
  return parts;
}

/** A list (`kind`, `apiVersion`, `metadata`, `items`) whose items are their remembered encodings, copied. */
export function encodeCborList(apiVersion: string, listKind: string, metadata: object, items: readonly object[]): Buffer {
  const encodedItems: Buffer[] = [head(4, items.length)];
  for (const it of items) encodedItems.push(cborItem(it));
  return Buffer.concat([
    SELF_DESCRIBED,
    ...splicedMap([
      ['kind', encodeShaped(listKind)],
      ['apiVersion', encodeShaped(apiVersion)],
      ['metadata', cborItem(metadata)],
      ['items', encodedItems],
    ]),
  ]);
}

/**
 * One event of an `application/cbor-seq` watch: a data item of its own
 * (self-described) holding the WatchEvent `{type, object}`; a client reads
 * the stream item after item, whatever the TCP reads cut it into.
 */
export function encodeCborEvent(type: string, object: object): Buffer {
  const frozen = Object.isFrozen(object);
  const known = frozen ? memo.get(object) : undefined;
  if (known === undefined) {
    // The event in one buffer: the object is written after its head and copied out once.
    const head = eventHead(type);
    if (writeDirect(object, head.length) >= 0) {
      const event = takeBytes();
      head.copy(event, 0);
      if (frozen) memo.set(object, event.subarray(head.length)); // a GET or LIST of the object reads it from here
      return event;
    }
  }
  return Buffer.concat([eventHead(type), known ?? cborItem(object)]);
}

const eventHeads = new Map<string, Buffer>();

/** Everything of an event before its object: the tag, the map head, "type", its value and the key "object" (keys in order). */
function eventHead(type: string): Buffer {
  let h = eventHeads.get(type);
  if (h === undefined) {
    const parts = splicedMap([
      ['type', encodeShaped(type)],
      ['object', Buffer.alloc(0)],
    ]);
    h = Buffer.concat([SELF_DESCRIBED, ...parts]);
    if (eventHeads.size < 16) eventHeads.set(type, h); // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR
  }
  return h;
}
