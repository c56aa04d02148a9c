// The token webhook's round trips, as kube's delegated authentication counts them.
import { Counter, Histogram } from 'prom-client';
import { registry } from './registry.js';

const requests = new Counter(
  registry.declared({
    name: 'apiserver_delegated_authn_request_total',
    help: 'Number of HTTP requests partitioned by status code.',
    stabilityLevel: 'ALPHA',
    labelNames: ['code'] as const,
  }),
);
const duration = new Histogram(
  registry.declared({
    name: 'apiserver_delegated_authn_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by status code.',
    stabilityLevel: 'ALPHA',
    labelNames: ['code'] as const,
    buckets: [0.25, 0.5, 0.7, 1, 1.5, 3, 5, 10],
  }),
);

/** One TokenReview sent to the token webhook: its HTTP code (`<error>` when none came back) and duration. */
export function recordTokenWebhook(code: number | '<error>', seconds: number): void {
  requests.inc({ code: String(code) });
  duration.observe({ code: String(code) }, seconds);
}
