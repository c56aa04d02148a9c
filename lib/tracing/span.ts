// Spans for code anywhere — the gateway, the backends, the outbound clients —
// without knowing whether tracing is on. Off (the default: no
// --tracing-config-file in this process), every helper returns after one
// boolean check: no span, no context, no header. On, a child span is made only
// under a request that is being recorded; an unsampled request still carries
// its trace context to every outbound call (W3C traceparent with flags 00), as
// kube-apiserver's propagation does. The SDK, the sampler and the exporter are
// gateway/tracing's: this file needs only @opentelemetry/api and the W3C
// propagator.
import type { OutgoingHttpHeaders } from 'node:http';
import { context, createContextKey, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

export { SpanKind, type Span } from '@opentelemetry/api';

let on = false;
const TRACER = createContextKey('gatehouse request tracer');
const propagator = new W3CTraceContextPropagator();

/** True once a server of this process traces (gateway/tracing enables it after registering its context manager). */
export function tracingEnabled(): boolean {
  return on;
}

export function enableTracing(): void {
  on = true;
}

/** A request's context: its server span, and the tracer its child spans are made with (servers of one process may differ). */
export function requestContext(parent: Context, span: Span, tracer: Tracer): Context {
  return trace.setSpan(parent, span).setValue(TRACER, tracer);
}

/** The active context when it belongs to a recorded request: children of it are worth making. */
function recordingContext(): { ctx: Context; tracer: Tracer } | undefined {
  const ctx = context.active();
  if (trace.getSpan(ctx)?.isRecording() !== true) return undefined;
  const tracer = ctx.getValue(TRACER) as Tracer | undefined;
  return tracer ? { ctx, tracer } : undefined;
}

function ended<T>(span: Span, p: Promise<T>): Promise<T> {
  return p.then((v) => {
    span.end();
    return v;
  }, (err: unknown) => {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    span.end();
    throw err;
  });
}

/**
 * Runs `fn` in a child span of the current request's span (its errors mark the
 * span failed); `fn` gets the span to add attributes to, or undefined when
 * nothing is recorded.
 */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>, kind: SpanKind = SpanKind.INTERNAL): Promise<T> {
  if (!on) return fn(undefined);
  const parent = recordingContext();
  if (!parent) return fn(undefined);
  const span = parent.tracer.startSpan(name, { kind, attributes }, parent.ctx);
  return ended(span, context.with(trace.setSpan(parent.ctx, span), fn, undefined, span));
}

/** Sets an attribute on the current span when it is recorded (which authenticator or authorizer decided). */
export function spanAttribute(key: string, value: string | number | boolean): void {
  if (!on) return;
  const span = trace.getSpan(context.active());
  if (span?.isRecording()) span.setAttribute(key, value);
}

const setter = { set(carrier: OutgoingHttpHeaders, key: string, value: string) { carrier[key] = value; } };

/**
 * One outbound HTTP call: a CLIENT span `HTTP <method>` when the request is
 * recorded, and in every case while tracing is on the `traceparent` (and
 * `tracestate`) to send, naming that span — or the request's own span when it
 * is not recorded. `fn` gets those headers (empty when off) and the span.
 */
export function outboundCall<T>(method: string, url: string, attributes: Attributes,
  fn: (traceHeaders: OutgoingHttpHeaders, span: Span | undefined) => Promise<T>): Promise<T> {
  if (!on) return fn(NO_HEADERS, undefined);
  const parent = recordingContext();
  const headers: OutgoingHttpHeaders = {};
  if (!parent) {
    propagator.inject(context.active(), headers, setter);
    return fn(headers, undefined);
  }
  const span = parent.tracer.startSpan(`HTTP ${method}`, {
    kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, 'url.full': url, ...attributes },
  }, parent.ctx);
  const ctx = trace.setSpan(parent.ctx, span);
  propagator.inject(ctx, headers, setter);
  return ended(span, context.with(ctx, fn, undefined, headers, span));
}

const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({}) as OutgoingHttpHeaders;

/** Runs `fn` outside any request (background work started from one, e.g. an audit batch): its calls join no request's trace. */
export function detached<T>(fn: () => T): T {
  if (!on) return fn();
  return context.with(ROOT_CONTEXT, fn);
}

/** The response status of a client span, with OpenTelemetry's rule: 4xx and 5xx mark a client call failed. */
export function clientStatus(span: Span | undefined, status: number): void {
  if (!span) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
}
