// Stored objects are JSON, stamped with their revision and deep-frozen, so
// the same instance can be handed to every reader and watcher without copies.
import type { KObject } from '../../../lib/api/meta.js';

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * A JSON copy of obj with resourceVersion = rev. Going through JSON (rather
 * than structuredClone) makes every store keep exactly what a durable store
 * would read back: no undefined fields, no Dates, no shared references.
 */
export function stampedCopy(obj: KObject, rev: number): KObject {
  const copy = JSON.parse(JSON.stringify(obj)) as KObject;
  copy.metadata = { ...copy.metadata, resourceVersion: String(rev) };
  return copy;
}

/** A frozen copy of a frozen object with another resourceVersion; nested parts are shared. */
export function restamp(obj: KObject, rev: number): KObject {
  const metadata = Object.freeze({ ...obj.metadata, resourceVersion: String(rev) });
  return Object.freeze({ ...obj, metadata });
}
