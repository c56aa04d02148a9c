// Where audit events go. A backend takes events and says when they are kept;
// the modes (--audit-*-mode) wrap it: blocking (in the request's path),
// blocking-strict (a RequestReceived event that cannot be kept fails the
// request), batch (buffered, sent in the background; a full buffer drops).
import type { AuditEvent } from './event.js';
import type { Trace } from '../../lib/tracing/span.js';

export const MODES = ['batch', 'blocking', 'blocking-strict'] as const;
export type Mode = (typeof MODES)[number];

export interface AuditBackend {
  /** `log` or `webhook`: the plugin label of apiserver_audit_error_total. */
  readonly plugin: string;
  /**
   * Resolves when the events are kept, rejects when they cannot be. `awaited`:
   * the request waits for it (a blocking mode's RequestReceived); a backend
   * that holds events back to send them together sends these without delay.
   * `trace`: the recorded request that waits (a call made for it joins its trace).
   */
  process(events: readonly AuditEvent[], awaited?: boolean, trace?: Trace): Promise<void>;
  /** Sends what is buffered, then stops. */
  shutdown(): Promise<void>;
}

/** Logs a backend's failures at most once per interval, with how many were not logged. */
export class ThrottledLog {
  private last = -Infinity;
  private quiet = 0;
  constructor(
    private readonly log: (msg: string) => void,
    private readonly intervalMs = 10_000,
    private readonly clock: () => number = Date.now,
  ) {}

  error(msg: string): void {
    const now = this.clock();
    if (now - this.last < this.intervalMs) {
      this.quiet++;
      return;
    }
    this.last = now;
    this.log(this.quiet > 0 ? `${msg} (and ${this.quiet} more audit errors since the last message)` : msg);
    this.quiet = 0;
  }
}
