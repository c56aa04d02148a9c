// The change log kept for the history window: rev-ordered events with the
// time they committed. Old events are dropped by time, never by count, so
// `compactedRev` moves only with the (injected) clock.
import type { EventType } from './types.js';
import type { Kept } from './kept.js';

/**
 * An event as the log keeps it: a StoreEvent, or one whose object and prev are the texts the state keeps
 * (the memory store's; a DELETED's object is then the text of the object it removed, restamped when read).
 */
export interface KeptEvent {
  readonly type: EventType;
  readonly key: string;
  readonly rev: number;
  readonly object: Kept;
  readonly prev?: Kept | undefined;
}

export class History {
  // One entry is a slot in each of three parallel arrays rather than a
  // {event, type, at} object: at 100,000 replayed events that wrapper, its
  // boxed commit time and a sliced type string per entry were ~90 B each
  // (docs/decisions/2026-11-29-memory-per-object.md).
  private events: KeptEvent[] = [];
  /** Each event's type prefix, one shared string per type (see typeName). */
  private types: string[] = [];
  /** Commit times, ms; numbers only, so V8 keeps them unboxed. */
  private ats: number[] = [];
  private head = 0;
  private readonly typeNames = new Map<string, string>();
  /** Rev of the newest dropped event: history after it is complete. */
  compactedRev: number;

  constructor(
    private readonly windowMs: number,
    private readonly clock: () => number,
    startRev: number,
  ) {
    this.compactedRev = startRev;
  }

  append(event: KeptEvent, type: string, at: number): void {
    this.events.push(event);
    this.types.push(this.typeName(type));
    this.ats.push(at);
  }

  /** Drops events older than the window. */
  compact(): void {
    const oldest = this.clock() - this.windowMs;
    const { events, ats } = this;
    let head = this.head;
    while (head < events.length && ats[head]! < oldest) {
      this.compactedRev = events[head]!.rev;
      head++;
    }
    // Reclaim the dropped slots in bulk so dropping stays O(1) amortised.
    if (head > 1024 && head * 2 > events.length) {
      this.events = events.slice(head);
      this.types = this.types.slice(head);
      this.ats = ats.slice(head);
      head = 0;
    }
    this.head = head;
  }

  /** Index of the first retained event with rev > rev (callers checked rev >= compactedRev). */
  private firstAfter(rev: number): number {
    let lo = this.head;
    let hi = this.events.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.events[mid]!.rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Retained events with rev > rev, in rev order, optionally of one type only. */
  since(rev: number, type?: string): KeptEvent[] {
    const out: KeptEvent[] = [];
    const { events, types } = this;
    for (let i = this.firstAfter(rev); i < events.length; i++) {
      if (type === undefined || types[i] === type) out.push(events[i]!);
    }
    return out;
  }

  /** Whether any retained event of this type has rev > rev. */
  touchedSince(rev: number, type: string): boolean {
    const { events, types } = this;
    for (let i = events.length - 1; i >= this.head; i--) {
      if (events[i]!.rev <= rev) return false;
      if (types[i] === type) return true;
    }
    return false;
  }

  /** One string per type: a key's type prefix is a fresh slice of the key each time. */
  private typeName(type: string): string {
    const known = this.typeNames.get(type);
    if (known !== undefined) return known;
    this.typeNames.set(type, type);
    return type;
  }
}
