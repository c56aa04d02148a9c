// Opens the audit event of a request once its user is known; later steps
// add annotations and the impersonated user. Events go to an AuditSink;
// without --audit-log-path they are dropped.
import { randomUUID } from 'node:crypto';
import type { AuditEvent, RequestContext } from './context.js';

export interface AuditSink {
  write(ev: AuditEvent, code: number): void;
}

export const DROP_AUDIT: AuditSink = { write: () => undefined };

export function openAudit(ctx: RequestContext): AuditEvent {
  const header = ctx.req.headers['audit-id'];
  return {
    auditID: typeof header === 'string' && header.length <= 64 ? header : randomUUID(),
    requestURI: ctx.req.url ?? '/',
    verb: ctx.info.verb,
    user: ctx.user,
    annotations: {},
  };
}
