// The change log kept for the history window: rev-ordered events with the
// time they committed. Old events are dropped by time, never by count, so
// `compactedRev` moves only with the (injected) clock.
import type { StoreEvent } from './types.js';

export interface LoggedEvent {
  readonly event: StoreEvent;
  readonly type: string;
  readonly at: number;
}

export class History {
  private entries: LoggedEvent[] = [];
  private head = 0;
  /** Rev of the newest dropped event: history after it is complete. */
  compactedRev: number;

  constructor(
    private readonly windowMs: number,
    private readonly clock: () => number,
    startRev: number,
  ) {
    this.compactedRev = startRev;
  }

  append(entry: LoggedEvent): void {
    this.entries.push(entry);
  }

  /** Drops events older than the window. */
  compact(): void {
    const oldest = this.clock() - this.windowMs;
    const { entries } = this;
    let head = this.head;
    while (head < entries.length && entries[head]!.at < oldest) {
      this.compactedRev = entries[head]!.event.rev;
      head++;
    }
    // Reclaim the dropped slots in bulk so dropping stays O(1) amortised.
    if (head > 1024 && head * 2 > entries.length) {
      this.entries = entries.slice(head);
      head = 0;
    }
    this.head = head;
  }

  /** Index of the first retained event with rev > rev (callers checked rev >= compactedRev). */
  private firstAfter(rev: number): number {
    let lo = this.head;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.event.rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Retained events with rev > rev, in rev order, optionally of one type only. */
  since(rev: number, type?: string): LoggedEvent[] {
    const out: LoggedEvent[] = [];
    for (let i = this.firstAfter(rev); i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (type === undefined || e.type === type) out.push(e);
    }
    return out;
  }

  /** Whether any retained event of this type has rev > rev. */
  touchedSince(rev: number, type: string): boolean {
    for (let i = this.entries.length - 1; i >= this.head; i--) {
      const e = this.entries[i]!;
      if (e.event.rev <= rev) return false;
      if (e.type === type) return true;
    }
    return false;
  }
}
