// The server span of each request, as kube-apiserver's WithTracing filter
// (otelhttp with kube's span names). Since kube 1.32 a client's W3C
// traceparent is the parent only when the authenticated caller is privileged
// (`honoursIncomingTrace`: parent-based sampling then, a sampled parent
// honoured, an unsampled one too); anyone else's request is a new root under
// the sampling rate, linked to the context it sent, as otelhttp's public
// endpoint makes it. So the decision waits for authentication: a request
// carrying a valid traceparent has no span until `authenticated` (kube's
// filter runs after authentication too), one without starts its root at once.
// A recorded request's context carries its span's trace (`ctx.trace`, and a
// request waiting for authentication its `ctx.pendingTrace`) and the span
// ends when the answer is done, with its status code; an unrecorded one
// carries nothing.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Link, type Tracer } from '@opentelemetry/api';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { methodOf, type AuthnResult } from '../authn/types.js';
import { incomingTrace, requestTrace, type PendingTrace, type Trace } from '../../lib/tracing/span.js';

/** kube's span name: the method, and for resource requests the path with namespace and name as placeholders. */
export function serverSpanName(method: string, info: RequestInfo): string {
  if (!info.isResourceRequest) return method;
  let name = `/${info.apiPrefix}`;
  if (info.apiGroup !== '') name += `/${info.apiGroup}`;
  name += `/${info.apiVersion}`;
  if (info.namespace !== '') name += '/namespaces/{:namespace}';
  name += `/${info.resource}`;
  if (info.name !== '') name += '/{:name}';
  if (info.subresource !== '') name += `/${info.subresource}`;
  return `${method} ${name}`;
}

/** kube's notSystemPrivilegedGroup: the groups whose members' trace context is trusted. */
const TRUSTED_GROUPS: ReadonlySet<string> = new Set(['system:masters', 'system:monitoring']);

/**
 * Whether a caller's incoming trace context is honoured (kube-apiserver 1.32+): only privileged
 * callers'. A front proxy's request (request-header authentication, vouched for by its verified
 * client certificate) is the gateway's own call to a backend, whose trace must go on there.
 */
export function honoursIncomingTrace(authn: AuthnResult): boolean {
  return methodOf(authn) === 'requestheader' || authn.user.groups.some((g) => TRUSTED_GROUPS.has(g));
}

/** What a request's context keeps of its tracing (gateway/pipeline's RequestContext). */
export interface TracedRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  trace: Trace | undefined;
  pendingTrace: PendingTrace | undefined;
}

export class RequestTracing {
  /**
   * `rootRatio`: kube's samplingRatePerMillion / 10^6, rolled here for a
   * request without a valid parent; the tracer's sampler must then sample
   * every root it is asked about (ParentBased(AlwaysOn)), and honour parents.
   */
  constructor(
    private readonly tracer: Tracer,
    private readonly rootRatio: number,
  ) {}

  /**
   * The request's server span, started before the chain runs: its trace when recorded, a
   * PendingTrace when it sent a trace context (decided once authenticated), else undefined.
   */
  begin(req: IncomingMessage, res: ServerResponse): Trace | PendingTrace | undefined {
    const parent = req.headers.traceparent === undefined ? ROOT_CONTEXT : incomingTrace(req.headers);
    if (parent !== ROOT_CONTEXT && trace.getSpanContext(parent) !== undefined) {
      // Who sent it decides what the context is worth: nothing is made before authentication says.
      return { pending: true, parent, startTime: Date.now(), name: undefined };
    }
    // A root request the ratio does not pick makes no span at all: the SDK's startSpan made ids, a
    // context and a sampler decision for each one (~2% of a GET's CPU at 0.1% sampling, sampled profile).
    // The roll is TraceIdRatioBased's odds: a root's trace id is random, so is this.
    if (!(Math.random() < this.rootRatio)) return undefined;
    return this.#start(req, res, ROOT_CONTEXT, {});
  }

  /**
   * The caller of a request that sent a trace context is known (failed authentications never get
   * here, as kube's filter never sees them): a privileged caller's context is the parent; anyone
   * else's request is a root under the rate, linked to what it sent, and the headers are dropped so
   * that no outbound call carries the client's trace id either.
   */
  authenticated(r: TracedRequest, authn: AuthnResult): void {
    const p = r.pendingTrace;
    if (p === undefined) return;
    r.pendingTrace = undefined;
    const req = r.req;
    if (honoursIncomingTrace(authn)) {
      r.trace = this.#start(req, r.res, p.parent, { startTime: p.startTime }, p.name);
      return;
    }
    delete req.headers.traceparent;
    delete req.headers.tracestate;
    if (!(Math.random() < this.rootRatio)) return;
    const links: Link[] = [{ context: trace.getSpanContext(p.parent)! }];
    r.trace = this.#start(req, r.res, ROOT_CONTEXT, { startTime: p.startTime, links }, p.name);
  }

  #start(
    req: IncomingMessage,
    res: ServerResponse,
    parent: Context,
    options: { startTime?: number; links?: Link[] },
    name = 'KubernetesAPI',
  ): Trace | undefined {
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, ...options }, parent);
    // Attributes only once the sampler said yes: an unrecorded request costs the span context alone.
    if (!span.isRecording()) return undefined;
    span.setAttributes({
      'http.request.method': req.method ?? 'GET',
      'url.path': (req.url ?? '/').split('?', 1)[0]!,
      'url.scheme': 'https',
      'network.protocol.version': req.httpVersion,
      'user_agent.original': req.headers['user-agent'] ?? '',
      ...(req.socket?.remoteAddress ? { 'client.address': req.socket.remoteAddress } : {}),
    });
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      span.setAttribute('http.response.status_code', res.statusCode);
      // As otelhttp on a server: only 5xx is the server's failure.
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    // 'prefinish': the answer is handed to the socket (as the chain counts a request done); 'close' for the cut ones.
    res.once('prefinish', end);
    res.once('finish', end);
    res.once('close', end);
    return requestTrace(parent, span, this.tracer);
  }

  /** Names the span once the request info is known (the chain parses it first thing). */
  named(r: TracedRequest, info: RequestInfo): void {
    const name = serverSpanName(r.req.method ?? 'GET', info);
    const p = r.pendingTrace;
    if (p !== undefined) p.name = name;
    else if (r.trace !== undefined) trace.getSpan(r.trace.ctx)?.updateName(name);
  }
}
