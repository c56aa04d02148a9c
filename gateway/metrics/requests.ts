// kube-apiserver's request metrics (k8s.io/apiserver/pkg/endpoints/metrics),
// recorded once per request by the chain: the verb as kube reports it (LIST,
// WATCH, APPLY, the HTTP method otherwise), scope, the stable request counter
// and latency, response sizes of reads, long-running requests, in-flight
// seats, and authentication attempts. Labelled children are cached per label
// set, so a request costs one string key and one Map lookup per metric.
import { Gauge } from 'prom-client';
import { LeanCounter, LeanHistogram, type CounterHandle, type HistogramHandle } from '../../lib/metrics/lean.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import { registry } from './registry.js';

const LABELS = ['verb', 'dry_run', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const;

const requestTotal = new LeanCounter(
  'apiserver_request_total',
  'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
  { stabilityLevel: 'STABLE' },
  registry,
);
const requestDuration = new LeanHistogram(
  'apiserver_request_duration_seconds',
  'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
  { stabilityLevel: 'STABLE' },
  [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
  registry,
);
const responseSizes = new LeanHistogram(
  'apiserver_response_sizes',
  'Response size distribution in bytes for each group, version, verb, resource, subresource, scope and component.',
  { stabilityLevel: 'STABLE' },
  [1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
  registry,
);
// kube's SLI latency: the request's time less what it waited on others (admission webhooks, a
// priority-and-fairness queue); long-running requests are not observed. Buckets start at 50 ms, as kube's.
const sliDuration = new LeanHistogram(
  'apiserver_request_sli_duration_seconds',
  'Response latency distribution (not counting webhook duration and priority & fairness queue wait times) in seconds for each verb, group, version, resource, subresource, scope and component.',
  { stabilityLevel: 'BETA' },
  [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60],
  registry,
);
const terminations = new LeanCounter(
  'apiserver_request_terminations_total',
  'Number of requests which apiserver terminated in self-defense.',
  { stabilityLevel: 'ALPHA' },
  registry,
);
const longRunning = new Gauge(
  registry.declared({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    stabilityLevel: 'STABLE',
    labelNames: LABELS,
  }),
);

// Lean, with a handle per result: prom-client's labelled inc/observe were ~4% of a GET's profile.
const authnAttempts = new LeanCounter('authentication_attempts', 'Counter of authenticated attempts.', { stabilityLevel: 'ALPHA' }, registry);
const authnDuration = new LeanHistogram(
  'authentication_duration_seconds',
  'Authentication duration in seconds broken out by result.',
  { stabilityLevel: 'ALPHA' },
  Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i),
  registry,
);

/** Seats in use, read when /metrics is scraped (nothing per request but two integers). */
export const inflight = { readOnly: 0, mutating: 0 };
new Gauge(
  registry.declared({
    name: 'apiserver_current_inflight_requests',
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    stabilityLevel: 'STABLE',
    labelNames: ['request_kind'] as const,
    collect(this: Gauge<'request_kind'>) {
      this.set({ request_kind: 'readOnly' }, inflight.readOnly);
      this.set({ request_kind: 'mutating' }, inflight.mutating);
    },
  }),
);

/** Non-resource paths counted by name; any other path is counted without it (a client's random paths must not grow the series). */
const KNOWN_PATHS = new Set([
  '/',
  '/api',
  '/apis',
  '/version',
  '/metrics',
  '/healthz',
  '/livez',
  '/readyz',
  '/openapi/v2',
  '/openapi/v3',
  '/.well-known/openid-configuration',
  '/openid/v1/jwks',
]);
/** Distinct label sets kept; past it, new resources are counted as `other` (unknown resources are 404s a client chooses). */
const MAX_SERIES = 2000;

type LabelSet = { verb: string; dry_run: string; group: string; version: string; resource: string; subresource: string; scope: string; component: string };

/** One series of the request metrics, with its handles. */
export interface Labels {
  readonly labels: Readonly<LabelSet>;
  readonly read: boolean;
  readonly codes: Map<number, CounterHandle>;
  readonly duration: HistogramHandle;
  readonly size: HistogramHandle | undefined;
  /** The SLI histogram has no dry_run label: the series of a dry and a real request share it. */
  readonly sli: HistogramHandle;
  readonly terminations: Map<number, CounterHandle>;
}

export interface RequestFacts {
  info: RequestInfo;
  method: string;
  contentType: string | undefined;
  dryRun: boolean;
}

const labelCache = new Map<string, Labels>();

/** kube's reported verb: LIST for GET/HEAD of a collection, WATCH, APPLY for a server-side apply patch, else the method. */
function reportedVerb(f: RequestFacts): string {
  const i = f.info;
  if (!i.isResourceRequest) return f.method;
  if (i.verb === 'watch') return 'WATCH';
  if (i.verb === 'list') return 'LIST';
  if (f.method === 'PATCH' && f.contentType?.startsWith('application/apply-patch') === true) return 'APPLY';
  return f.method;
}

/**
 * The last request's series and what chose it: a request of the same shape (a client repeating itself)
 * takes it without building and hashing the 7-part key (as flowcontrol/classifier.ts's per-user memo).
 * The answer for given parts never changes: the cache only grows, and once full a new set stays `other`.
 */
const last = { verb: '', dryRun: false, group: '', version: '', resource: '', sub: '', scope: '', labels: undefined as Labels | undefined };

export function labelsOf(f: RequestFacts): Labels {
  const i = f.info;
  const verb = reportedVerb(f);
  const scope = !i.isResourceRequest ? '' : i.name ? 'resource' : i.namespace ? 'namespace' : 'cluster';
  const sub = i.isResourceRequest ? i.subresource : KNOWN_PATHS.has(i.path) ? i.path : '';
  if (
    last.labels !== undefined &&
    last.resource === i.resource &&
    last.verb === verb &&
    last.scope === scope &&
    last.group === i.apiGroup &&
    last.version === i.apiVersion &&
    last.sub === sub &&
    last.dryRun === f.dryRun
  )
    return last.labels;
  const l = seriesOf(verb, f.dryRun, i, sub, scope);
  last.verb = verb;
  last.dryRun = f.dryRun;
  last.group = i.apiGroup;
  last.version = i.apiVersion;
  last.resource = i.resource;
  last.sub = sub;
  last.scope = scope;
  last.labels = l;
  return l;
}

function seriesOf(verb: string, dryRun: boolean, i: RequestInfo, sub: string, scope: string): Labels {
  let key = `${verb}\0${dryRun ? 'All' : ''}\0${i.apiGroup}\0${i.apiVersion}\0${i.resource}\0${sub}\0${scope}`;
  let l = labelCache.get(key);
  // Past the bound every new label set is the verb's and scope's `other` one, made once.
  const full = !l && labelCache.size >= MAX_SERIES;
  if (full) {
    key = `other\0${verb}\0${scope}\0${dryRun}`;
    l = labelCache.get(key);
  }
  if (!l) {
    const labels: LabelSet = Object.freeze({
      verb,
      dry_run: dryRun ? 'All' : '',
      group: full ? 'other' : i.apiGroup,
      version: full ? 'other' : i.apiVersion,
      resource: full ? 'other' : i.resource,
      subresource: full ? 'other' : sub,
      scope,
      component: 'apiserver',
    });
    const read = verb === 'GET' || verb === 'LIST';
    const { dry_run: _, ...sliLabels } = labels;
    l = {
      labels,
      read,
      codes: new Map(),
      duration: requestDuration.handle(labels),
      size: read ? responseSizes.handle(labels) : undefined,
      sli: sliDuration.handleFor(Object.values(sliLabels).join('\0'), sliLabels),
      terminations: new Map(),
    };
    labelCache.set(key, l);
  }
  return l;
}

/**
 * A request's end: counter, latency and, for reads, the answer's size when it
 * is known; `sliSeconds` (absent for long-running requests) is the latency
 * less the time waited on webhooks and queues.
 */
export function observeRequest(l: Labels, code: number, seconds: number, size: number | undefined, sliSeconds: number | undefined): void {
  let c = l.codes.get(code);
  if (!c) {
    c = requestTotal.handle({ ...l.labels, code: String(code) });
    l.codes.set(code, c);
  }
  c.value++;
  l.duration.observe(seconds);
  if (size !== undefined && l.size) l.size.observe(size);
  if (sliSeconds !== undefined) l.sli.observe(sliSeconds);
}

/** A request the server ended itself (a 429 of its concurrency limits, a 504 at its deadline). */
export function observeTermination(l: Labels, code: number): void {
  let c = l.terminations.get(code);
  if (!c) {
    const { dry_run: _, ...labels } = l.labels;
    c = terminations.handleFor(`${Object.values(labels).join('\0')}\0${code}`, { ...labels, code: String(code) });
    l.terminations.set(code, c);
  }
  c.value++;
}

/** A long-running request started; its caller keeps `l` for `longRunningEnded` (the labels, not a closure: a watch holds them for its life). */
export function longRunningStarted(l: Labels): void {
  longRunning.inc(l.labels);
}

export function longRunningEnded(l: Labels): void {
  longRunning.dec(l.labels);
}

/**
 * The success series of the authentication metrics, taken at the first success (handleFor's order of
 * series unchanged): every authenticated request made two label objects and two Map lookups for them.
 */
let authnSucceeded: CounterHandle | undefined;
let authnSucceededIn: HistogramHandle | undefined;

export function observeAuthentication(result: 'success' | 'failure' | 'error', seconds: number): void {
  if (result === 'success') {
    (authnSucceeded ??= authnAttempts.handleFor(result, { result })).value++;
    (authnSucceededIn ??= authnDuration.handleFor(result, { result })).observe(seconds);
    return;
  }
  authnAttempts.handleFor(result, { result }).value++;
  authnDuration.handleFor(result, { result }).observe(seconds);
}
