// The request pipeline, written out in one function, in kube-apiserver's
// order: recovery → request info → timeout → authentication → audit →
// impersonation → in-flight limit → authorization → admission → dispatch.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { badRequest, timeout, tooManyRequests, toStatusError, forbiddenMessage, internalError, StatusError } from '../../lib/api/status.js';
import { DurationError, formatDuration, parseDuration } from '../config/duration.js';
import { sendError } from '../../lib/http/respond.js';
import { negotiateOutput, RESOURCE_AS, type Output } from '../../lib/http/negotiate.js';
import type { AuthnResult } from '../authn/types.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import { selectorAttributes } from '../authz/selectors.js';
import { admit, type AdmissionPlugin } from './admission.js';
import { openAudit, type AuditSink } from './audit.js';
import { newContext, isLongRunning, type PendingUpgrade, type RequestContext } from './context.js';
import { hasImpersonation, impersonate } from './impersonate.js';
import { stripIdentityHeaders, type IdentityHeaders } from './identityheaders.js';
import type { InflightLimiter } from './inflight.js';
import { goAwayAfter, maybeGoAway } from './goaway.js';
import { Deadline } from './deadline.js';

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
  flowControl?: { admit(ctx: RequestContext): Promise<() => void> };
  requestTimeoutMs: number;
  /** True once shutdown drains: requests arriving then get 429 (health endpoints excepted). */
  draining?: () => boolean;
  /** --goaway-chance: the share of HTTP/2 requests after which the connection is told to go away (0 = none). */
  goawayChance?: number;
  audit: AuditSink;
  /** The last step: the gateway's table (server/dispatch.ts), the sidecar's upstream, a backend process's API. */
  dispatch(ctx: RequestContext): Promise<void>;
  /** The CBORServingAndStorage gate: errors on resource paths may go out as CBOR. */
  cbor?: boolean;
  log(msg: string): void;
  clock(): number;
}

function attributesOf(ctx: RequestContext): Attributes {
  const i = ctx.info;
  // list/watch/deletecollection: parsed field and label selectors (and the name a metadata.name selector pins).
  const sel = i.isResourceRequest ? selectorAttributes(i.verb, ctx.query) : {};
  return {
    user: ctx.user, verb: i.verb, isResourceRequest: i.isResourceRequest, path: i.path, apiGroup: i.apiGroup,
    apiVersion: i.apiVersion, namespace: i.namespace, resource: i.resource, subresource: i.subresource, name: i.name || (sel.name ?? ''),
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
  try { return negotiateOutput(req.headers.accept, RESOURCE_AS, { protobuf: resource, cbor: resource && cbor }); } catch { return undefined; }
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
  return (req, res, upgrade) => {
    let release: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    let ctx: RequestContext | undefined;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      release?.();
      release = undefined;
      if (ctx?.audit) cfg.audit.write(ctx.audit, res.statusCode);
    };
    // Done once the answer is handed to the socket ('prefinish', inside end(): the seat is free
    // before the client can read the answer and send its next request, which 'finish', after
    // the write completes, does not guarantee); 'finish' and 'close' for the other paths.
    res.once('prefinish', finish);
    res.once('finish', finish);
    res.once('close', finish);

    const run = async () => {
      const deadline = new Deadline();
      ctx = newContext(req, res, cfg.clock(), upgrade, deadline);

      if (cfg.draining?.() && !HEALTH_PATH.test(ctx.info.path)) {
        // As kube-apiserver's WithRetryAfter: this process is going; the client should find another.
        if (req.httpVersionMajor === 1) res.setHeader('Connection', 'close');
        else goAwayAfter(req, res);
        throw tooManyRequests('The apiserver is shutting down, please try again later.', 5);
      }

      if (!isLongRunning(ctx)) {
        const ms = requestDeadlineMs(ctx.query, cfg.requestTimeoutMs);
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
      try {
        authn = await cfg.authenticator.authenticate(req);
      } catch (err) {
        goAwayAfter(req, res);
        throw err;
      }
      ctx.user = authn.user;
      if (authn.user.username === 'system:anonymous') goAwayAfter(req, res);
      else if (cfg.goawayChance) maybeGoAway(cfg.goawayChance, req, res);
      // Credentials never travel further than authentication.
      if (req.headers.authorization !== undefined) delete req.headers.authorization;
      stripIdentityHeaders(req, cfg.identityHeaders);

      ctx.audit = openAudit(ctx);
      res.setHeader('Audit-Id', ctx.audit.auditID);

      if (cfg.impersonation && hasImpersonation(req)) {
        ctx.user = await impersonate(req, ctx.user, cfg.authorizer);
        ctx.audit.impersonatedUser = ctx.user;
      }

      if (cfg.flowControl) {
        const seat = await cfg.flowControl.admit(ctx);
        // The client may have gone, and finish() run, while the request waited for its seat.
        if (finished) seat();
        else release = seat;
      } else if (!isLongRunning(ctx)) {
        release = cfg.inflight.acquire(ctx.info.verb);
      }

      const attrs = attributes(ctx);
      const decision = await cfg.authorizer.authorize(attrs);
      // An authorizer that failed, with no Allow to override it, is the server's fault: 500, as kube's WithAuthorization.
      if (decision.kind !== 'allow') throw decision.error ? internalError(decision.error) : forbidden(ctx, attrs, decision.reason);

      await admit(cfg.admission, ctx);
      await cfg.dispatch(ctx);
    };

    run().catch((err: unknown) => {
      const status = toStatusError(err);
      if (!(err instanceof StatusError)) cfg.log(`internal error serving ${req.method} ${req.url}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      sendError(req, res, status, errorOutput(req, status, ctx?.info.isResourceRequest === true, cfg.cbor === true));
    });
  };
}
