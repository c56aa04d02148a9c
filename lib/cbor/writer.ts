// A JSON value → deterministic CBOR in one walk, written into one reused
// buffer: what encode.ts's cbor-x path writes (map keys in RFC 8949 §4.2.1
// order, shortest heads, integers from 2^32 as 64-bit integers) and its own
// writer for floats (shortest exact width), without first copying the value
// into sorted Maps for cbor-x. test/cbor/writer.test.ts holds the two to
// byte-for-byte equality.
//
// Anything but a JSON-shaped value with a JSON form (a bigint, a symbol, a
// value that is itself undefined or a function) or one nested past the depth
// limit makes the writer give up; encode.ts then takes its old road, which
// raises the error.
import { float16Bits } from './float16.js';

/** Thrown (never escapes this module) when encode.ts's own road must take the value. */
const GIVE_UP = new Error('cbor writer: not a plain JSON value');

const MAX_DEPTH = 512; // encode.ts's limit

const START = 64 * 1024;
let buf = Buffer.allocUnsafe(START);
let pos = 0;

function ensure(n: number): void {
  if (pos + n <= buf.length) return;
  const next = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(next, 0, 0, pos);
  buf = next;
}

/**
 * Writes `value` (without the self-described tag) into the shared buffer
 * after `room` bytes left free for the caller, and returns the item's length,
 * or -1 when encode.ts must encode it. Take the bytes with `copyItem`.
 */
export function writeItem(value: unknown, room: number): number {
  pos = 0;
  ensure(room);
  pos = room;
  try {
    item(value, 0);
  } catch (err) {
    if (buf.length > 16 * START) buf = Buffer.allocUnsafe(START);
    if (err === GIVE_UP) return -1;
    throw err;
  }
  return pos - room;
}

/** The bytes `writeItem` just wrote (the caller's room included), copied out; drops a grown buffer. */
export function takeBytes(): Buffer {
  const out = Buffer.allocUnsafe(pos);
  buf.copy(out, 0, 0, pos);
  if (buf.length > 16 * START) buf = Buffer.allocUnsafe(START);
  return out;
}

function head(major: number, n: number): void {
  const m = major << 5;
  if (n < 24) buf[pos++] = m | n;
  else if (n < 0x100) {
    buf[pos++] = m | 24;
    buf[pos++] = n;
  } else if (n < 0x10000) {
    buf[pos++] = m | 25;
    pos = buf.writeUInt16BE(n, pos);
  } else if (n < 0x100000000) {
    buf[pos++] = m | 26;
    pos = buf.writeUInt32BE(n, pos);
  } else {
    buf[pos++] = m | 27;
    pos = buf.writeUInt32BE(Math.floor(n / 0x100000000), pos);
    pos = buf.writeUInt32BE(n >>> 0, pos);
  }
}

// Node's own UTF-8 writer: `buf.write(s, at, 'utf8')` first parses its arguments.
const utf8Write = (s: string, at: number): number => (buf as unknown as { utf8Write(s: string, at: number): number }).utf8Write(s, at);

function text(s: string): void {
  const n = s.length;
  ensure(9 + n * 3);
  if (n < 24) {
    // ASCII is copied here (a native write costs more); at most 3 bytes per UTF-16 unit, so a short
    // string's head is one or two bytes: written after the bytes, when their count is known.
    let i = 0;
    for (; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c > 0x7f) break;
      buf[pos + 1 + i] = c;
    }
    if (i === n) {
      buf[pos] = 0x60 | n;
      pos += 1 + n;
      return;
    }
  }
  head(3, Buffer.byteLength(s, 'utf8'));
  pos += utf8Write(s, pos);
}

function float(f: number): void {
  ensure(9);
  const half = float16Bits(f);
  if (half !== undefined) {
    buf[pos++] = 0xf9;
    pos = buf.writeUInt16BE(half, pos);
  } else if (Math.fround(f) === f) {
    buf[pos++] = 0xfa;
    pos = buf.writeFloatBE(f, pos);
  } else {
    buf[pos++] = 0xfb;
    pos = buf.writeDoubleBE(f, pos);
  }
}

const ASCII = /^[\x00-\x7f]*$/;

/** RFC 8949 §4.2.1 order of two ASCII keys: length, then bytes. */
const asciiOrder = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

function keyOrder(a: string, b: string): number {
  const ba = Buffer.from(a, 'utf8');
  const bb = Buffer.from(b, 'utf8');
  return ba.length - bb.length || Buffer.compare(ba, bb);
}

function item(v: unknown, depth: number): void {
  switch (typeof v) {
    case 'string':
      return text(v);
    case 'number':
      ensure(9);
      if (Number.isSafeInteger(v)) return v >= 0 ? head(0, v) : head(1, -1 - v);
      if (Number.isFinite(v)) return float(v);
      buf[pos++] = 0xf6; // JSON writes a non-finite number as null
      return;
    case 'boolean':
      ensure(1);
      buf[pos++] = v ? 0xf5 : 0xf4;
      return;
    case 'object':
      break;
    default:
      throw GIVE_UP;
  }
  if (v === null) {
    ensure(1);
    buf[pos++] = 0xf6;
    return;
  }
  if (depth > MAX_DEPTH) throw GIVE_UP;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') throw GIVE_UP;
  if (Array.isArray(v)) {
    ensure(9);
    head(4, v.length);
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x === undefined || typeof x === 'function') {
        ensure(1);
        buf[pos++] = 0xf6; // as JSON writes such an item
      } else item(x, depth + 1);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  let n = 0;
  let ascii = true;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    if (x === undefined || typeof x === 'function') continue; // members JSON leaves out
    // Insertion sort as the keys come (an object holds a handful): Array#sort's comparator calls cost more.
    if (ascii && ASCII.test(k)) {
      let j = n;
      while (j > 0 && asciiOrder(keys[j - 1]!, k) > 0) {
        keys[j] = keys[j - 1]!;
        j--;
      }
      keys[j] = k;
    } else {
      ascii = false;
      keys[n] = k;
    }
    n++;
  }
  if (!ascii) {
    if (n !== keys.length) keys.length = n;
    keys.sort(keyOrder);
  }
  ensure(9);
  head(5, n);
  for (let i = 0; i < n; i++) {
    const k = keys[i]!;
    text(k);
    item(o[k], depth + 1);
  }
}
