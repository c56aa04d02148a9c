// How objects travel through Redis: JSON whose `metadata.resourceVersion` is
// empty (the revision lives beside it, so Lua never parses JSON; the member
// only holds its place in kube's key order), stamped and deep-frozen when read
// back (objects.ts storedCopy makes what is written).
import type { KObject } from '../../../lib/api/meta.js';
import { StoreError } from './types.js';
import { freezeStored } from '../../../lib/api/json.js';

/** A frozen object from stored JSON, stamped with rev. */
export function decodeObject(json: string, rev: number, where: string): KObject {
  let obj: KObject;
  try {
    obj = JSON.parse(json) as KObject;
  } catch (err) {
    throw new StoreError('corrupt', `unreadable object at ${where}: ${err instanceof Error ? err.message : String(err)}`);
  }
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
