// How objects travel through Redis: JSON whose `metadata.resourceVersion` is
// empty (the revision lives beside it, so Lua never parses JSON; the member
// only holds its place in kube's key order), stamped and deep-frozen when read
// back (objects.ts storedCopy makes what is written).
import { isUtf8 } from 'node:buffer';
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import type { Kept } from './kept.js';
import { freezeStored, hasGoEscaped, rememberListBytes } from '../../../lib/api/json.js';

/** A frozen object from stored JSON, stamped with rev. */
export function decodeObject(json: string, rev: number, where: string): KObject {
  return stamped(parsed(json, where), rev);
}

function parsed(json: string, where: string): KObject {
  try {
    return JSON.parse(json) as KObject;
  } catch (err) {
    throw new StoreError('corrupt', `unreadable object at ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function stamped(obj: KObject, rev: number): KObject {
  obj.metadata = { ...obj.metadata, resourceVersion: String(rev) };
  return freezeStored(obj);
}

/** Splits a hash value `<rev> <json>`. */
export function splitStored(value: string, where: string): { rev: number; json: string } {
  const sp = value.indexOf(' ');
  const rev = sp > 0 ? Number(value.slice(0, sp)) : NaN;
  if (!Number.isSafeInteger(rev)) throw new StoreError('corrupt', `unreadable stored value at ${where}`);
  return { rev, json: value.slice(sp + 1) };
}

/** The empty stamp as JSON.stringify writes it in a stored value. */
const EMPTY_STAMP = Buffer.from('"resourceVersion":""', 'latin1');

/**
 * decodeObject of a hash value `<rev> <json>` as the bytes Redis sent (a cache being built from the
 * snapshot), which become the object's list bytes (`lib/api/json.ts` listItemBytes): the value's bytes
 * are rewritten in place into `<json with the stamp written in>,` (the revision's digits move into the
 * stamp, the space makes room for the comma). No copy and no new memory: the cache's first lists
 * serialize nothing. The caller hands value over. What the cache keeps of it (kept.ts): those bytes alone,
 * or the object when its text could not become them.
 */
export function decodeStoredBytes(value: Buffer, where: string): Kept {
  const sp = value.indexOf(0x20);
  const digits = sp > 0 ? value.toString('latin1', 0, sp) : '';
  const rev = sp > 0 ? Number(digits) : NaN;
  if (!Number.isSafeInteger(rev)) throw new StoreError('corrupt', `unreadable stored value at ${where}`);
  const json = value.toString('utf8', sp + 1);
  const obj = parsed(json, where);
  const empty = emptyStamp(obj);
  const frozen = stamped(obj, rev);
  // Digits that are not the stamp's ("007") would not fit.
  const h = empty && digits === frozen.metadata.resourceVersion ? stampEnd(value, sp + 1, json) : -1;
  if (h < 0) return frozen;
  stampInPlace(value, digits, h);
  return rememberListBytes(frozen, value);
}

/** Whether a parsed stored object's stamp is the empty one its text holds. */
function emptyStamp(obj: KObject): boolean {
  return (obj.metadata as { resourceVersion?: unknown } | null | undefined)?.resourceVersion === '';
}

/**
 * The offset in bytes of the closing quote of the empty stamp of the stored text json (bytes[from..],
 * decoded), or -1 when the stamped text would not be the object's list bytes. The stored text is
 * JSON.stringify's of the object but for its stamp (backends/core/store/README.md); the stamp is
 * metadata's when the parsed metadata's is empty and the text holds `"resourceVersion":""` once (a quote
 * inside a string is escaped, so the bytes match only a member). Bytes that are not UTF-8 decode to
 * U+FFFD, which goJson writes differently; Go escapes characters JSON.stringify does not.
 */
function stampEnd(bytes: Buffer, from: number, json: string): number {
  const at = bytes.indexOf(EMPTY_STAMP, from);
  if (at < 0 || bytes.indexOf(EMPTY_STAMP, at + 1) >= 0 || hasGoEscaped(json) || !isUtf8(bytes)) return -1;
  return at + EMPTY_STAMP.length - 1;
}

/**
 * value = `<digits> <A><B>`, A ending with `"resourceVersion":"` just before h and B starting with its
 * closing quote, becomes `<A><digits><B>,` in the same bytes: A moves to the front, the digits follow it,
 * B moves one byte back and the last byte is the comma.
 */
function stampInPlace(value: Buffer, digits: string, h: number): void {
  const a = h - digits.length - 1;
  value.copyWithin(0, digits.length + 1, h);
  for (let i = 0; i < digits.length; i++) value[a + i] = digits.charCodeAt(i);
  value.copyWithin(h - 1, h);
  value[value.length - 1] = 0x2c; // ','
}
