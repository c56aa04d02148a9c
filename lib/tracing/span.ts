// Spans for code anywhere — the gateway, the backends, the outbound clients —
// without knowing whether tracing is on. Off (the default: no
// --tracing-config-file in this process), every helper returns after one
// boolean check: no span, no context, no header. On, a child span is made only
// under a request that is being recorded.
//
// Only recorded requests run in an OpenTelemetry context (AsyncLocalStorage),
// and the context manager is switched off whenever none is in flight: on Node
// 20 an enabled AsyncLocalStorage hooks every promise the process makes
// (about twice the cost of an await), which at 0.1% sampling would cost every
// unsampled request more than the sampled ones cost. The proxy, which has
// the request at hand, still forwards an unsampled request's trace: the
// client's trace id (or a new one) under a new span id, flags 00 — nothing of
// that request was recorded, so no other span id could be named.
// The SDK, the sampler and the exporter are gateway/tracing's: this file needs
// only @opentelemetry/api and the W3C propagator.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import { context, createContextKey, isSpanContextValid, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

export { SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';

let on = false;
/** Recorded requests in flight, and what to do when there are none (switch the context manager off). */
let recording = 0;
let idle: () => void = () => undefined;
const TRACER = createContextKey('gatehouse request tracer');
const propagator = new W3CTraceContextPropagator();

/** True once a server of this process traces (gateway/tracing enables it after registering its context manager). */
export function tracingEnabled(): boolean {
  return on;
}

/** `whenIdle` runs each time the last recorded request in flight ends. */
export function enableTracing(whenIdle: () => void): void {
  on = true;
  idle = whenIdle;
}

/** Runs a recorded request's chain in its context; its span's end must call recordedRequestEnded once. */
export function runRecordedRequest(ctx: Context, run: () => void): void {
  recording++;
  context.with(ctx, run);
}

export function recordedRequestEnded(): void {
  if (--recording === 0) idle();
}

/** Recorded requests whose span has not ended (tests: back to 0 once answers are out, so the context manager is off). */
export function recordedRequestsInFlight(): number {
  return recording;
}

/** Reads the trace headers of a request (HTTP/1.1 and HTTP/2 alike: Node lowercases header names). */
const getter = { keys: (h: IncomingHttpHeaders) => Object.keys(h), get: (h: IncomingHttpHeaders, key: string) => (Object.hasOwn(h, key) ? h[key] : undefined) };

/** The context a request's W3C traceparent/tracestate names (ROOT_CONTEXT without a valid one). */
export function incomingTrace(headers: IncomingHttpHeaders): Context {
  return propagator.extract(ROOT_CONTEXT, headers, getter);
}

/** The trace an unrecorded request passes on: its client's trace id (or a new one), a new span id, not sampled. */
function unrecordedContext(headers: IncomingHttpHeaders): Context {
  const parent = trace.getSpanContext(incomingTrace(headers));
  const traceId = parent && isSpanContextValid(parent) ? parent.traceId : randomBytes(16).toString('hex');
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId, spanId: randomBytes(8).toString('hex'), traceFlags: TraceFlags.NONE,
    ...(parent?.traceState ? { traceState: parent.traceState } : {}),
  });
}

/** A request's context: its server span, and the tracer its child spans are made with (servers of one process may differ). */
export function requestContext(parent: Context, span: Span, tracer: Tracer): Context {
  return trace.setSpan(parent, span).setValue(TRACER, tracer);
}

/** The active context when it belongs to a recorded request: children of it are worth making. */
function recordingContext(): { ctx: Context; tracer: Tracer } | undefined {
  // No recorded request in flight: no context to look up (the usual case at low sampling).
  if (recording === 0) return undefined;
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

/**
 * A child span of the current recorded request's span, started now; the caller
 * ends it (a call whose work leaves the process, e.g. one Redis command).
 * Undefined, after one check, when nothing is recorded.
 */
export function startChildSpan(name: string, attributes: Attributes, kind: SpanKind = SpanKind.CLIENT): Span | undefined {
  if (!on) return undefined;
  const parent = recordingContext();
  if (!parent) return undefined;
  return parent.tracer.startSpan(name, { kind, attributes }, parent.ctx);
}

/** Sets an attribute on the current span when it is recorded (which authenticator or authorizer decided). */
export function spanAttribute(key: string, value: string | number | boolean): void {
  if (!on || recording === 0) return;
  const span = trace.getSpan(context.active());
  if (span?.isRecording()) span.setAttribute(key, value);
}

const setter = { set(carrier: OutgoingHttpHeaders, key: string, value: string) { carrier[key] = value; } };

/**
 * One outbound HTTP call: for a recorded request a CLIENT span `HTTP <method>`
 * and the `traceparent` (and `tracestate`) naming it; for an unrecorded one,
 * given its IncomingMessage (`req`), the trace it passes on. `fn` gets
 * those headers (empty when off or unknown) and the span.
 */
export function outboundCall<T>(method: string, url: string, attributes: Attributes,
  fn: (traceHeaders: OutgoingHttpHeaders, span: Span | undefined) => Promise<T>, req?: { readonly headers: IncomingHttpHeaders }): Promise<T> {
  if (!on) return fn(NO_HEADERS, undefined);
  const parent = recordingContext();
  const headers: OutgoingHttpHeaders = {};
  if (!parent) {
    if (req) propagator.inject(unrecordedContext(req.headers), headers, setter);
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
