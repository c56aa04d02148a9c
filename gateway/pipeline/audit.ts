// The audit step of the chain: every request gets an Audit-ID (the client's
// own when it sends a sane one, as kube-apiserver), answered in the `Audit-Id`
// header and forwarded to backends; with an auditor (gateway/audit, built from
// --audit-policy-file) the request is recorded through the interfaces below.
import type { Exchange } from '../../lib/http/exchange.js';
import type { Trace } from '../../lib/tracing/span.js';
import { randomUuid } from '../../lib/api/uuid.js';
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { carryHeader } from '../../lib/http/carried.js';
import { issuerOf, methodOf } from '../authn/types.js';
import { isLongRunning, type RequestContext } from './context.js';

/** One request's audit, as the chain drives it. */
export interface RequestAudit {
  /** The RequestReceived stage; a promise only when a sink blocks on it (it rejects with 500 under blocking-strict). */
  received(): Promise<void> | undefined;
  impersonated(user: UserInfo): void;
  /** `key`: one of the gateway's own annotation names (kept on a plain object), never a client's. */
  annotate(key: string, value: string): void;
  /** The policy's level is Request or RequestResponse: annotations kube adds at level Request are kept. */
  readonly requestLevel: boolean;
  /** Level Request and above keep the request body: the chain reads it before dispatch and hands it here. */
  readonly wantsRequestBody: boolean;
  requestBody(body: Buffer, contentType: string | undefined): void;
  /** The decoded request object (the core backend's create and update): objectRef filled from its metadata, as kube's LogRequestObject. */
  requestObject(obj: unknown): void;
  /** The answer is handed to the socket (`at`: performance.now() then, when the caller has read it). */
  complete(code: number, at?: number): void;
  panic(err: unknown): void;
}

/** The request as the recorder gets it: its answer side (the error capture hooks the head) and its trace. */
export type AuditedExchange = Exchange & { readonly trace?: Trace | undefined };

export interface AuditRecorder {
  /**
   * Starts the audit of a request whose user is known; undefined when the
   * policy says None. `receivedAt`: performance.now() when the request came in
   * (kube's requestReceivedTimestamp is taken first thing in the chain).
   */
  begin(x: AuditedExchange, info: RequestInfo, user: UserInfo, auditID: string, longRunning: boolean, receivedAt?: number): RequestAudit | undefined;
  /** A request whose credentials failed. */
  failedAuthentication(req: IncomingMessage, info: RequestInfo, auditID: string, message: string, receivedAt?: number): void;
  /** Largest request body kept (read before dispatch). */
  maxBodyBytes(): number;
}

/** The request's Audit-ID, set on the request so that proxied backends receive it too. */
export function assignAuditId(req: IncomingMessage): string {
  const header = req.headers['audit-id'];
  const id = typeof header === 'string' && header.length > 0 && header.length <= 64 && /^[\x21-\x7e]+$/.test(header) ? header : randomUuid();
  req.headers['audit-id'] = id;
  return id;
}

/**
 * The audit step (kube's WithAudit, after authentication): the Audit-Id
 * answered and forwarded, and, when the policy records the request, its
 * event opened with the authentication method and issuer; a promise only
 * when a sink blocks on the RequestReceived stage.
 */
export function openAudit(ctx: RequestContext, recorder: AuditRecorder | undefined): Promise<void> | undefined {
  const auditID = assignAuditId(ctx.req);
  carryHeader(ctx, 'Audit-Id', auditID);
  if (!recorder) return undefined;
  const audit = recorder.begin(ctx, ctx.info, ctx.user, auditID, isLongRunning(ctx), ctx.receivedAt);
  if (!audit) return undefined;
  ctx.audit = audit;
  const authn = ctx.authn;
  if (authn) {
    const method = methodOf(authn);
    if (method) audit.annotate('authentication.gatehouse.dev/authenticator', method);
    const issuer = issuerOf(authn);
    if (issuer) audit.annotate('authentication.gatehouse.dev/issuer', issuer);
  }
  return audit.received();
}
