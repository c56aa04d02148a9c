// The audit step of the chain: every request gets an Audit-ID (the client's
// own when it sends a sane one, as kube-apiserver), answered in the `Audit-Id`
// header and forwarded to backends; with an auditor (gateway/audit, built from
// --audit-policy-file) the request is recorded through the interfaces below.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';

/** One request's audit, as the chain drives it. */
export interface RequestAudit {
  /** The RequestReceived stage; a promise only when a sink blocks on it (it rejects with 500 under blocking-strict). */
  received(): Promise<void> | undefined;
  impersonated(user: UserInfo): void;
  /** `key`: one of the gateway's own annotation names (kept on a plain object), never a client's. */
  annotate(key: string, value: string): void;
  /** Level Request and above keep the request body: the chain reads it before dispatch and hands it here. */
  readonly wantsRequestBody: boolean;
  requestBody(body: Buffer, contentType: string | undefined): void;
  /** The answer is handed to the socket (`at`: performance.now() then, when the caller has read it). */
  complete(code: number, at?: number): void;
  panic(err: unknown): void;
}

export interface AuditRecorder {
  /**
   * Starts the audit of a request whose user is known; undefined when the
   * policy says None. `receivedAt`: performance.now() when the request came in
   * (kube's requestReceivedTimestamp is taken first thing in the chain).
   */
  begin(
    req: IncomingMessage,
    res: ServerResponse,
    info: RequestInfo,
    user: UserInfo,
    auditID: string,
    longRunning: boolean,
    receivedAt?: number,
  ): RequestAudit | undefined;
  /** A request whose credentials failed. */
  failedAuthentication(req: IncomingMessage, info: RequestInfo, auditID: string, message: string, receivedAt?: number): void;
  /** Largest request body kept (read before dispatch). */
  maxBodyBytes(): number;
}

/** The request's Audit-ID, set on the request so that proxied backends receive it too. */
export function assignAuditId(req: IncomingMessage): string {
  const header = req.headers['audit-id'];
  const id = typeof header === 'string' && header.length > 0 && header.length <= 64 && /^[\x21-\x7e]+$/.test(header) ? header : randomUUID();
  req.headers['audit-id'] = id;
  return id;
}
