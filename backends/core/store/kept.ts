// What a store state keeps of one object: the frozen object itself (file and
// Redis stores), or its JSON bytes only (the memory store: one form per object,
// not the parsed object and its bytes both; at 100,000 ConfigMaps a bare process
// holding the parsed objects and their bytes takes 4.2× the JSON, the bytes
// alone ~2.2×; docs/decisions/2026-11-30-one-form-list-pages.md).
// The bytes are the object's list piece (lib/api/json.ts listItemBytes: its
// answer's JSON and a comma), so a LIST page joins them and a JSON GET answers
// them (Store.getPieceNow) without a parse; other reads parse them, and the last
// few thousand parsed are remembered.
import type { KObject } from '../../../lib/api/meta.js';
import { objectOfJsonBytes } from '../../../lib/api/json.js';

/** A stored object as a state keeps it: frozen, or its list piece (keptJsonBytes). */
export type Kept = KObject | Buffer;

/** Whether a kept value is bytes (the memory store's) rather than the object. */
export function isBytes(kept: Kept): kept is Buffer {
  return kept instanceof Uint8Array;
}

/**
 * The most recently parsed objects by key, each with the bytes it was parsed from (a read checks the bytes
 * it holds are the same Buffer, so an entry never answers for another revision). Two generations of at
 * most GENERATION entries, the older dropped whole when the newer fills: an LRU's order without its
 * bookkeeping on each hit (a GET's lookup stays one or two Map reads).
 */
const GENERATION = 2048;

interface Parsed {
  readonly bytes: Buffer;
  readonly obj: KObject;
}

export class ParsedCache {
  private young = new Map<string, Parsed>();
  private old = new Map<string, Parsed>();

  /** The object kept for key: itself, or its bytes parsed (once while it stays among the recent ones). */
  objectOf(key: string, kept: Kept): KObject {
    if (!isBytes(kept)) return kept;
    const hit = this.young.get(key);
    if (hit !== undefined && hit.bytes === kept) return hit.obj;
    const older = this.old.get(key);
    if (older !== undefined && older.bytes === kept) {
      this.put(key, older);
      return older.obj;
    }
    const obj = objectOfJsonBytes<KObject>(kept);
    this.put(key, { bytes: kept, obj });
    return obj;
  }

  /** objectOf without remembering what it parses (a list's items: not to push out the hot keys). */
  peek(key: string, kept: Kept): KObject {
    if (!isBytes(kept)) return kept;
    const hit = this.young.get(key) ?? this.old.get(key);
    return hit !== undefined && hit.bytes === kept ? hit.obj : objectOfJsonBytes<KObject>(kept);
  }

  /** A write's object, with the bytes it keeps: the next reads answer it without a parse. */
  written(key: string, bytes: Buffer, obj: KObject): void {
    this.put(key, { bytes, obj });
  }

  private put(key: string, p: Parsed): void {
    if (this.young.size >= GENERATION && !this.young.has(key)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, p);
  }
}

/** A kept object, parsed when it is bytes (nothing remembered). */
export function objectOfKept(kept: Kept): KObject {
  return isBytes(kept) ? objectOfJsonBytes<KObject>(kept) : kept;
}
