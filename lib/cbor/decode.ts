// A CBOR request body to the JSON object kube-apiserver would take from it.
// cbor2 reads the bytes (truncation, trailing bytes, indefinite lengths,
// duplicate keys as encoded); this file turns its values into JSON values:
//  - text and byte strings are both strings (client-go writes strings and
//    map keys as byte strings, kube's encoder does), byte strings must be UTF-8;
//  - maps become plain objects whose keys are strings, written by own
//    property (`__proto__` is a key like any other); a key present both as
//    text and as bytes is a duplicate;
//  - the self-described tag 55799 is dropped wherever it stands; every other
//    tag is refused (kube accepts no tag on the way in that JSON could not
//    carry);
//  - integers beyond int64, NaN, ±Infinity, undefined and other simple
//    values are refused, as they have no JSON form.
import { decode, Tag } from 'cbor2';
import { hasOwn, setOwn } from '../api/own.js';
import { CborError, SELF_DESCRIBED_TAG } from './errors.js';

const OPTIONS = Object.freeze({
  preferMap: true,
  rejectDuplicateKeys: true,
  ignoreGlobalTags: true,
  rejectUndefined: true,
  rejectSimple: true,
});

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** How deep a body may nest (lib/validation's JSON bound is 64 for objects; CBOR gets the same). */
export const CBOR_MAX_DEPTH = 64;

function text(b: Uint8Array, where: string): string {
  try {
    return utf8.decode(b);
  } catch {
    throw new CborError('invalid-value', `${where}: a byte string is not valid UTF-8`);
  }
}

function toJsonValue(v: unknown, path: string, depth: number): unknown {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new CborError('invalid-value', `${path}: ${v} has no JSON form`);
    return v;
  }
  if (typeof v === 'bigint') {
    if (v < INT64_MIN || v > INT64_MAX) throw new CborError('invalid-value', `${path}: the integer ${v} does not fit in 64 bits`);
    return Number(v);
  }
  if (v instanceof Uint8Array) return text(v, path);
  if (depth >= CBOR_MAX_DEPTH) throw new CborError('too-deep', `${path}: nested more than ${CBOR_MAX_DEPTH} levels`);
  if (v instanceof Tag) {
    if (Number(v.tag) !== SELF_DESCRIBED_TAG) throw new CborError('unsupported-tag', `${path}: tag ${v.tag} is not supported`);
    return toJsonValue(v.contents, path, depth + 1);
  }
  if (Array.isArray(v)) return v.map((x, i) => toJsonValue(x, `${path}[${i}]`, depth + 1));
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [rawKey, value] of v) {
      const key = typeof rawKey === 'string' ? rawKey : rawKey instanceof Uint8Array ? text(rawKey, `${path} (a map key)`) : undefined;
      if (key === undefined) throw new CborError('invalid-value', `${path}: a map key must be a string, not ${describe(rawKey)}`);
      if (hasOwn(out, key)) throw new CborError('duplicate-key', `${path}: duplicate map key "${key}"`);
      setOwn(out, key, toJsonValue(value, `${path}.${key}`, depth + 1));
    }
    return out;
  }
  throw new CborError('invalid-value', `${path}: ${describe(v)} has no JSON form`);
}

function describe(v: unknown): string {
  if (v instanceof Tag) return `tag ${v.tag}`;
  if (v === undefined) return 'undefined';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Map) return 'a map';
  return typeof v === 'object' ? ((v as object).constructor?.name ?? 'an object') : typeof v;
}

/** cbor2 names a duplicate key by its encoded bytes (`"0x6161"`): say the key itself when it is a string. */
function duplicateKeyName(message: string): string {
  const hex = /0x([0-9a-f]+)/i.exec(message)?.[1];
  if (hex === undefined) return 'in a map';
  try {
    const k = decode(Buffer.from(hex, 'hex'), OPTIONS);
    if (typeof k === 'string') return `"${k}"`;
    if (k instanceof Uint8Array) return `"${text(k, 'a map key')}"`;
  } catch {
    /* not a string key: name its bytes */
  }
  return `0x${hex}`;
}

/** cbor2's messages for well-formedness, with the one for duplicates made ours. */
function read(buf: Uint8Array): unknown {
  try {
    return decode(buf, OPTIONS);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    if (/^Duplicate key/.test(why)) throw new CborError('duplicate-key', `duplicate map key ${duplicateKeyName(why)}`);
    if (err instanceof RangeError && /bounds|offset/i.test(why)) throw new CborError('malformed', 'unexpected end of data (the body is truncated)');
    throw new CborError('malformed', why);
  }
}

/** Any JSON value of one CBOR data item (a whole body: trailing bytes are an error). */
export function decodeCborValue(buf: Uint8Array): unknown {
  return toJsonValue(read(buf), '<root>', 0);
}

/** A body that must be an object (create, update, apply). */
export function decodeCborObject(buf: Uint8Array): Record<string, unknown> {
  const v = decodeCborValue(buf);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw new CborError('not-an-object', `the body must be a map (an object), not ${v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v}`);
  }
  return v as Record<string, unknown>;
}
