// The server span of each request, as kube-apiserver's WithTracing filter
// (otelhttp with kube's span names): the client's W3C traceparent is the
// parent (parent-based sampling: a sampled parent is honoured, an unsampled
// one too). A recorded request carries its span's trace (lib/tracing/span.ts
// `traceOf(req)`) and the span ends when the answer is done, with its status
// code; an unrecorded one carries nothing. The chain is handed the span of a
// recorded request, to name it once the request info is parsed.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { carryTrace, incomingTrace, requestTrace } from '../../lib/tracing/span.js';

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

  /** Runs `run` (the chain) in the request's server span (the request carrying its trace when recorded), given that span when it records. */
  serve(req: IncomingMessage, res: ServerResponse, run: (span: Span | undefined) => void): void {
    const parent = req.headers.traceparent === undefined ? ROOT_CONTEXT : incomingTrace(req.headers);
    // A root request the ratio does not pick makes no span at all: the SDK's startSpan made ids, a
    // context and a sampler decision for each one (~2% of a GET's CPU at 0.1% sampling, sampled profile).
    // The roll is TraceIdRatioBased's odds: a root's trace id is random, so is this.
    if (parent === ROOT_CONTEXT || trace.getSpanContext(parent) === undefined) {
      if (!(Math.random() < this.rootRatio)) {
        run(undefined);
        return;
      }
    }
    // Attributes only once the sampler said yes: an unrecorded request costs the span context alone.
    const span = this.tracer.startSpan('KubernetesAPI', { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) {
      run(undefined);
      return;
    }
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
    carryTrace(req, requestTrace(parent, span, this.tracer));
    run(span);
  }

  /** Names a request's server span once its request info is known (the chain parses it first thing). */
  named(span: Span, method: string, info: RequestInfo): void {
    span.updateName(serverSpanName(method, info));
  }
}
