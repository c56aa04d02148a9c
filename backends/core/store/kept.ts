// What a store state keeps of one object: the frozen object itself (file and
// Redis stores), or its JSON text only (the memory store: one form per object,
// not the parsed object and its kept text both; at 100,000 ConfigMaps a bare
// process holding the parsed objects and their bytes takes 4.2× the JSON, the
// text alone ~2.4×; docs/decisions/2026-11-30-one-form-per-object.md).
// A text is parsed when asked, and the last few thousand parsed are remembered.
import type { KObject } from '../../../lib/api/meta.js';
import { freezeStored, rememberJson } from '../../../lib/api/json.js';

/** A stored object as a state keeps it: frozen, or its JSON.stringify text. */
export type Kept = KObject | string;

/**
 * The most recently parsed objects by key, each with the text it was parsed from (a read checks the text
 * it holds is the same string, so an entry never answers for another revision). Two generations of at
 * most GENERATION entries, the older dropped whole when the newer fills: an LRU's order without its
 * bookkeeping on each hit (a GET's lookup stays one or two Map reads).
 */
const GENERATION = 2048;

interface Parsed {
  readonly text: string;
  readonly obj: KObject;
}

export class ParsedCache {
  private young = new Map<string, Parsed>();
  private old = new Map<string, Parsed>();

  /** The object kept for key: itself, or its text parsed (once while it stays among the recent ones). */
  objectOf(key: string, kept: Kept): KObject {
    if (typeof kept !== 'string') return kept;
    const hit = this.young.get(key);
    if (hit !== undefined && hit.text === kept) return hit.obj;
    const older = this.old.get(key);
    if (older !== undefined && older.text === kept) {
      this.put(key, older);
      return older.obj;
    }
    const obj = parseKept(kept);
    this.put(key, { text: kept, obj });
    return obj;
  }

  /** objectOf without remembering what it parses (a list's items: not to push out the hot keys). */
  peek(key: string, kept: Kept): KObject {
    if (typeof kept !== 'string') return kept;
    const hit = this.young.get(key) ?? this.old.get(key);
    return hit !== undefined && hit.text === kept ? hit.obj : parseKept(kept);
  }

  /** A write's object, with the text it keeps: the next reads answer it without a parse. */
  written(key: string, text: string, obj: KObject): void {
    this.put(key, { text, obj });
  }

  private put(key: string, p: Parsed): void {
    if (this.young.size >= GENERATION && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, p);
  }
}

/** A kept object, parsed when it is a text (nothing remembered). */
export function objectOfKept(kept: Kept): KObject {
  return typeof kept === 'string' ? parseKept(kept) : kept;
}

/** The frozen object of a kept text; its answer is that text (toJson serializes nothing). */
function parseKept(text: string): KObject {
  const obj = freezeStored(JSON.parse(text) as KObject);
  rememberJson(obj, text);
  return obj;
}
