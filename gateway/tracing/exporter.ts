// The OTLP/HTTP exporter, with its failures logged once per interval: an
// unreachable collector must neither stall requests (the batch processor
// drops what it cannot send) nor write a log line per request.
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

const LOG_INTERVAL_MS = 60_000;

export class LoggedExporter implements SpanExporter {
  private lastLogged = -Infinity;
  private silenced = 0;

  constructor(
    private readonly inner: SpanExporter,
    private readonly url: string,
    private readonly log: (msg: string) => void,
    private readonly clock: () => number,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failed(spans.length, result.error);
      done(result);
    });
  }

  private failed(count: number, error: Error | undefined): void {
    const now = this.clock();
    if (now - this.lastLogged < LOG_INTERVAL_MS) {
      this.silenced += count;
      return;
    }
    const earlier = this.silenced > 0 ? ` (${this.silenced} more spans lost since the last message)` : '';
    this.log(
      `tracing: cannot export ${count} spans to ${this.url}: ${error?.message ?? 'unknown error'}${earlier}; next report in ${LOG_INTERVAL_MS / 1000} s at the earliest`,
    );
    this.lastLogged = now;
    this.silenced = 0;
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
