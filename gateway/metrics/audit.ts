// kube-apiserver's audit metrics. The two counted on every audited request
// are lean counters (a field update, not prom-client's label hashing).
import { Counter } from 'prom-client';
import { LeanCounter, type CounterHandle } from '../../lib/metrics/lean.js';
import { registry } from './registry.js';

/** apiserver_audit_event_total: `.value++` per event. */
export const auditEvents: CounterHandle = new LeanCounter(
  'apiserver_audit_event_total',
  'Counter of audit events generated and sent to the audit backend.',
  { stabilityLevel: 'ALPHA' },
  registry,
).handle({});
export const auditErrors = new Counter(
  registry.declared({
    name: 'apiserver_audit_error_total',
    help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
    stabilityLevel: 'ALPHA',
    labelNames: ['plugin'] as const,
  }),
);
const auditLevelTotal = new LeanCounter(
  'apiserver_audit_level_total',
  'Counter of policy levels for audit events (1 per request).',
  { stabilityLevel: 'ALPHA' },
  registry,
);
/** The apiserver_audit_level_total series of one level (a policy decision's level: four at most). */
export function auditLevel(level: string): CounterHandle {
  return auditLevelTotal.handleFor(level, { level });
}
export const auditRejected = new Counter(
  registry.declared({
    name: 'apiserver_audit_requests_rejected_total',
    help: 'Counter of apiserver requests rejected due to an error in audit logging backend.',
    stabilityLevel: 'ALPHA',
  }),
);
