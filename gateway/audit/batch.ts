// Batch mode (--audit-*-mode=batch): events wait in a bounded buffer and go to
// the backend in batches of at most maxSize, when a batch is full or maxWait
// after its first event, one batch at a time. A full buffer drops the events
// (counted, never blocking the request), as kube's buffered backend does.
// With a throttle (--audit-*-batch-throttle-enable, -qps, -burst) a batch
// waits for a token before it goes; not when shutting down, which sends
// everything left at once.
import type { AuditBackend } from './backend.js';
import type { AuditEvent } from './event.js';
import { TokenBucket } from './throttle.js';

export interface BatchOptions {
  bufferSize: number;
  maxSize: number;
  maxWaitMs: number;
  /** Batches per second and burst; none: unthrottled. */
  throttle?: { qps: number; burst: number } | undefined;
  /** Events that could not be kept: dropped from a full buffer, or a batch the backend refused. */
  onError(events: readonly AuditEvent[], why: string): void;
}

export class BatchBackend implements AuditBackend {
  readonly plugin: string;
  private queue: AuditEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private readonly bucket: TokenBucket | undefined;
  private throttled: NodeJS.Timeout | undefined;
  private stopping = false;

  constructor(
    private readonly inner: AuditBackend,
    private readonly opts: BatchOptions,
  ) {
    this.plugin = inner.plugin;
    this.bucket = opts.throttle && new TokenBucket(opts.throttle.qps, opts.throttle.burst);
  }

  process(events: readonly AuditEvent[]): Promise<void> {
    if (this.queue.length + events.length > this.opts.bufferSize) {
      this.opts.onError(events, 'audit buffer queue blocked');
      return Promise.resolve();
    }
    this.queue.push(...events);
    if (this.queue.length >= this.opts.maxSize) this.kick();
    else
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.kick();
      }, this.opts.maxWaitMs).unref();
    return Promise.resolve();
  }

  private kick(): void {
    if (this.sending || this.throttled || this.queue.length === 0) return;
    if (this.bucket && !this.stopping) {
      const waitMs = this.bucket.take();
      if (waitMs > 0) {
        this.throttled = setTimeout(() => {
          this.throttled = undefined;
          this.kick();
        }, waitMs).unref();
        return;
      }
    }
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    const batch = this.queue.splice(0, this.opts.maxSize);
    // A batch holds many requests' events: its POST joins none of their traces (none is passed).
    this.sending = this.inner
      .process(batch)
      .catch((err: unknown) => this.opts.onError(batch, err instanceof Error ? err.message : String(err)))
      .finally(() => {
        this.sending = undefined;
        if (this.queue.length >= this.opts.maxSize) this.kick();
        else if (this.queue.length > 0)
          this.timer ??= setTimeout(() => {
            this.timer = undefined;
            this.kick();
          }, this.opts.maxWaitMs).unref();
      });
  }

  async shutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.throttled) {
      clearTimeout(this.throttled);
      this.throttled = undefined;
    }
    while (this.sending || this.queue.length > 0) {
      this.kick();
      await this.sending;
    }
    await this.inner.shutdown();
  }
}
