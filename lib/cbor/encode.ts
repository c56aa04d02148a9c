// Values to CBOR, as kube-apiserver writes them: deterministic (RFC 8949
// §4.2.1 core deterministic encoding: shortest integer and float forms, map
// keys sorted by their encoded bytes) and every top-level data item behind
// the self-described tag 55799 (d9 d9 f7). The value is what JSON.stringify
// would write: undefined members are left out, so the CBOR and the JSON of an
// object hold the same fields.
//
// A stored (frozen) object is encoded once and its bytes remembered, as its
// JSON is (lib/api/json.ts): lists and watch events splice those bytes.
import { encode } from 'cbor2';
import { setOwn } from '../api/own.js';
import { CborError } from './errors.js';

const OPTIONS = Object.freeze({ cde: true });
export const SELF_DESCRIBED = Buffer.from([0xd9, 0xd9, 0xf7]);

/** The value JSON.stringify would serialize: undefined members dropped, undefined items null, toJSON applied. */
function jsonShaped(v: unknown, depth: number): unknown {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'number' && !Number.isFinite(v)) return null; // as JSON.stringify
    if (typeof v === 'bigint') throw new CborError('invalid-value', 'a bigint has no JSON form');
    return v;
  }
  if (depth > 512) throw new CborError('too-deep', 'the value is nested too deeply to encode');
  const withToJson = v as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return jsonShaped(withToJson.toJSON(), depth);
  if (Array.isArray(v)) return v.map((x) => (x === undefined || typeof x === 'function' ? null : jsonShaped(x, depth + 1)));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    const x = (v as Record<string, unknown>)[k];
    if (x === undefined || typeof x === 'function') continue;
    setOwn(out, k, jsonShaped(x, depth + 1));
  }
  return out;
}

const memo = new WeakMap<object, Buffer>();

/** One data item without the self-described tag; frozen objects are encoded once. */
export function cborItem(value: object): Buffer {
  if (!Object.isFrozen(value)) return toBuffer(encode(jsonShaped(value, 0), OPTIONS));
  let b = memo.get(value);
  if (b === undefined) {
    b = toBuffer(encode(jsonShaped(value, 0), OPTIONS));
    memo.set(value, b);
  }
  return b;
}

function toBuffer(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
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
  if (n < 0x10000) { const b = Buffer.alloc(3); b[0] = m | 25; b.writeUInt16BE(n, 1); return b; }
  if (n < 0x100000000) { const b = Buffer.alloc(5); b[0] = m | 26; b.writeUInt32BE(n, 1); return b; }
  const b = Buffer.alloc(9); b[0] = m | 27; b.writeBigUInt64BE(BigInt(n), 1); return b;
}

/**
 * A map from already encoded members, keys in deterministic order (sorted by
 * their encoded bytes: shorter keys first, then bytewise).
 */
export function splicedMap(members: ReadonlyArray<readonly [string, Buffer | readonly Buffer[]]>): Buffer[] {
  const keyed = members.map(([k, v]) => ({ key: toBuffer(encode(k, OPTIONS)), v }));
  keyed.sort((a, b) => Buffer.compare(a.key, b.key));
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
  return Buffer.concat([SELF_DESCRIBED, ...splicedMap([
    ['kind', toBuffer(encode(listKind, OPTIONS))],
    ['apiVersion', toBuffer(encode(apiVersion, OPTIONS))],
    ['metadata', cborItem(metadata)],
    ['items', encodedItems],
  ])]);
}

/**
 * One event of an `application/cbor-seq` watch: a data item of its own
 * (self-described) holding the WatchEvent `{type, object}`; a client reads
 * the stream item after item, whatever the TCP reads cut it into.
 */
export function encodeCborEvent(type: string, object: object): Buffer {
  return Buffer.concat([SELF_DESCRIBED, ...splicedMap([
    ['type', toBuffer(encode(type, OPTIONS))],
    ['object', cborItem(object)],
  ])]);
}
