// How objects travel through Redis: JSON whose `metadata.resourceVersion` is
// empty (the revision lives beside it, so Lua never parses JSON; the member
// only holds its place in kube's key order), stamped and deep-frozen when read
// back (objects.ts storedCopy makes what is written).
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import { freezeStored, rememberListText } from '../../../lib/api/json.js';

/**
 * A frozen object from stored JSON, stamped with rev. `keepText` (a cache being built): its list bytes are
 * the stored text with the stamp written in, so the cache's first lists serialize nothing.
 */
export function decodeObject(json: string, rev: number, where: string, keepText = false): KObject {
  let obj: KObject;
  try {
    obj = JSON.parse(json) as KObject;
  } catch (err) {
    throw new StoreError('corrupt', `unreadable object at ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const at = keepText ? stampAt(json, obj) : -1;
  const stamp = String(rev);
  obj.metadata = { ...obj.metadata, resourceVersion: stamp };
  const frozen = freezeStored(obj);
  if (at >= 0) rememberListText(frozen, json, at, stamp);
  return frozen;
}

/**
 * The offset in json (JSON.stringify's text of obj, parsed from it) of the closing quote of the empty
 * `metadata.resourceVersion`, or -1. Found only when every member written before it (the object's before
 * metadata, metadata's before resourceVersion) is a string the text holds unescaped, as kube's key order
 * puts them (kind, apiVersion; name, namespace, uid): each is matched in place, `"key":"value",` with the
 * raw strings (a character JSON escapes would not match), so nothing is serialized to find it.
 */
function stampAt(json: string, obj: KObject): number {
  if (json.charCodeAt(0) !== 0x7b) return -1;
  let p = 1;
  const top = obj as unknown as Record<string, unknown>;
  for (const k of Object.keys(top)) {
    if (k === 'metadata') break;
    p = stringMember(json, p, k, top[k]);
    if (p < 0) return -1;
  }
  if (!json.startsWith('"metadata":{', p)) return -1;
  p += 12;
  const meta = obj.metadata as unknown as Record<string, unknown>;
  for (const k of Object.keys(meta)) {
    if (k === 'resourceVersion') return meta[k] === '' && json.startsWith('"resourceVersion":""', p) ? p + 19 : -1;
    p = stringMember(json, p, k, meta[k]);
    if (p < 0) return -1;
  }
  return -1;
}

/** The offset after `"k":"v",` at p in json, or -1 when v is no string or the text there is not that. */
function stringMember(json: string, p: number, k: string, v: unknown): number {
  if (typeof v !== 'string' || json.charCodeAt(p) !== 0x22 || !json.startsWith(k, p + 1)) return -1;
  p += k.length + 1;
  if (!json.startsWith('":"', p) || !json.startsWith(v, p + 3)) return -1;
  p += v.length + 3;
  return json.startsWith('",', p) ? p + 2 : -1;
}
/** Splits a hash value `<rev> <json>`. */
export function splitStored(value: string, where: string): { rev: number; json: string } {
  const sp = value.indexOf(' ');
  const rev = sp > 0 ? Number(value.slice(0, sp)) : NaN;
  if (!Number.isSafeInteger(rev)) throw new StoreError('corrupt', `unreadable stored value at ${where}`);
  return { rev, json: value.slice(sp + 1) };
}
