// The request pipeline, written out in one function, in kube-apiserver's
// order: recovery → request info → timeout → authentication → audit →
// impersonation → in-flight limit → authorization → admission → dispatch.
// With tracing (gateway/tracing), the whole chain runs in the request's server
// span and authentication, authorization and admission get child spans; without
// it the handler is the plain one and each step costs one boolean check.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, timeout, tooManyRequests, toStatusError, forbiddenMessage, internalError, StatusError } from '../../lib/api/status.js';
import { DurationError, formatDuration, parseDuration } from '../config/duration.js';
import { forbidCompression, sendError } from '../../lib/http/respond.js';
import { negotiateOutput, RESOURCE_AS, type Output } from '../../lib/http/negotiate.js';
import type { AuthnResult } from '../authn/types.js';
import { issuerOf, methodOf } from '../authn/types.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import { selectorAttributes } from '../authz/selectors.js';
import { admit, type AdmissionPlugin } from './admission.js';
import { assignAuditId, type AuditRecorder } from './audit.js';
import { readBody } from '../../lib/http/body.js';
import { isMutatingVerb } from '../../lib/api/verbs.js';
import { inflight, labelsOf, longRunningStarted, observeAuthentication, observeRequest } from '../metrics/requests.js';
import { newContext, isLongRunning, type PendingUpgrade, type RequestContext } from './context.js';
import { hasImpersonation, impersonate } from './impersonate.js';
import { stripIdentityHeaders, type IdentityHeaders } from './identityheaders.js';
import type { InflightLimiter } from './inflight.js';
import { goAwayAfter, maybeGoAway } from './goaway.js';
import { carryTrace, inRequestSpan, inSpan, traceOf } from '../../lib/tracing/span.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { Deadline } from './deadline.js';
import { carryHeader, sentLength } from '../../lib/http/carried.js';

/** Who is asking: a user, or a thrown StatusError (401, …). The gateway's is authn/union.ts. */
export interface RequestAuthenticator {
  authenticate(req: IncomingMessage): Promise<AuthnResult>;
}

export interface ChainConfig {
  authenticator: RequestAuthenticator;
  /** Proxy identity headers, removed from every request right after authentication. */
  identityHeaders: IdentityHeaders;
  /** Whether Impersonate-* headers are acted on (checked with the `impersonate` verb); off, they reach dispatch untouched. */
  impersonation: boolean;
  authorizer: Authorizer;
  /** The authorization attributes of a request; default: from the parsed request info (kube-apiserver's). */
  attributes?(ctx: RequestContext): Attributes;
  /** The 403 of a denied request; default: kube-apiserver's Forbidden Status. */
  forbidden?(ctx: RequestContext, attrs: Attributes, reason: string): StatusError;
  admission: readonly AdmissionPlugin[];
  inflight: InflightLimiter;
  /** API Priority and Fairness (gateway/flowcontrol): when given, it replaces `inflight`. */
  flowControl?: { admit(ctx: RequestContext): (() => void) | Promise<() => void> };
  requestTimeoutMs: number;
  /** True once shutdown drains: requests arriving then get 429 (health endpoints excepted). */
  draining?: () => boolean;
  /** --goaway-chance: the share of HTTP/2 requests after which the connection is told to go away (0 = none). */
  goawayChance?: number;
  /** The audit recorder (gateway/audit, from --audit-policy-file); absent = nothing recorded (Audit-Id is still set). */
  audit?: AuditRecorder;
  /** The last step: the gateway's table (server/dispatch.ts), the sidecar's upstream, a backend process's API. */
  dispatch(ctx: RequestContext): Promise<void>;
  /** Request tracing (--tracing-config-file): the server span around the chain; absent = no tracing step at all. */
  tracing?: {
    serve(req: IncomingMessage, res: ServerResponse, run: () => void): void;
    named(req: IncomingMessage, info: RequestInfo): void;
  };
  /** The CBORServingAndStorage gate: errors on resource paths may go out as CBOR. */
  cbor?: boolean;
  /** The APIResponseCompression gate (default on): off, no answer of this server is gzipped. */
  compression?: boolean;
  log(msg: string): void;
  clock(): number;
}

/** The request's series of the request metrics (kube's labels). */
function metricLabels(ctx: RequestContext): ReturnType<typeof labelsOf> {
  return labelsOf({ info: ctx.info, method: ctx.req.method ?? 'GET', contentType: ctx.req.headers['content-type'], dryRun: ctx.query.has('dryRun') });
}

function attributesOf(ctx: RequestContext): Attributes {
  const i = ctx.info;
  // list/watch/deletecollection: parsed field and label selectors (and the name a metadata.name selector pins).
  const sel = i.isResourceRequest ? selectorAttributes(i.verb, ctx.query) : {};
  return {
    user: ctx.user,
    verb: i.verb,
    isResourceRequest: i.isResourceRequest,
    path: i.path,
    apiGroup: i.apiGroup,
    apiVersion: i.apiVersion,
    namespace: i.namespace,
    resource: i.resource,
    subresource: i.subresource,
    name: i.name || (sel.name ?? ''),
    ...(sel.fieldSelector ? { fieldSelector: sel.fieldSelector } : {}),
    ...(sel.labelSelector ? { labelSelector: sel.labelSelector } : {}),
  };
}

/** kube-apiserver's Forbidden Status, naming the object for resource requests. */
function forbiddenStatus(ctx: RequestContext, attrs: Attributes, reason: string): StatusError {
  const i = ctx.info;
  const why = reason ? `${denial(attrs)}: ${reason}` : denial(attrs);
  return forbiddenMessage(why, i.isResourceRequest ? { name: i.name, group: i.apiGroup, kind: i.resource } : {});
}

/**
 * Errors go out in the encoding the client accepts (YAML for YAML clients,
 * protobuf on resource paths, where Status has a protobuf form), JSON
 * otherwise; a 406 always in JSON, as kube-apiserver writes it when
 * negotiation itself failed.
 */
function errorOutput(req: IncomingMessage, status: StatusError, resource: boolean, cbor: boolean): Output | undefined {
  if (status.code === 406) return undefined;
  try {
    return negotiateOutput(req.headers.accept, RESOURCE_AS, { protobuf: resource, cbor: resource && cbor });
  } catch {
    return undefined;
  }
}

/** Health checks are answered while draining (kube exempts them from the shutdown 429). */
const HEALTH_PATH = /^\/(healthz|livez|readyz)(\/|$)/;

/**
 * The deadline of a request that is not long-running: --request-timeout, or
 * the `timeout` query parameter (a Go duration) when it is shorter; zero or
 * negative means none given, as in kube-apiserver's WithRequestDeadline.
 */
export function requestDeadlineMs(query: URLSearchParams, maxMs: number): number {
  const raw = query.get('timeout');
  if (raw === null || raw === '') return maxMs;
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (err) {
    if (err instanceof DurationError) throw badRequest(`invalid timeout specified in the request URL: ${err.message}`);
    throw err;
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}

/** Serves one request; `upgrade` is given for an upgrade request, whose `res` is bound to that socket. */
export type ChainHandler = (req: IncomingMessage, res: ServerResponse, upgrade?: PendingUpgrade) => void;

export function buildHandlerChain(cfg: ChainConfig): ChainHandler {
  const attributes = cfg.attributes ?? attributesOf;
  const forbidden = cfg.forbidden ?? forbiddenStatus;
  const tracing = cfg.tracing;
  const traced = tracing !== undefined;
  const handle: ChainHandler = (req, res, upgrade) => {
    let release: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    let ctx: RequestContext | undefined;
    let finished = false;
    const t0 = performance.now();
    let longRunningDone: (() => void) | undefined;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      release?.();
      release = undefined;
      longRunningDone?.();
      if (ctx) {
        // One clock read for the request's duration and its audit event's last stage.
        const now = performance.now();
        observeRequest(metricLabels(ctx), res.statusCode, (now - t0) / 1000, sentLength(res));
        ctx.audit?.complete(res.statusCode, now);
      }
    };
    // Done once the answer is handed to the socket ('prefinish', inside end(): the seat is free
    // before the client can read the answer and send its next request, which 'finish', after
    // the write completes, does not guarantee); 'finish' and 'close' for the other paths.
    res.once('prefinish', finish);
    res.once('finish', finish);
    res.once('close', finish);

    const run = async () => {
      if (cfg.compression === false) forbidCompression(req);
      const deadline = new Deadline();
      ctx = newContext(req, res, cfg.clock(), upgrade, deadline);
      if (traced) tracing.named(req, ctx.info);

      if (cfg.draining?.() && !HEALTH_PATH.test(ctx.info.path)) {
        // As kube-apiserver's WithRetryAfter: this process is going; the client should find another.
        if (req.httpVersionMajor === 1) res.setHeader('Connection', 'close');
        else goAwayAfter(req, res);
        throw tooManyRequests('The apiserver is shutting down, please try again later.', 5);
      }

      if (!isLongRunning(ctx)) {
        const ms = requestDeadlineMs(ctx.query, cfg.requestTimeoutMs);
        ctx.timeoutMs = ms;
        const c = ctx;
        timer = setTimeout(() => {
          // A request still queued by priority and fairness is answered 429 by its queue (on this abort).
          const queued = c.queued === true;
          deadline.abort();
          if (res.headersSent || queued) return;
          const waiting = c.waitingOn ? `: no answer from ${c.waitingOn} within ${formatDuration(ms)}` : '';
          const status = timeout(`Timeout: request did not complete within requested timeout - context deadline exceeded${waiting}`);
          sendError(req, res, status, errorOutput(req, status, c.info.isResourceRequest, cfg.cbor === true));
        }, ms);
      }

      let authn: AuthnResult;
      const a0 = performance.now();
      try {
        authn = traced ? await inRequestSpan(req, 'authentication', {}, () => cfg.authenticator.authenticate(req)) : await cfg.authenticator.authenticate(req);
        observeAuthentication('success', (performance.now() - a0) / 1000);
      } catch (err) {
        observeAuthentication(err instanceof StatusError && err.status.code === 401 ? 'failure' : 'error', (performance.now() - a0) / 1000);
        goAwayAfter(req, res);
        if (cfg.audit) {
          const id = assignAuditId(req);
          carryHeader(res, 'Audit-Id', id);
          cfg.audit.failedAuthentication(req, ctx.info, id, err instanceof Error ? err.message : String(err), t0);
        }
        throw err;
      }
      ctx.user = authn.user;
      if (authn.user.username === 'system:anonymous') goAwayAfter(req, res);
      else if (cfg.goawayChance) maybeGoAway(cfg.goawayChance, req, res);
      // Credentials never travel further than authentication.
      if (req.headers.authorization !== undefined) delete req.headers.authorization;
      stripIdentityHeaders(req, cfg.identityHeaders);

      const auditID = assignAuditId(req);
      carryHeader(res, 'Audit-Id', auditID);
      if (cfg.audit) {
        ctx.audit = cfg.audit.begin(req, res, ctx.info, ctx.user, auditID, isLongRunning(ctx), t0);
        const method = methodOf(authn);
        if (method) ctx.audit?.annotate('authentication.gatehouse.dev/authenticator', method);
        const issuer = issuerOf(authn);
        if (issuer) ctx.audit?.annotate('authentication.gatehouse.dev/issuer', issuer);
        const blocked = ctx.audit?.received();
        if (blocked) await blocked;
      }

      if (cfg.impersonation && hasImpersonation(req)) {
        ctx.user = await impersonate(req, ctx.user, cfg.authorizer);
        ctx.audit?.impersonated(ctx.user);
      }

      if (cfg.flowControl) {
        // A free seat (or an exempt level) comes back as the release itself: no promise turn on the hot path.
        const admitted = cfg.flowControl.admit(ctx);
        const seat = typeof admitted === 'function' ? admitted : await admitted;
        // The client may have gone, and finish() run, while the request waited for its seat.
        if (finished) seat();
        else release = seat;
        if (ctx.info.verb === 'watch')
          ctx.watchInitialized = () => {
            release?.();
            release = undefined;
          };
      } else if (!isLongRunning(ctx)) {
        release = cfg.inflight.acquire(ctx.info.verb);
      }
      if (isLongRunning(ctx)) {
        if (!finished) longRunningDone = longRunningStarted(metricLabels(ctx));
      } else if (release) {
        // Seats in use, by kind, for apiserver_current_inflight_requests.
        const mutating = isMutatingVerb(ctx.info.verb);
        if (mutating) inflight.mutating++;
        else inflight.readOnly++;
        const seat = release;
        release = () => {
          if (mutating) inflight.mutating--;
          else inflight.readOnly--;
          seat();
        };
      }

      const attrs = attributes(ctx);
      const decision = traced
        ? await inSpan(traceOf(req), 'authorization', { verb: attrs.verb }, async (span, t) => {
            // The authorizers read the trace from the attributes they are given (which one decided, a webhook's call).
            carryTrace(attrs, t);
            const d = await cfg.authorizer.authorize(attrs);
            span?.setAttribute('authorization.decision', d.kind === 'allow' ? 'allow' : 'forbid');
            if (d.reason) span?.setAttribute('authorization.reason', d.reason);
            return d;
          })
        : await cfg.authorizer.authorize(attrs);
      if (ctx.audit) {
        // kube's authorization annotations: the decision, and the rule or authorizer that made it.
        ctx.audit.annotate('authorization.k8s.io/decision', decision.kind === 'allow' ? 'allow' : 'forbid');
        if (decision.reason) ctx.audit.annotate('authorization.k8s.io/reason', decision.reason);
      }
      // An authorizer that failed, with no Allow to override it, is the server's fault: 500, as kube's WithAuthorization.
      if (decision.kind !== 'allow') throw decision.error ? internalError(decision.error) : forbidden(ctx, attrs, decision.reason);

      await admit(cfg.admission, ctx);
      if (ctx.audit?.wantsRequestBody && cfg.audit) {
        // Read once here; every destination takes ctx.body instead of reading the request again.
        ctx.body ??= await readBody(req, cfg.audit.maxBodyBytes());
        ctx.audit.requestBody(ctx.body, req.headers['content-type']);
      }
      await cfg.dispatch(ctx);
    };

    run().catch((err: unknown) => {
      const status = toStatusError(err);
      if (!(err instanceof StatusError)) ctx?.audit?.panic(err);
      if (!(err instanceof StatusError))
        cfg.log(`internal error serving ${req.method} ${req.url}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      sendError(req, res, status, errorOutput(req, status, ctx?.info.isResourceRequest === true, cfg.cbor === true));
    });
  };
  return traced ? (req, res, upgrade) => tracing.serve(req, res, () => handle(req, res, upgrade)) : handle;
}
