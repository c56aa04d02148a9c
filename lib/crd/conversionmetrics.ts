// kube's conversion webhook metrics (apiextensions-apiserver's): every call
// counted and timed by its result and, for a failure, its kind: the call
// itself (no answer, a non-2xx code) or an answer that is not a usable
// ConversionReview.
import { LeanCounter, LeanHistogram } from '../metrics/lean.js';
import { registry } from '../metrics/registry.js';

export type ConversionFailure = '' | 'conversion_webhook_call_failure' | 'conversion_webhook_malformed_response_failure';

const requests = new LeanCounter(
  'apiserver_conversion_webhook_request_total',
  'Counter for conversion webhook requests with success/failure and failure error type',
  { stabilityLevel: 'ALPHA' },
  registry,
);
const duration = new LeanHistogram(
  'apiserver_conversion_webhook_duration_seconds',
  'Conversion webhook request latency',
  { stabilityLevel: 'ALPHA' },
  [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60],
  registry,
);

/** One conversion webhook call: `failure` '' when it converted. */
export function observeConversionWebhook(failure: ConversionFailure, seconds: number): void {
  const labels = { result: failure === '' ? 'success' : 'failure', failure_type: failure };
  requests.handleFor(failure, labels).value++;
  duration.handleFor(failure, labels).observe(seconds);
}
