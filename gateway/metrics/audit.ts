// kube-apiserver's audit metrics.
import { Counter } from 'prom-client';
import { registry } from './registry.js';

export const auditEvents = new Counter({
  name: 'apiserver_audit_event_total', help: '[ALPHA] Counter of audit events generated and sent to the audit backend.', registers: [registry],
});
export const auditErrors = new Counter({
  name: 'apiserver_audit_error_total', help: '[ALPHA] Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
  labelNames: ['plugin'] as const, registers: [registry],
});
export const auditLevels = new Counter({
  name: 'apiserver_audit_level_total', help: '[ALPHA] Counter of policy levels for audit events (1 per request).',
  labelNames: ['level'] as const, registers: [registry],
});
export const auditRejected = new Counter({
  name: 'apiserver_audit_requests_rejected_total', help: '[ALPHA] Counter of apiserver requests rejected due to an error in audit logging backend.', registers: [registry],
});
