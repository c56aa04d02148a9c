// kube's ValidatingAdmissionPolicy metrics (its validating/metrics package):
// one check counted and timed per decision that was acted on, labelled by
// policy, binding, error type and the enforcement action taken.
import { Counter, Histogram } from 'prom-client';
import { registry } from '../../../../lib/metrics/registry.js';

const LABELS = ['policy', 'policy_binding', 'error_type', 'enforcement_action'] as const;

const checks = new Counter(
  registry.declared({
    name: 'apiserver_validating_admission_policy_check_total',
    help: 'Validation admission policy check total, labeled by policy and further identified by binding and enforcement action taken.',
    stabilityLevel: 'BETA',
    labelNames: LABELS,
  }),
);

const latency = new Histogram(
  registry.declared({
    name: 'apiserver_validating_admission_policy_check_duration_seconds',
    help: 'Validation admission latency for individual validation expressions in seconds, labeled by policy and further including binding and enforcement action taken.',
    stabilityLevel: 'BETA',
    labelNames: LABELS,
    buckets: [0.0000005, 0.001, 0.01, 0.1, 1.0],
  }),
);

/** kube's ValidationErrorType. */
export type CheckErrorType = 'compile_error' | 'invalid_error' | 'out_of_budget' | 'no_error';
export type EnforcementAction = 'allow' | 'deny' | 'audit' | 'warn';

export function observeCheck(policy: string, binding: string, errorType: CheckErrorType, action: EnforcementAction, elapsedMs: number): void {
  const labels = { policy, policy_binding: binding, error_type: errorType, enforcement_action: action };
  checks.inc(labels);
  latency.observe(labels, elapsedMs / 1000);
}
