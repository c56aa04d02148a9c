// kube-apiserver's audit metrics.
import { Counter } from 'prom-client';
import { registry } from './registry.js';

export const auditEvents = new Counter(registry.declared({
  name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.', stabilityLevel: 'ALPHA',
}));
export const auditErrors = new Counter(registry.declared({
  name: 'apiserver_audit_error_total', help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', stabilityLevel: 'ALPHA',
  labelNames: ['plugin'] as const,
}));
export const auditLevels = new Counter(registry.declared({
  name: 'apiserver_audit_level_total', help: 'Counter of policy levels for audit events (1 per request).', stabilityLevel: 'ALPHA',
  labelNames: ['level'] as const,
}));
export const auditRejected = new Counter(registry.declared({
  name: 'apiserver_audit_requests_rejected_total', help: 'Counter of apiserver requests rejected due to an error in audit logging backend.', stabilityLevel: 'ALPHA',
}));
