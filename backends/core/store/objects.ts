// Stored objects are JSON, stamped with their revision and deep-frozen, so
// the same instance can be handed to every reader and watcher without copies.
import type { KObject } from '../../../lib/api/meta.js';
import { frozenJsonCopyWith } from '../../../lib/api/json.js';

/**
 * A frozen copy of obj as a durable store would read it back (no undefined
 * fields, no Dates, nothing the caller can still change), stamped with rev or,
 * without one, with an empty `metadata.resourceVersion` (the Redis store's
 * form: the member keeps its place in kube's key order for the stamp made on
 * reading). Parts that are already frozen — the live object's, carried over
 * by an update — are shared.
 */
export function storedCopy(obj: KObject, rev?: number): KObject {
  return frozenJsonCopyWith(obj, 'metadata', 'resourceVersion', rev === undefined ? '' : String(rev)) as KObject;
}

/** A frozen copy of a frozen object with another resourceVersion; nested parts are shared. */
export function restamp(obj: KObject, rev: number): KObject {
  const metadata = Object.freeze({ ...obj.metadata, resourceVersion: String(rev) });
  return Object.freeze({ ...obj, metadata });
}
