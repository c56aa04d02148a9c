// Stored objects are JSON, stamped with their revision and deep-frozen, so
// the same instance can be handed to every reader and watcher without copies.
import type { KObject } from '../../../lib/api/meta.js';
import { frozenJsonCopy, rememberJson } from '../../../lib/api/json.js';

/**
 * A frozen copy of obj as a durable store would read it back (no undefined
 * fields, no Dates, nothing the caller can still change), stamped with rev or,
 * without one, with no `metadata.resourceVersion`. Parts that are already
 * frozen — the live object's, carried over by an update — are shared.
 */
export function storedCopy(obj: KObject, rev?: number): KObject {
  return frozenJsonCopy({ ...obj, metadata: { ...obj.metadata, resourceVersion: rev === undefined ? undefined : String(rev) } });
}

/** A frozen copy of a frozen object with another resourceVersion; nested parts are shared. */
export function restamp(obj: KObject, rev: number): KObject {
  const metadata = Object.freeze({ ...obj.metadata, resourceVersion: String(rev) });
  return Object.freeze({ ...obj, metadata });
}

/**
 * The JSON of a stored copy without a revision (storedCopy(obj)), and a
 * function that stamps it: stamped(rev) is the JSON of restamp(stored, rev),
 * made from the same pieces, and remembered for that object so answering it
 * and sending it to watchers serialize nothing again. restamp adds
 * resourceVersion as metadata's last member, so only metadata's text changes.
 */
export function storedJson(stored: KObject): { json: string; stamp(rev: number): KObject } {
  let head = '{';
  let meta = '';
  let tail = '';
  let sep = '';
  for (const k of Object.keys(stored)) {
    const name = `${sep}${JSON.stringify(k)}:`;
    sep = ',';
    if (k === 'metadata') {
      head += name;
      meta = JSON.stringify(stored.metadata);
    } else if (meta) tail += name + JSON.stringify(stored[k]);
    else head += name + JSON.stringify(stored[k]);
  }
  tail += '}';
  return {
    json: head + meta + tail,
    stamp: (rev) => {
      const out = restamp(stored, rev);
      if (meta) rememberJson(out, `${head}${meta.slice(0, -1)}${meta.length > 2 ? ',' : ''}"resourceVersion":"${rev}"}${tail}`);
      return out;
    },
  };
}
