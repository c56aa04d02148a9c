// kube-apiserver's admission webhook metrics, with kube's names and labels:
// latency per call, the requests and the rejections.
import { Counter, Histogram } from 'prom-client';
import { registry } from '../../../../lib/metrics/registry.js';
import type { AdmissionAttributes } from '../types.js';

const duration = new Histogram(
  registry.declared({
    name: 'apiserver_admission_webhook_admission_duration_seconds',
    help: 'Admission webhook latency histogram in seconds, identified by name and broken out for each operation and API resource and type (validate or admit).',
    stabilityLevel: 'STABLE',
    labelNames: ['name', 'type', 'operation', 'rejected'],
    buckets: [0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25],
  }),
);

const requests = new Counter(
  registry.declared({
    name: 'apiserver_admission_webhook_request_total',
    help: 'Admission webhook request total, identified by name and broken out for each admission type (validating or mutating) and operation. Additional labels specify whether the request was rejected or not and an HTTP status code. Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'type', 'operation', 'code', 'rejected'],
  }),
);

const rejections = new Counter(
  registry.declared({
    name: 'apiserver_admission_webhook_rejection_count',
    help: 'Admission webhook rejection count, identified by name and broken out for each admission type (validating or admit) and operation. Additional labels specify an error type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error otherwise) and optionally a non-zero rejection code if the webhook rejects the request with an HTTP status code (honored by the apiserver when the code is greater or equal to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality bounded.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'type', 'operation', 'error_type', 'rejection_code'],
  }),
);

const failOpen = new Counter(
  registry.declared({
    name: 'apiserver_admission_webhook_fail_open_count',
    help: 'Admission webhook fail open count, identified by name and broken out for each admission type (validating or admit).',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'type'],
  }),
);

/** A webhook with failurePolicy Ignore could not be called: the request went on without it. */
export function observeFailOpen(name: string, type: WebhookType): void {
  failOpen.inc({ name, type });
}

export type WebhookType = 'admit' | 'validating';
export type ErrorType = 'calling_webhook_error' | 'apiserver_internal_error' | 'no_error';

export interface CallOutcome {
  readonly name: string;
  readonly type: WebhookType;
  readonly operation: string;
  readonly seconds: number;
  /** The webhook's HTTP status (0 when it was not reached). */
  readonly code: number;
  readonly rejected: boolean;
  readonly errorType: ErrorType;
  readonly rejectionCode: number;
}

export function observeCall(o: CallOutcome): void {
  const rejected = String(o.rejected);
  duration.observe({ name: o.name, type: o.type, operation: o.operation, rejected }, o.seconds);
  requests.inc({ name: o.name, type: o.type === 'admit' ? 'admit' : 'validating', operation: o.operation, code: String(Math.min(o.code, 600)), rejected });
  if (o.rejected)
    rejections.inc({ name: o.name, type: o.type, operation: o.operation, error_type: o.errorType, rejection_code: String(Math.min(o.rejectionCode, 600)) });
}

/** Adds the time since `started` to the request's time waited on webhooks, which its SLI latency leaves out (kube's latency trackers). */
export function waitedOnWebhooks(a: AdmissionAttributes, started: number): void {
  if (a.timing) a.timing.excludedMs = (a.timing.excludedMs ?? 0) + (performance.now() - started);
}
