// Spans for code anywhere — the gateway, the backends, the outbound clients —
// without knowing whether tracing is on. Off (the default: no
// --tracing-config-file in this process), every helper returns after one
// check: no span, no context, no header. On, a child span is made only under
// a request that is being recorded.
//
// The trace is passed by hand, as Go's context.Context is in kube-apiserver:
// a recorded request's `Trace` (the span its children hang under, and its
// server's tracer) is a typed member of its context (the gateway's
// RequestContext, the BackendRequest a backend gets) and handed down as an
// argument (authenticators, authorizers, store calls, webhooks, proxying). No
// AsyncLocalStorage: on Node 20 and 22 an AsyncLocalStorage, once entered,
// makes every await of the process slower for the rest of its life (promise
// hooks; gateway/tracing/README.md), so at 0.1% sampling the recorded requests
// taxed all the others. An unrecorded request carries nothing; the proxy,
// which has the request at hand, still forwards its trace: the client's trace
// id (or a new one) under a new span id, flags 00 — nothing of that request
// was recorded, so no other span id could be named.
// The SDK, the sampler and the exporter are gateway/tracing's: this file needs
// only @opentelemetry/api and the W3C propagator.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import {
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import { createRequire } from 'node:module';

export { SpanKind, SpanStatusCode, type Attributes, type Span } from '@opentelemetry/api';

/** Where a recorded request's next spans hang: a context holding its current span, and its server's tracer. */
export interface Trace {
  readonly ctx: Context;
  readonly tracer: Tracer;
}

let on = false;
// @opentelemetry/core required on first use, not imported: its ~100 ms of module loading (CPU, loaded
// machine; bench/startup.ts) is paid by the first traced or proxied request, not by every start.
let w3c: W3CTraceContextPropagator | undefined;
function propagator(): W3CTraceContextPropagator {
  if (w3c) return w3c;
  const core = createRequire(import.meta.url)('@opentelemetry/core') as typeof import('@opentelemetry/core');
  w3c = new core.W3CTraceContextPropagator();
  return w3c;
}

/** True once a server of this process traces (gateway/tracing enables it when it starts a tracer provider). */
export function tracingEnabled(): boolean {
  return on;
}

export function enableTracing(): void {
  on = true;
}

/** The trace of a recorded request's server span (its children are made with `tracer`). */
export function requestTrace(parent: Context, span: Span, tracer: Tracer): Trace {
  return { ctx: trace.setSpan(parent, span), tracer };
}

/**
 * A request that sent a trace context, waiting for its caller to be known:
 * the context it sent and when it arrived, and the span name once the
 * request info is parsed (gateway/tracing starts the span after authentication).
 */
export interface PendingTrace {
  readonly pending: true;
  readonly parent: Context;
  readonly startTime: number;
  name: string | undefined;
}

/** Reads the trace headers of a request (HTTP/1.1 and HTTP/2 alike: Node lowercases header names). */
const getter = { keys: (h: IncomingHttpHeaders) => Object.keys(h), get: (h: IncomingHttpHeaders, key: string) => (Object.hasOwn(h, key) ? h[key] : undefined) };

/** The context a request's W3C traceparent/tracestate names (ROOT_CONTEXT without a valid one). */
export function incomingTrace(headers: IncomingHttpHeaders): Context {
  return propagator().extract(ROOT_CONTEXT, headers, getter);
}

/** The trace an unrecorded request passes on: its client's trace id (or a new one), a new span id, not sampled. */
function unrecordedContext(headers: IncomingHttpHeaders): Context {
  const parent = trace.getSpanContext(incomingTrace(headers));
  const traceId = parent && isSpanContextValid(parent) ? parent.traceId : randomBytes(16).toString('hex');
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId,
    spanId: randomBytes(8).toString('hex'),
    traceFlags: TraceFlags.NONE,
    ...(parent?.traceState ? { traceState: parent.traceState } : {}),
  });
}

function child(parent: Trace, span: Span): Trace {
  return { ctx: trace.setSpan(parent.ctx, span), tracer: parent.tracer };
}

/** `fn`'s promise, also when it throws before making one (the span must end either way). */
function started<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return fn();
  } catch (err) {
    return Promise.reject(err);
  }
}

function ended<T>(span: Span, p: Promise<T>): Promise<T> {
  return p.then(
    (v) => {
      span.end();
      return v;
    },
    (err: unknown) => {
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      span.end();
      throw err;
    },
  );
}

/**
 * Runs `fn` in a child span of `parent` (its errors mark the span failed);
 * `fn` gets the span to add attributes to and the trace to hand further down,
 * both undefined when `parent` is (nothing recorded).
 */
export function inSpan<T>(
  parent: Trace | undefined,
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined, trace: Trace | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!parent) return fn(undefined, undefined);
  const span = parent.tracer.startSpan(name, { kind, attributes }, parent.ctx);
  const t = child(parent, span);
  return ended(
    span,
    started(() => fn(span, t)),
  );
}

/** A child span of `parent`, started now; the caller ends it. Undefined when nothing is recorded. */
function startChildSpan(parent: Trace | undefined, name: string, attributes: Attributes, kind: SpanKind = SpanKind.CLIENT): Span | undefined {
  return parent?.tracer.startSpan(name, { kind, attributes }, parent.ctx);
}

/** Sets an attribute on the span of `t` when there is one (which authenticator or authorizer decided). */
export function spanAttribute(t: Trace | undefined, key: string, value: string | number | boolean): void {
  if (t) trace.getSpan(t.ctx)?.setAttribute(key, value);
}

// A store call's Redis commands are made by a client shared by every request: the store span
// that issued one is named to it for the synchronous part of the store's method (see withCommandParent).
let commandParent: Trace | undefined;

/**
 * Runs `fn` with `t` as the parent of the command spans started synchronously
 * inside it (`commandSpan`): the commands a store method sends before its
 * first await. JavaScript runs one synchronous stretch at a time, so no other
 * request's command can fall in between.
 */
export function withCommandParent<T>(t: Trace | undefined, fn: () => T): T {
  if (!t) return fn();
  const outer = commandParent;
  commandParent = t;
  try {
    return fn();
  } finally {
    commandParent = outer;
  }
}

/** A CLIENT span for one command under the store call that is sending it; undefined outside one. */
export function commandSpan(name: string, attributes: Attributes): Span | undefined {
  return startChildSpan(commandParent, name, attributes);
}

const setter = {
  set(carrier: OutgoingHttpHeaders, key: string, value: string) {
    carrier[key] = value;
  },
};

/**
 * One outbound HTTP call: under a recorded request's trace a CLIENT span
 * `HTTP <method>` and the `traceparent` (and `tracestate`) naming it; for an
 * unrecorded one, given its IncomingMessage (`req`), the trace it passes on.
 * `fn` gets those headers (empty when off or unknown) and the span.
 */
export function outboundCall<T>(
  parent: Trace | undefined,
  method: string,
  url: string,
  attributes: Attributes,
  fn: (traceHeaders: OutgoingHttpHeaders, span: Span | undefined) => Promise<T>,
  req?: { readonly headers: IncomingHttpHeaders },
): Promise<T> {
  if (!on) return fn(NO_HEADERS, undefined);
  const headers: OutgoingHttpHeaders = {};
  if (!parent) {
    if (req) propagator().inject(unrecordedContext(req.headers), headers, setter);
    return fn(headers, undefined);
  }
  const span = parent.tracer.startSpan(
    `HTTP ${method}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'http.request.method': method, 'url.full': url, ...attributes },
    },
    parent.ctx,
  );
  propagator().inject(trace.setSpan(parent.ctx, span), headers, setter);
  return ended(
    span,
    started(() => fn(headers, span)),
  );
}

const NO_HEADERS: OutgoingHttpHeaders = Object.freeze({}) as OutgoingHttpHeaders;

/** The response status of a client span, with OpenTelemetry's rule: 4xx and 5xx mark a client call failed. */
export function clientStatus(span: Span | undefined, status: number): void {
  if (!span) return;
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
}
