// The ordered key index of one type's objects (lists page through it in key
// order). Keys are kept in sorted chunks of at most CHUNK_MAX, so a create or
// delete at any position moves at most one chunk's entries. One flat sorted
// array moves everything after the position, and its cost jumps as it grows:
// bench/micro.ts, a random insert and its removal, 0.4–2.4 µs here at 10k,
// 50k and 150k keys; a flat array 1.1–1.7 µs at 10k, 4–127 µs at 50k,
// 13–417 µs at 150k. kube's watch cache keeps a B-tree for the same reason.
import { lowerBound, upperBound } from './keys.js';

const CHUNK_MAX = 512;
/** A chunk this small after a removal is merged into its neighbour when both fit in one. */
const CHUNK_MERGE = CHUNK_MAX / 4;

export class SortedKeys implements Iterable<string> {
  /** Non-empty sorted chunks; each chunk's keys are below the next chunk's. */
  private chunks: string[][];
  private count: number;

  /** From keys already sorted (as Array.prototype.sort() orders them) and distinct. */
  constructor(sorted: readonly string[] = []) {
    this.chunks = [];
    for (let i = 0; i < sorted.length; i += CHUNK_MAX / 2) this.chunks.push(sorted.slice(i, i + CHUNK_MAX / 2));
    this.count = sorted.length;
  }

  get size(): number {
    return this.count;
  }

  /** A copy that changes independently. */
  clone(): SortedKeys {
    const c = new SortedKeys();
    c.chunks = this.chunks.map((ch) => ch.slice());
    c.count = this.count;
    return c;
  }

  /** Adds k; false when it is there already. */
  insert(k: string): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([k]);
      this.count = 1;
      return true;
    }
    const ci = this.chunkFor(k);
    const chunk = this.chunks[ci]!;
    const i = lowerBound(chunk, k);
    if (chunk[i] === k) return false;
    chunk.splice(i, 0, k);
    this.count++;
    if (chunk.length > CHUNK_MAX) this.chunks.splice(ci + 1, 0, chunk.splice(CHUNK_MAX / 2));
    return true;
  }

  /** Removes k; false when it is not there. */
  remove(k: string): boolean {
    if (this.chunks.length === 0) return false;
    const ci = this.chunkFor(k);
    const chunk = this.chunks[ci]!;
    const i = lowerBound(chunk, k);
    if (chunk[i] !== k) return false;
    chunk.splice(i, 1);
    this.count--;
    if (chunk.length === 0) {
      this.chunks.splice(ci, 1);
    } else if (chunk.length < CHUNK_MERGE) {
      const next = this.chunks[ci + 1];
      if (next && chunk.length + next.length <= CHUNK_MAX) {
        chunk.push(...next);
        this.chunks.splice(ci + 1, 1);
      }
    }
    return true;
  }

  /** How many keys are below k (the position of the first key ≥ k). */
  lowerBound(k: string): number {
    return this.rank(k, lowerBound);
  }

  /** How many keys are ≤ k (the position of the first key > k). */
  upperBound(k: string): number {
    return this.rank(k, upperBound);
  }

  /** The keys from position `at` on, in order. */
  *from(at: number): IterableIterator<string> {
    const c = this.cursor(at);
    for (let k = c.next(); k !== undefined; k = c.next()) yield k;
  }

  /**
   * The keys from position `at` on, one per `next()` (undefined past the last):
   * listView of a 500-key page took 8–11 µs through it, 18–20 µs through the generator
   * (each yield suspends and resumes a generator). Valid while the keys do not change.
   */
  cursor(at: number): KeyCursor {
    let ci = 0;
    while (ci < this.chunks.length && at >= this.chunks[ci]!.length) at -= this.chunks[ci++]!.length;
    return new KeyCursor(this.chunks, ci, at);
  }

  [Symbol.iterator](): IterableIterator<string> {
    return this.from(0);
  }

  /** The chunk k belongs in: the first whose last key is ≥ k, else the last chunk. */
  private chunkFor(k: string): number {
    let lo = 0;
    let hi = this.chunks.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const chunk = this.chunks[mid]!;
      if (chunk[chunk.length - 1]! < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private rank(k: string, bound: (keys: readonly string[], k: string) => number): number {
    // Chunks before the one searched hold only smaller keys, for both bounds: a chunk
    // whose last key equals k is the one chunkFor picks.
    if (this.chunks.length === 0) return 0;
    const ci = this.chunkFor(k);
    let n = 0;
    for (let i = 0; i < ci; i++) n += this.chunks[i]!.length;
    return n + bound(this.chunks[ci]!, k);
  }
}

export class KeyCursor {
  constructor(
    private readonly chunks: readonly string[][],
    private ci: number,
    private i: number,
  ) {}

  next(): string | undefined {
    while (this.ci < this.chunks.length) {
      const chunk = this.chunks[this.ci]!;
      if (this.i < chunk.length) return chunk[this.i++];
      this.ci++;
      this.i = 0;
    }
    return undefined;
  }
}
