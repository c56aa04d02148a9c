// Small helpers for store tests: a fake clock, an event collector, bounded waits.
import type { KObject } from '../../lib/api/meta.js';
import type { StoreError, StoreEvent, WatchSink } from '../../backends/core/store/types.js';

export function fakeClock(start = 1_700_000_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

export function pod(ns: string, name: string, extra: Record<string, unknown> = {}): KObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: ns, name }, spec: { n: 0 }, ...extra };
}

export function rv(obj: KObject | undefined): number {
  return Number(obj?.metadata.resourceVersion);
}

/** Polls cond until true; fails after ms (a bound, never a timing assertion). */
export async function waitUntil(cond: () => boolean, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export class Collector implements WatchSink {
  readonly events: StoreEvent[] = [];
  readonly errors: StoreError[] = [];
  event(ev: StoreEvent): void {
    this.events.push(ev);
  }
  error(err: StoreError): void {
    this.errors.push(err);
  }
  async waitFor(n: number): Promise<StoreEvent[]> {
    await waitUntil(() => this.events.length >= n || this.errors.length > 0, `${n} watch events (have ${this.events.length})`);
    if (this.events.length < n)
      throw new Error(`watch failed after ${this.events.length} of ${n} events: ${this.errors.map((e) => `${e.code}: ${e.message}`).join('; ')}`);
    return this.events;
  }
}
