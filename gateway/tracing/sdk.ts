// The OpenTelemetry SDK part of tracing, imported by buildTracing (index.ts)
// only when --tracing-config-file is given: the tracer provider with kube's
// sampling (ParentBased; the ratio is rolled by RequestTracing before any span
// is made), batching spans to the OTLP/HTTP (JSON) exporter. No context
// manager: a request's trace is passed by hand (lib/tracing/span.ts).
import { hostname } from 'node:os';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler } from '@opentelemetry/sdk-trace-base';
import { enableTracing } from '../../lib/tracing/span.js';
import { LoggedExporter } from './exporter.js';
import type { TracingHooks } from './index.js';

/** A started tracer provider exporting to `url`; the process's span helpers are switched on with the first. */
export function startProvider(url: string, hooks: TracingHooks): BasicTracerProvider {
  const exporter = new LoggedExporter(
    new OTLPTraceExporter({ url, ...(hooks.exportTimeoutMs !== undefined ? { timeoutMillis: hooks.exportTimeoutMs } : {}) }),
    url,
    hooks.log,
    hooks.clock,
  );
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': hooks.serviceName ?? 'apiserver', 'service.instance.id': hostname() }),
    // kube's ParentBased(TraceIdRatioBased(rate)): the ratio is rolled by RequestTracing before any span is made.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [new BatchSpanProcessor(exporter, hooks.batchDelayMs !== undefined ? { scheduledDelayMillis: hooks.batchDelayMs } : {})],
  });
  enableTracing();
  return provider;
}
