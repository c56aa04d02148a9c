// Gatehouse's Prometheus rules, the one source of the rules files, their
// promtool unit tests and the runbooks: recording rules for the SLO burn
// rates (kubernetes-mixin's multi-window scheme) and every alert with what it
// means, how to confirm it, what to do, and input series that fire it and
// series that must not.
import { JOB, NOT_LONG_RUNNING, rate, sel, sliRequestsRate, slowRequestsRate } from './promql.js';

export interface RecordingRule {
  record: string;
  expr: string;
}

/** One input series of a promtool test: `values` in promtool's expanding notation (`0+10x30`). */
export interface InputSeries {
  series: string;
  values: string;
}

export interface AlertTest {
  /** What the case shows. */
  what: string;
  interval?: string;
  input: InputSeries[];
  evalTime: string;
  /** The labels of each alert expected to be firing then (besides alertname); [] for a case that must stay quiet. */
  fires: Array<Record<string, string>>;
}

export interface Runbook {
  /** What the alert means, for whom. */
  meaning: string;
  /** How to confirm it: queries and commands, each run as written. */
  confirm: string[];
  /** What to do. */
  actions: string[];
}

/** An alert: one name, one runbook, one or more rules (severities or windows). */
export interface AlertFamily {
  name: string;
  summary: string;
  /** May name labels of the alert: `{{ $labels.name }}`. */
  description: string;
  rules: Array<{ expr: string; for?: string; labels: Record<string, string> & { severity: 'warning' | 'critical' } }>;
  runbook: Runbook;
  tests: AlertTest[];
}

const WINDOWS = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'] as const;
/** kube's SLO: 99% of requests good over 30 days; the budget is the other 1%. */
const BUDGET = 0.01;
/** kubernetes-mixin's pairs: (long, short, burn factor, for, severity). */
const BURNS = [
  { long: '1h', short: '5m', factor: 14.4, for: '2m', severity: 'critical' },
  { long: '6h', short: '30m', factor: 6, for: '15m', severity: 'critical' },
  { long: '1d', short: '2h', factor: 3, for: '1h', severity: 'warning' },
  { long: '3d', short: '6h', factor: 1, for: '3h', severity: 'warning' },
] as const;

export const errorRatio = (w: string) => `gatehouse:apiserver_request_errors:ratio_rate${w}`;
export const slowRatio = (w: string) => `gatehouse:apiserver_request_slow:ratio_rate${w}`;

export const recordingRules: RecordingRule[] = [
  ...WINDOWS.map((w) => ({
    record: errorRatio(w),
    expr: `(sum(${rate(sel('apiserver_request_total', NOT_LONG_RUNNING, 'code=~"5.."'), w)}) or vector(0)) / sum(${rate(sel('apiserver_request_total', NOT_LONG_RUNNING), w)})`,
  })),
  ...WINDOWS.map((w) => ({ record: slowRatio(w), expr: `(${slowRequestsRate(w)}) / ${sliRequestsRate(w)}` })),
];

const I = 'instance="gatehouse-0:6443"';
const s = (name: string, ...labels: string[]) => `${name}{${[`job="${JOB}"`, I, ...labels].join(',')}}`;

/** The bucket, _sum and _count series of a histogram whose observations all fall at `value` (`perStep` more each step). */
function histogram(name: string, labels: string[], bounds: readonly number[], value: number, perStep: number, steps = 60): InputSeries[] {
  const grows = `0+${perStep}x${steps}`;
  const flat = `0x${steps}`;
  return [
    ...bounds.map((le) => ({ series: s(`${name}_bucket`, ...labels, `le="${le}"`), values: le >= value ? grows : flat })),
    { series: s(`${name}_bucket`, ...labels, 'le="+Inf"'), values: grows },
    { series: s(`${name}_sum`, ...labels), values: `0+${perStep * value}x${steps}` },
    { series: s(`${name}_count`, ...labels), values: grows },
  ];
}

const SLI_BOUNDS = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const STORE_BOUNDS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];
const CERT_BOUNDS = [0, 1800, 3600, 7200, 21600, 43200, 86400, 172800, 345600, 604800, 2592000, 7776000, 15552000, 31104000];
const TOKEN_WEBHOOK_BOUNDS = [0.25, 0.5, 0.7, 1, 1.5, 3, 5, 10];
const AUTHZ_WEBHOOK_BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const ADMISSION_WEBHOOK_BOUNDS = [0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 25];
const CONVERSION_WEBHOOK_BOUNDS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 30, 45, 60];

const burnRules = (ratio: (w: string) => string) =>
  BURNS.map((b) => ({
    expr: `${ratio(b.long)} > (${b.factor} * ${BUDGET}) and ${ratio(b.short)} > (${b.factor} * ${BUDGET})`,
    for: b.for,
    labels: { severity: b.severity, long: b.long, short: b.short },
  }));
/** At 30 minutes of a steady burn, the two fast pairs fire; the slow pairs are still pending (their `for` is longer). */
const FAST_BURNS = [
  { severity: 'critical', long: '1h', short: '5m' },
  { severity: 'critical', long: '6h', short: '30m' },
];

const WEBHOOK_ERRORS: Array<{ webhook: string; expr: string; by: string[]; fire: InputSeries[]; quiet: InputSeries[] }> = [
  {
    webhook: 'token',
    by: [],
    expr: `sum by (job) (${rate(sel('apiserver_delegated_authn_request_total', 'code!~"2.."'), '5m')}) / sum by (job) (${rate(sel('apiserver_delegated_authn_request_total'), '5m')}) > 0.1`,
    fire: [{ series: s('apiserver_delegated_authn_request_total', 'code="<error>"'), values: '0+10x30' }],
    quiet: [{ series: s('apiserver_delegated_authn_request_total', 'code="200"'), values: '0+10x30' }],
  },
  {
    webhook: 'authorization',
    by: ['name'],
    expr: `sum by (job, name) (${rate(sel('apiserver_authorization_webhook_evaluations_total', 'result!="success"'), '5m')}) / sum by (job, name) (${rate(sel('apiserver_authorization_webhook_evaluations_total'), '5m')}) > 0.1`,
    fire: [{ series: s('apiserver_authorization_webhook_evaluations_total', 'name="authz"', 'result="timeout"'), values: '0+10x30' }],
    quiet: [{ series: s('apiserver_authorization_webhook_evaluations_total', 'name="authz"', 'result="success"'), values: '0+10x30' }],
  },
  {
    webhook: 'admission',
    by: ['name'],
    expr: `sum by (job, name) (${rate(sel('apiserver_admission_webhook_request_total', 'code!~"2.."'), '5m')}) / sum by (job, name) (${rate(sel('apiserver_admission_webhook_request_total'), '5m')}) > 0.1`,
    fire: [{ series: s('apiserver_admission_webhook_request_total', 'name="hook.example.com"', 'code="500"', 'type="validating"'), values: '0+10x30' }],
    quiet: [{ series: s('apiserver_admission_webhook_request_total', 'name="hook.example.com"', 'code="200"', 'type="validating"'), values: '0+10x30' }],
  },
  {
    webhook: 'conversion',
    by: [],
    expr: `sum by (job) (${rate(sel('apiserver_conversion_webhook_request_total', 'result="failure"'), '5m')}) / sum by (job) (${rate(sel('apiserver_conversion_webhook_request_total'), '5m')}) > 0.1`,
    fire: [
      { series: s('apiserver_conversion_webhook_request_total', 'result="failure"', 'failure_type="conversion_webhook_call_failure"'), values: '0+10x30' },
    ],
    quiet: [{ series: s('apiserver_conversion_webhook_request_total', 'result="success"', 'failure_type=""'), values: '0+10x30' }],
  },
];

const WEBHOOK_LATENCY: Array<{ webhook: string; metric: string; by: string[]; bounds: number[]; labels: string[] }> = [
  { webhook: 'token', metric: 'apiserver_delegated_authn_request_duration_seconds', by: [], bounds: TOKEN_WEBHOOK_BOUNDS, labels: ['code="200"'] },
  {
    webhook: 'authorization',
    metric: 'apiserver_authorization_webhook_duration_seconds',
    by: ['name'],
    bounds: AUTHZ_WEBHOOK_BOUNDS,
    labels: ['name="authz"', 'result="success"'],
  },
  {
    webhook: 'admission',
    metric: 'apiserver_admission_webhook_admission_duration_seconds',
    by: ['name'],
    bounds: ADMISSION_WEBHOOK_BOUNDS,
    labels: ['name="hook.example.com"', 'type="validating"', 'operation="CREATE"', 'rejected="false"'],
  },
  {
    webhook: 'conversion',
    metric: 'apiserver_conversion_webhook_duration_seconds',
    by: [],
    bounds: CONVERSION_WEBHOOK_BOUNDS,
    labels: ['result="success"', 'failure_type=""'],
  },
];
const p99Over = (metric: string, by: string[], threshold: number) =>
  `histogram_quantile(0.99, sum by (${['job', ...by, 'le'].join(', ')}) (${rate(sel(`${metric}_bucket`), '5m')})) > ${threshold}`;

const firing = (labels: Record<string, string>) => ({ job: JOB, ...labels });

export const alerts: AlertFamily[] = [
  {
    name: 'GatehouseAvailabilityBudgetBurn',
    summary: 'Gatehouse is answering too many requests with server errors.',
    description:
      "Gatehouse's 5xx answers over the last {{ $labels.long }} and {{ $labels.short }} burn the 30-day error budget of its 99% availability objective too fast.",
    rules: burnRules(errorRatio),
    runbook: {
      meaning:
        'The share of requests (watches excepted) answered 5xx, over a long and a short window, spends the 1% monthly error budget of a 99% availability objective at the rate in the alert (14.4× exhausts it in two days). Clients see failures: controllers retry, kubectl users see errors.',
      confirm: [
        `${errorRatio('5m')}  # the error ratio now`,
        `sum by (code, verb, group, resource) (rate(${sel('apiserver_request_total', 'code=~"5.."')}[5m]))  # which requests fail`,
        'kubectl get --raw /readyz?verbose  # which health check fails, if any',
        'kubectl get apiservices  # an aggregated API unavailable answers 503 for its group',
      ],
      actions: [
        'Group the failures by `group` and `resource`: failures of one aggregated group point at its backend (see GatehouseAPIServiceUnavailable); failures of core resources point at the store (see GatehouseStoreLatency and the readiness checks).',
        "Read Gatehouse's log around the first failures for the Status messages it answered.",
        'If one client causes the load, priority and fairness can isolate it (a FlowSchema for it with its own PriorityLevelConfiguration).',
      ],
    },
    tests: [
      {
        what: 'half the requests fail: the fast pairs fire',
        input: [
          { series: s('apiserver_request_total', 'verb="GET"', 'code="500"'), values: '0+6x60' },
          { series: s('apiserver_request_total', 'verb="GET"', 'code="200"'), values: '0+6x60' },
        ],
        evalTime: '30m',
        fires: FAST_BURNS,
      },
      {
        what: 'every request succeeds; failing watches do not count',
        input: [
          { series: s('apiserver_request_total', 'verb="GET"', 'code="200"'), values: '0+6x60' },
          { series: s('apiserver_request_total', 'verb="WATCH"', 'code="500"'), values: '0+6x60' },
        ],
        evalTime: '30m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseLatencyBudgetBurn',
    summary: 'Gatehouse is answering too many requests slowly.',
    description:
      "Requests slower than their objective (1 s for an object or a write, 5 s for a namespace's list, 30 s for the cluster's) over the last {{ $labels.long }} and {{ $labels.short }} burn the 30-day budget of Gatehouse's 99% latency objective too fast.",
    rules: burnRules(slowRatio),
    runbook: {
      meaning:
        "The share of requests slower than kube's latency objective, measured on apiserver_request_sli_duration_seconds (which leaves out admission webhooks and priority-and-fairness queueing, so the time is Gatehouse's own and its store's), spends the 1% monthly budget at the rate in the alert.",
      confirm: [
        `${slowRatio('5m')}  # the slow ratio now`,
        `histogram_quantile(0.99, sum by (verb, scope, le) (rate(${sel('apiserver_request_sli_duration_seconds_bucket')}[5m])))  # which verbs and scopes are slow`,
        `histogram_quantile(0.99, sum by (operation, type, le) (rate(${sel('etcd_request_duration_seconds_bucket')}[5m])))  # the store's share`,
        `nodejs_eventloop_lag_p99_seconds{job="${JOB}"}  # a blocked event loop delays every request`,
      ],
      actions: [
        'A slow store (GatehouseStoreLatency) slows every request: look at the store first (Redis latency, the file store’s disk).',
        'A high event-loop lag with high CPU (`process_cpu_seconds_total`) means the process is saturated: add replicas or find the expensive requests (large LISTs without a limit; `apiserver_response_sizes`).',
        'Slow LISTs of the cluster scope are usually large: ask their clients to paginate (`limit`) or watch instead.',
      ],
    },
    tests: [
      {
        what: 'every read takes 2 s: the fast pairs fire',
        input: histogram('apiserver_request_sli_duration_seconds', ['verb="GET"', 'scope="resource"', 'component="apiserver"'], SLI_BOUNDS, 2, 6),
        evalTime: '30m',
        fires: FAST_BURNS,
      },
      {
        what: "a namespace's LIST in 3 s is within its 5 s objective",
        input: histogram('apiserver_request_sli_duration_seconds', ['verb="LIST"', 'scope="namespace"', 'component="apiserver"'], SLI_BOUNDS, 3, 6),
        evalTime: '30m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseAPIServiceUnavailable',
    summary: 'An aggregated API is unavailable.',
    description: 'APIService {{ $labels.name }} has been unavailable for 5 minutes: requests for its group and version are answered 503.',
    rules: [{ expr: `max by (job, name) (${sel('aggregator_unavailable_apiservice')}) == 1`, for: '5m', labels: { severity: 'warning' } }],
    runbook: {
      meaning:
        "Gatehouse's availability controller cannot reach the APIService's backend (no ready endpoint, a refused connection, a failed discovery call). Every request for the APIService's group and version is answered 503 and clients' discovery reports the group as failed.",
      confirm: [
        'kubectl get apiservice <name> -o jsonpath={.status.conditions}  # reason and message of Available=False',
        `sum by (name, reason) (increase(${sel('aggregator_unavailable_apiservice_total')}[1h]))  # how often it flapped, and why`,
        'kubectl -n <service namespace> get endpointslices -l kubernetes.io/service-name=<service>  # ready endpoints behind it',
      ],
      actions: [
        "Check the backend's pods (`kubectl -n <namespace> get pods`, their logs): ServiceNotFound or MissingEndpoints means nothing serves it; FailedDiscoveryCheck means it answers but not its discovery document.",
        'If the backend is gone for good, delete its APIService so that clients stop failing discovery.',
      ],
    },
    tests: [
      {
        what: 'unavailable for 10 minutes fires',
        input: [{ series: s('aggregator_unavailable_apiservice', 'name="v1.samples.gatehouse.dev"'), values: '1x20' }],
        evalTime: '10m',
        fires: [firing({ severity: 'warning', name: 'v1.samples.gatehouse.dev' })],
      },
      {
        what: 'available stays quiet; unavailable for 3 minutes is still pending',
        input: [
          { series: s('aggregator_unavailable_apiservice', 'name="v1.samples.gatehouse.dev"'), values: '0x20' },
          { series: s('aggregator_unavailable_apiservice', 'name="v1.other.example.com"'), values: '0x7 1x3' },
        ],
        evalTime: '10m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseAggregatedAPIErrors',
    summary: 'An aggregated API keeps becoming unavailable.',
    description: 'APIService {{ $labels.name }} became unavailable ({{ $labels.reason }}) more than 4 times in 10 minutes.',
    rules: [{ expr: `sum by (job, name, reason) (increase(${sel('aggregator_unavailable_apiservice_total')}[10m])) > 4`, labels: { severity: 'warning' } }],
    runbook: {
      meaning: "The APIService's backend flaps between available and unavailable: requests for its group fail intermittently.",
      confirm: [
        `sum by (name, reason) (increase(${sel('aggregator_unavailable_apiservice_total')}[10m]))`,
        'kubectl get apiservice <name> -o yaml  # the last condition',
      ],
      actions: [
        "Look at the backend's pods for restarts (`kubectl -n <namespace> get pods`) and at its readiness: a backend that passes its readiness probe but fails discovery flaps.",
      ],
    },
    tests: [
      {
        what: 'one transition a minute fires',
        input: [{ series: s('aggregator_unavailable_apiservice_total', 'name="v1.samples.gatehouse.dev"', 'reason="MissingEndpoints"'), values: '0+1x20' }],
        evalTime: '15m',
        fires: [firing({ severity: 'warning', name: 'v1.samples.gatehouse.dev', reason: 'MissingEndpoints' })],
      },
      {
        what: 'two transitions in a quarter hour stay quiet',
        input: [
          { series: s('aggregator_unavailable_apiservice_total', 'name="v1.samples.gatehouse.dev"', 'reason="MissingEndpoints"'), values: '0x5 1x5 2x10' },
        ],
        evalTime: '15m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseClientCertificateExpiration',
    summary: 'A client certificate used to authenticate to Gatehouse is about to expire.',
    description: 'Clients authenticate to Gatehouse with certificates that expire in less than {{ $labels.within }}.',
    rules: [
      {
        expr: `${sel('apiserver_client_certificate_expiration_seconds_count')} > 0 and on (job, instance) histogram_quantile(0.01, sum by (job, instance, le) (${rate(sel('apiserver_client_certificate_expiration_seconds_bucket'), '5m')})) < 604800`,
        labels: { severity: 'warning', within: '7 days' },
      },
      {
        expr: `${sel('apiserver_client_certificate_expiration_seconds_count')} > 0 and on (job, instance) histogram_quantile(0.01, sum by (job, instance, le) (${rate(sel('apiserver_client_certificate_expiration_seconds_bucket'), '5m')})) < 86400`,
        labels: { severity: 'critical', within: '24 hours' },
      },
    ],
    runbook: {
      meaning:
        'The 1st percentile of the remaining lifetime of the client certificates that authenticated requests in the last 5 minutes is below the threshold: some client will be refused (401) once its certificate expires.',
      confirm: [
        `histogram_quantile(0.01, sum by (le) (rate(${sel('apiserver_client_certificate_expiration_seconds_bucket')}[5m])))  # seconds left`,
        "Gatehouse's audit log: `user.username` of requests with `authenticationMetadata` of x509, to find which client",
        'openssl x509 -noout -enddate -in <client certificate>  # on the suspected client',
      ],
      actions: [
        "Renew the client's certificate (a CertificateSigningRequest, `kubectl certificate approve`, or the issuing CA) and restart or reload the client.",
        'kubelets rotate their own certificates when `rotateCertificates` is on: check that their CSRs are approved (`kubectl get csr`).',
      ],
    },
    tests: [
      {
        what: 'certificates with an hour left fire both',
        input: histogram('apiserver_client_certificate_expiration_seconds', [], CERT_BOUNDS, 3000, 10, 20),
        evalTime: '10m',
        fires: [
          firing({ severity: 'warning', within: '7 days', instance: 'gatehouse-0:6443' }),
          firing({ severity: 'critical', within: '24 hours', instance: 'gatehouse-0:6443' }),
        ],
      },
      {
        what: 'certificates with three days left fire the warning only',
        input: histogram('apiserver_client_certificate_expiration_seconds', [], CERT_BOUNDS, 3 * 86400, 10, 20),
        evalTime: '10m',
        fires: [firing({ severity: 'warning', within: '7 days', instance: 'gatehouse-0:6443' })],
      },
      {
        what: 'certificates with a year left stay quiet',
        input: histogram('apiserver_client_certificate_expiration_seconds', [], CERT_BOUNDS, 31000000, 10, 20),
        evalTime: '10m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseWebhookErrors',
    summary: 'A webhook Gatehouse calls is failing.',
    description: 'More than 10% of the calls to a {{ $labels.webhook }} webhook failed over the last 5 minutes.',
    rules: WEBHOOK_ERRORS.map((w) => ({ expr: w.expr, for: '5m', labels: { severity: 'warning', webhook: w.webhook } })),
    runbook: {
      meaning:
        'Calls to a webhook fail (no answer, a timeout, a non-2xx code, an answer Gatehouse cannot use). What clients see depends on the webhook: token — its tokens are refused (401); authorization — requests it would decide are refused or fall to the next authorizer; admission — writes fail when its failurePolicy is Fail; conversion — reads and writes of the custom resource fail.',
      confirm: [
        `sum by (code) (rate(${sel('apiserver_delegated_authn_request_total')}[5m]))  # token webhook`,
        `sum by (name, result) (rate(${sel('apiserver_authorization_webhook_evaluations_total')}[5m]))  # authorization webhook`,
        `sum by (name, code, type) (rate(${sel('apiserver_admission_webhook_request_total')}[5m]))  # admission webhooks`,
        `sum by (result, failure_type) (rate(${sel('apiserver_conversion_webhook_request_total')}[5m]))  # conversion webhooks`,
        'kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations  # the admission webhooks and their services',
      ],
      actions: [
        "Check the webhook's service and pods; Gatehouse's log names each failed call and its error.",
        'An admission webhook that blocks writes while it is down can be set to `failurePolicy: Ignore`, or its configuration deleted, until it is back.',
        'A conversion webhook failure blocks its custom resource: restore the webhook before changing the CRD.',
      ],
    },
    tests: [
      {
        what: 'each kind failing fires with its kind',
        input: WEBHOOK_ERRORS.flatMap((w) => w.fire),
        evalTime: '15m',
        fires: [
          firing({ severity: 'warning', webhook: 'token' }),
          firing({ severity: 'warning', webhook: 'authorization', name: 'authz' }),
          firing({ severity: 'warning', webhook: 'admission', name: 'hook.example.com' }),
          firing({ severity: 'warning', webhook: 'conversion' }),
        ],
      },
      { what: 'successful calls stay quiet', input: WEBHOOK_ERRORS.flatMap((w) => w.quiet), evalTime: '15m', fires: [] },
    ],
  },
  {
    name: 'GatehouseWebhookLatency',
    summary: 'A webhook Gatehouse calls is slow.',
    description: 'The 99th percentile of calls to a {{ $labels.webhook }} webhook took more than 1 second over the last 5 minutes.',
    rules: WEBHOOK_LATENCY.map((w) => ({ expr: p99Over(w.metric, w.by, 1), for: '10m', labels: { severity: 'warning', webhook: w.webhook } })),
    runbook: {
      meaning:
        'Every request that needs the webhook waits for it: token and authorization webhooks delay the requests they decide (until their answers are cached), admission webhooks delay writes, conversion webhooks delay reads and writes of their custom resource. Latency SLO alerts do not see admission webhook time (the SLI leaves it out); clients do.',
      confirm: [
        `histogram_quantile(0.99, sum by (le) (rate(${sel('apiserver_delegated_authn_request_duration_seconds_bucket')}[5m])))  # token webhook`,
        `histogram_quantile(0.99, sum by (name, le) (rate(${sel('apiserver_authorization_webhook_duration_seconds_bucket')}[5m])))  # authorization webhook`,
        `histogram_quantile(0.99, sum by (name, le) (rate(${sel('apiserver_admission_webhook_admission_duration_seconds_bucket')}[5m])))  # admission webhooks`,
        `histogram_quantile(0.99, sum by (le) (rate(${sel('apiserver_conversion_webhook_duration_seconds_bucket')}[5m])))  # conversion webhooks`,
      ],
      actions: [
        "Look at the webhook's own latency and load; scale it, or narrow its rules (admission webhooks: `rules`, `namespaceSelector`, `objectSelector`, `matchConditions`) so it is called less.",
        "Lower the webhook's `timeoutSeconds` so that a slow webhook fails fast under its failurePolicy.",
      ],
    },
    tests: [
      {
        what: 'each kind answering in 3 s fires with its kind',
        input: WEBHOOK_LATENCY.flatMap((w) => histogram(w.metric, w.labels, w.bounds, 3, 10, 30)),
        evalTime: '20m',
        fires: [
          firing({ severity: 'warning', webhook: 'token' }),
          firing({ severity: 'warning', webhook: 'authorization', name: 'authz' }),
          firing({ severity: 'warning', webhook: 'admission', name: 'hook.example.com' }),
          firing({ severity: 'warning', webhook: 'conversion' }),
        ],
      },
      {
        what: 'answers in 50 ms stay quiet',
        input: WEBHOOK_LATENCY.flatMap((w) => histogram(w.metric, w.labels, w.bounds, 0.05, 10, 30)),
        evalTime: '20m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseAPFRejections',
    summary: 'Priority and fairness is rejecting requests.',
    description: 'Gatehouse has rejected requests of priority level {{ $labels.priority_level }} ({{ $labels.reason }}) for 15 minutes.',
    rules: [
      {
        expr: `sum by (job, priority_level, reason) (${rate(sel('apiserver_flowcontrol_rejected_requests_total'), '5m')}) > 0.1`,
        for: '15m',
        labels: { severity: 'warning' },
      },
    ],
    runbook: {
      meaning:
        "Requests of a priority level are answered 429 because its queues are full, they waited too long, or the level's concurrency is exhausted. Clients retry with backoff; controllers of that level fall behind.",
      confirm: [
        `sum by (priority_level, flow_schema, reason) (rate(${sel('apiserver_flowcontrol_rejected_requests_total')}[5m]))`,
        `${sel('apiserver_flowcontrol_current_limit_seats')}  # the level's seats`,
        'kubectl get --raw /debug/api_priority_and_fairness/dump_priority_levels',
        'kubectl get flowschemas,prioritylevelconfigurations',
      ],
      actions: [
        'Find the flow that fills the level (`flow_schema` of the rejections; the audit log by user agent): a misbehaving client is better isolated in its own FlowSchema than given more seats.',
        "If the load is legitimate, raise the level's `nominalConcurrencyShares` or the server's `--max-requests-inflight` / `--max-mutating-requests-inflight`.",
      ],
    },
    tests: [
      {
        what: 'one rejection a second for 20 minutes fires',
        input: [
          {
            series: s(
              'apiserver_flowcontrol_rejected_requests_total',
              'priority_level="workload-low"',
              'flow_schema="service-accounts"',
              'reason="queue-full"',
            ),
            values: '0+60x40',
          },
        ],
        evalTime: '30m',
        fires: [firing({ severity: 'warning', priority_level: 'workload-low', reason: 'queue-full' })],
      },
      {
        what: 'a burst of rejections for 5 minutes stays quiet',
        input: [
          {
            series: s(
              'apiserver_flowcontrol_rejected_requests_total',
              'priority_level="workload-low"',
              'flow_schema="service-accounts"',
              'reason="queue-full"',
            ),
            values: '0+60x5 300x35',
          },
        ],
        evalTime: '30m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseAuditErrors',
    summary: 'Gatehouse is failing to write audit events.',
    description: 'The {{ $labels.plugin }} audit backend failed to record events for 5 minutes: the audit trail has gaps.',
    rules: [{ expr: `sum by (job, plugin) (${rate(sel('apiserver_audit_error_total'), '5m')}) > 0`, for: '5m', labels: { severity: 'critical' } }],
    runbook: {
      meaning: 'Audit events are lost: the log file cannot be written (disk full, permissions) or the audit webhook refuses or drops them.',
      confirm: [
        `sum by (plugin) (rate(${sel('apiserver_audit_error_total')}[5m]))`,
        `rate(${sel('apiserver_audit_event_total')}[5m])  # events generated`,
        'df -h <the --audit-log-path directory>  # on the host',
      ],
      actions: [
        'For the log backend, free space or fix the directory’s permissions; for the webhook backend, check the audit webhook’s service and its answers.',
        'Keep the gap on record: compliance may require reporting which interval has no audit trail.',
      ],
    },
    tests: [
      {
        what: 'a steady failure fires',
        input: [{ series: s('apiserver_audit_error_total', 'plugin="log"'), values: '0+10x20' }],
        evalTime: '15m',
        fires: [firing({ severity: 'critical', plugin: 'log' })],
      },
      { what: 'no errors stay quiet', input: [{ series: s('apiserver_audit_error_total', 'plugin="log"'), values: '0x20' }], evalTime: '15m', fires: [] },
    ],
  },
  {
    name: 'GatehouseStoreLatency',
    summary: "Gatehouse's store is slow.",
    description: 'The 99th percentile of {{ $labels.operation }} calls for {{ $labels.type }} took more than 1 second over the last 5 minutes.',
    rules: [
      {
        expr: `histogram_quantile(0.99, sum by (job, operation, type, le) (${rate(sel('etcd_request_duration_seconds_bucket'), '5m')})) > 1`,
        for: '10m',
        labels: { severity: 'warning' },
      },
    ],
    runbook: {
      meaning:
        'Calls to the store (the file store, Redis) are slow: every read and write of the resource waits on them, and the latency objective burns (GatehouseLatencyBudgetBurn).',
      confirm: [
        `histogram_quantile(0.99, sum by (operation, type, le) (rate(${sel('etcd_request_duration_seconds_bucket')}[5m])))`,
        `${sel('apiserver_storage_objects')}  # a type grown large lists slowly`,
        "redis-cli --latency  # on Redis, from Gatehouse's host",
      ],
      actions: [
        "Redis: check its CPU, memory (evictions) and the network to it; the file store: the disk's latency (`iostat`), and free space.",
        'A single type slow on list: its object count and the clients listing it without a limit.',
      ],
    },
    tests: [
      {
        what: 'creates of 2 s fire',
        input: histogram('etcd_request_duration_seconds', ['operation="create"', 'type="configmaps"'], STORE_BOUNDS, 2, 10, 30),
        evalTime: '20m',
        fires: [firing({ severity: 'warning', operation: 'create', type: 'configmaps' })],
      },
      {
        what: 'creates of 10 ms stay quiet',
        input: histogram('etcd_request_duration_seconds', ['operation="create"', 'type="configmaps"'], STORE_BOUNDS, 0.01, 10, 30),
        evalTime: '20m',
        fires: [],
      },
    ],
  },
  {
    name: 'GatehouseDown',
    summary: 'Gatehouse is not scraped.',
    description: 'No Gatehouse target has answered a scrape for 5 minutes.',
    rules: [{ expr: `absent(${sel('up')} == 1)`, for: '5m', labels: { severity: 'critical' } }],
    runbook: {
      meaning: "Prometheus reaches no Gatehouse: it is down, or its /metrics refuses Prometheus's credentials, or the scrape configuration no longer finds it.",
      confirm: [
        `up{job="${JOB}"}  # 0: the scrape failed; absent: no target`,
        "Prometheus's targets page (/targets): the scrape error (connection refused, 401, 403, TLS)",
        'kubectl get --raw /readyz  # with your own credentials',
      ],
      actions: [
        'Connection refused or timeouts: the process or its pod is down (`kubectl -n <namespace> get pods`, its log).',
        "401 or 403: Prometheus's client certificate expired or its ServiceAccount lost the `/metrics` grant (k8s/monitoring/rbac.yaml).",
      ],
    },
    tests: [
      { what: 'failed scrapes fire', input: [{ series: s('up'), values: '0x20' }], evalTime: '10m', fires: [{ severity: 'critical' }] },
      { what: 'answered scrapes stay quiet', input: [{ series: s('up'), values: '1x20' }], evalTime: '10m', fires: [] },
    ],
  },
  {
    name: 'GatehouseRestarting',
    summary: 'Gatehouse keeps restarting.',
    description: 'Gatehouse at {{ $labels.instance }} started more than twice in 30 minutes.',
    rules: [{ expr: `changes(${sel('process_start_time_seconds')}[30m]) > 2`, labels: { severity: 'warning' } }],
    runbook: {
      meaning: 'The process exits and is started again: each restart drops its connections and watches, and its clients relist.',
      confirm: [
        `changes(${sel('process_start_time_seconds')}[30m])`,
        'kubectl -n <namespace> get pods  # restarts and last state',
        'kubectl -n <namespace> logs <pod> --previous',
      ],
      actions: [
        'OOMKilled: raise its memory limit, or find what holds memory (`process_resident_memory_bytes`, large LISTs).',
        'A configuration error at start (a flag, a file) is in the previous log: fix it and restart.',
      ],
    },
    tests: [
      {
        what: 'a restart every 5 minutes fires',
        input: [{ series: s('process_start_time_seconds'), values: '100+300x30' }],
        evalTime: '25m',
        fires: [{ job: JOB, instance: 'gatehouse-0:6443', severity: 'warning' }],
      },
      { what: 'a steady process stays quiet', input: [{ series: s('process_start_time_seconds'), values: '100x30' }], evalTime: '25m', fires: [] },
    ],
  },
  {
    name: 'GatehouseTerminatedRequests',
    summary: 'Gatehouse is ending many requests in self-defense.',
    description: 'Gatehouse ended more than 20% of its requests itself (429 of its concurrency limits, 504 at their deadline) over the last 10 minutes.',
    rules: [
      {
        expr: `sum by (job) (${rate(sel('apiserver_request_terminations_total'), '10m')}) / (sum by (job) (${rate(sel('apiserver_request_total'), '10m')}) + sum by (job) (${rate(sel('apiserver_request_terminations_total'), '10m')})) > 0.2`,
        for: '5m',
        labels: { severity: 'warning' },
      },
    ],
    runbook: {
      meaning:
        'Requests are answered 429 (concurrency limits, priority and fairness) or 504 (their deadline passed) by Gatehouse itself, not by what serves them.',
      confirm: [
        `sum by (code, verb, resource) (rate(${sel('apiserver_request_terminations_total')}[10m]))`,
        `sum by (priority_level, reason) (rate(${sel('apiserver_flowcontrol_rejected_requests_total')}[10m]))`,
      ],
      actions: [
        '429s: see GatehouseAPFRejections. 504s: what the requests wait on (the store: GatehouseStoreLatency; an aggregated API; a webhook: GatehouseWebhookLatency).',
      ],
    },
    tests: [
      {
        what: 'a third of the requests ended by the server fires',
        input: [
          { series: s('apiserver_request_terminations_total', 'verb="GET"', 'code="429"'), values: '0+10x30' },
          { series: s('apiserver_request_total', 'verb="GET"', 'code="429"'), values: '0+10x30' },
          { series: s('apiserver_request_total', 'verb="GET"', 'code="200"'), values: '0+10x30' },
        ],
        evalTime: '20m',
        fires: [firing({ severity: 'warning' })],
      },
      {
        what: 'no terminations stay quiet',
        input: [
          { series: s('apiserver_request_terminations_total', 'verb="GET"', 'code="429"'), values: '0x30' },
          { series: s('apiserver_request_total', 'verb="GET"', 'code="200"'), values: '0+10x30' },
        ],
        evalTime: '20m',
        fires: [],
      },
    ],
  },
];
