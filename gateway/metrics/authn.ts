// The token webhook's round trips, as kube's delegated authentication counts
// them, and the remaining lifetime of the client certificates that authenticate.
import { Counter, Histogram } from 'prom-client';
import { LeanCounter, LeanHistogram } from '../../lib/metrics/lean.js';
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

// kube's buckets: 0, 30 min, 1 h, 2 h, 6 h, 12 h, 1 d, 2 d, 4 d, 7 d, 30 d, 3 months, 6 months, 1 year.
const certificateExpiration = new LeanHistogram(
  'apiserver_client_certificate_expiration_seconds',
  'Distribution of the remaining lifetime on the certificate used to authenticate a request.',
  { stabilityLevel: 'ALPHA' },
  [0, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 345600, 604800, 2592000, 7776000, 15552000, 31104000],
  registry,
).handleFor('', {});

/** A request authenticated by a client certificate with this much lifetime left (counted per request, as kube). */
export function observeClientCertificate(remainingSeconds: number): void {
  certificateExpiration.observe(remainingSeconds);
}

// kube's cached token authenticator's: requests by whether the cache answered, and the lookups its misses made.
const cacheRequests = new LeanCounter(
  'authentication_token_cache_request_total',
  'Token authentication requests by whether the cache answered them (hit) or not (miss).',
  { stabilityLevel: 'ALPHA' },
  registry,
);
const cacheFetches = new LeanCounter(
  'authentication_token_cache_fetch_total',
  'Lookups made behind the token cache by their result (ok: a decision; error: none could be made).',
  { stabilityLevel: 'ALPHA' },
  registry,
);

export function countTokenCache(status: 'hit' | 'miss'): void {
  cacheRequests.handleFor(status, { status }).value++;
}

/** A lookup behind the cache ended: `ok` with a decision (even a refusal), `error` when it could not decide. */
export function countTokenFetch(status: 'ok' | 'error'): void {
  cacheFetches.handleFor(status, { status }).value++;
}
