// Authorization metrics, named and labelled as kube-apiserver names them:
// decisions per authorizer, the authorization configuration controller's
// reloads, webhook evaluations and match-condition outcomes.
import { Counter, Gauge, Histogram } from 'prom-client';
import { registry } from './registry.js';
import { LeanCounter } from '../../lib/metrics/lean.js';

// Lean, a handle per (type, name, decision): counted on every request, and prom-client hashes the labels per inc.
const decisionsTotal = new LeanCounter(
  'apiserver_authorization_decisions_total',
  'Total number of terminal decisions made by an authorizer split by authorizer type, name, and decision.',
  { stabilityLevel: 'ALPHA' },
  registry,
);

const reloadsTotal = new Counter(
  registry.declared({
    name: 'apiserver_authorization_config_controller_automatic_reloads_total',
    help: 'Total number of automatic reloads of authorization configuration split by status and apiserver identity.',
    stabilityLevel: 'ALPHA',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  }),
);

const lastReload = new Gauge(
  registry.declared({
    name: 'apiserver_authorization_config_controller_automatic_reload_last_timestamp_seconds',
    help: 'Timestamp of the last automatic reload of authorization configuration split by status and apiserver identity.',
    stabilityLevel: 'ALPHA',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  }),
);

const webhookEvaluations = new Counter(
  registry.declared({
    name: 'apiserver_authorization_webhook_evaluations_total',
    help: 'Round-trips to authorization webhooks.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'result'] as const,
  }),
);

const matchConditionErrors = new Counter(
  registry.declared({
    name: 'apiserver_authorization_match_condition_evaluation_errors_total',
    help: 'Total number of errors when an authorization webhook encounters a match condition error split by authorizer type and name.',
    stabilityLevel: 'ALPHA',
    labelNames: ['type', 'name'] as const,
  }),
);

const matchConditionExclusions = new Counter(
  registry.declared({
    name: 'apiserver_authorization_match_condition_exclusions_total',
    help: 'Total number of exclusions when an authorization webhook is skipped by match conditions, split by authorizer type and name.',
    stabilityLevel: 'ALPHA',
    labelNames: ['type', 'name'] as const,
  }),
);

/** kube counts terminal decisions only: `allowed` or `denied`; no-opinion is not recorded. */
export function recordDecision(type: string, name: string, decision: 'allowed' | 'denied'): void {
  // Authorizers are the configuration's (a bounded set): one series each.
  decisionsTotal.handleFor(`${type}\0${name}\0${decision}`, { type, name, decision }).value++;
}

const webhookDuration = new Histogram(
  registry.declared({
    name: 'apiserver_authorization_webhook_duration_seconds',
    help: 'Request latency in seconds.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  }),
);

export type WebhookResult = 'success' | 'timeout' | 'error';
/** One round trip to an authorization webhook: its result and how long it took. */
export function recordWebhookEvaluation(name: string, result: WebhookResult, seconds: number): void {
  webhookEvaluations.inc({ name, result });
  webhookDuration.observe({ name, result }, seconds);
}

export function recordMatchConditionError(type: string, name: string): void {
  matchConditionErrors.inc({ type, name });
}

export function recordMatchConditionExclusion(type: string, name: string): void {
  matchConditionExclusions.inc({ type, name });
}

export interface AuthzConfigMetrics {
  reload(status: 'success' | 'failure', atMs: number): void;
}

export function authzConfigMetrics(apiServerIdHash: string): AuthzConfigMetrics {
  return {
    reload(status, atMs) {
      reloadsTotal.inc({ status, apiserver_id_hash: apiServerIdHash });
      lastReload.set({ status, apiserver_id_hash: apiServerIdHash }, atMs / 1000);
    },
  };
}
