// What a handler chain is built from: the server's authenticator, authorizer,
// limits and last step; each step reads its part.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StatusError } from '../../lib/api/status.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import type { PendingTrace, Trace } from '../../lib/tracing/span.js';
import type { AuthnResult } from '../authn/types.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import type { AuditRecorder } from './audit.js';
import type { RequestContext } from './context.js';
import type { IdentityHeaders } from './identityheaders.js';
import type { InflightLimiter } from './inflight.js';
import type { Seat } from './seat.js';
import type { RequestWaitGroup } from './waitgroup.js';
import type { HttpLog } from './httplog.js';

/** Who is asking: a user, or a thrown StatusError (401, …). The gateway's is authn/union.ts. */
export interface RequestAuthenticator {
  /**
   * `trace`: the recorded request's authentication span, for a method that calls out (a webhook). A result
   * known at once (a cached credential) may come without a promise; a failure is a rejection.
   */
  authenticate(req: IncomingMessage, trace?: Trace): AuthnResult | Promise<AuthnResult>;
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
  inflight: InflightLimiter;
  /** API Priority and Fairness (gateway/flowcontrol): when given, it replaces `inflight`. */
  flowControl?: { admit(ctx: RequestContext): Seat | Promise<Seat> };
  requestTimeoutMs: number;
  /** True once shutdown drains: requests arriving then get 429 (health endpoints excepted). */
  draining?: () => boolean;
  /** The requests shutdown waits for: each one but the long-running ones is counted until its answer is handed over. */
  inFlight?: RequestWaitGroup;
  /** -v 3 and above: kube's httplog line per request (httplog.ts); absent below, nothing read per request. */
  httpLog?: HttpLog;
  /** --goaway-chance: the share of HTTP/2 requests after which the connection is told to go away (0 = none). */
  goawayChance?: number;
  /** The audit recorder (gateway/audit, from --audit-policy-file); absent = nothing recorded (Audit-Id is still set). */
  audit?: AuditRecorder;
  /** The last step: the gateway's table (server/dispatch.ts), the sidecar's upstream, a backend process's API. */
  /** A promise only when it has to wait; a failure may be thrown. */
  dispatch(ctx: RequestContext): void | Promise<void>;
  /** Request tracing (--tracing-config-file): the server span around the chain; absent = no tracing step at all. */
  tracing?: {
    /** The request's server span, begun before the chain runs (a request carrying a trace context gets its span once authenticated). */
    begin(req: IncomingMessage, res: ServerResponse): Trace | PendingTrace | undefined;
    named(ctx: RequestContext, info: RequestInfo): void;
    /** The caller is known: whether its incoming trace context is honoured (kube 1.32+); sets `ctx.trace`. */
    authenticated(ctx: RequestContext, authn: AuthnResult): void;
  };
  /** The CBORServingAndStorage gate: errors on resource paths may go out as CBOR. */
  cbor?: boolean;
  /** The APIResponseCompression gate (default on): off, no answer of this server is gzipped. */
  compression?: boolean;
  log(msg: string): void;
  clock(): number;
}
