// Gatehouse's Grafana dashboards: overview, authentication and authorization,
// aggregation, storage. Every panel query reads only series Gatehouse exports
// (or the rules' recordings), checked by test/monitoring.
import { rate, sel } from './promql.js';
import { errorRatio, slowRatio } from './rules.js';

export interface Panel {
  title: string;
  unit: string;
  /** One query per line of the panel, with its legend. */
  queries: Array<{ expr: string; legend: string }>;
  description?: string;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  json(): Record<string, unknown>;
}

const p99 = (metric: string, by: string[], ...matchers: string[]) =>
  `histogram_quantile(0.99, sum by (${[...by, 'le'].join(', ')}) (${rate(sel(`${metric}_bucket`, ...matchers), '5m')}))`;
const q = (expr: string, legend: string) => ({ expr, legend });

/** `expr` (which has a `group` label) kept for the groups of APIServices the availability controller tracks: the aggregated ones. */
const aggregated = (expr: string) =>
  `${expr} and on (group) label_replace(max by (name) (${sel('aggregator_unavailable_apiservice')}), "group", "$1", "name", "[^.]+\\\\.(.+)")`;

function dashboard(uid: string, title: string, panels: Panel[]): Dashboard {
  return {
    uid,
    title,
    panels,
    json: () => ({
      uid,
      title,
      tags: ['gatehouse'],
      editable: true,
      schemaVersion: 39,
      time: { from: 'now-1h', to: 'now' },
      refresh: '30s',
      templating: { list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {}, hide: 0 }] },
      panels: panels.map((p, i) => ({
        id: i + 1,
        type: 'timeseries',
        title: p.title,
        ...(p.description ? { description: p.description } : {}),
        datasource: { type: 'prometheus', uid: '${datasource}' },
        gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
        fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
        options: { legend: { displayMode: 'list', placement: 'bottom' }, tooltip: { mode: 'multi' } },
        targets: p.queries.map((x, j) => ({
          datasource: { type: 'prometheus', uid: '${datasource}' },
          expr: x.expr,
          legendFormat: x.legend,
          refId: String.fromCharCode(65 + j),
        })),
      })),
    }),
  };
}

export const dashboards: Dashboard[] = [
  dashboard('gatehouse-overview', 'Gatehouse / Overview', [
    { title: 'Requests by verb', unit: 'reqps', queries: [q(`sum by (verb) (${rate(sel('apiserver_request_total'), '5m')})`, '{{verb}}')] },
    { title: 'Requests by code', unit: 'reqps', queries: [q(`sum by (code) (${rate(sel('apiserver_request_total'), '5m')})`, '{{code}}')] },
    {
      title: 'Error and slow ratios (SLO)',
      unit: 'percentunit',
      description: "Share of requests answered 5xx, and share slower than kube's latency objective; the budget is 1%.",
      queries: [q(errorRatio('5m'), 'errors'), q(slowRatio('5m'), 'slow')],
    },
    {
      title: 'Latency p99 by verb (SLI)',
      unit: 's',
      description: 'Without admission webhook and priority-and-fairness queue time.',
      queries: [q(p99('apiserver_request_sli_duration_seconds', ['verb']), '{{verb}}')],
    },
    {
      title: 'In flight',
      unit: 'short',
      queries: [
        q(`sum by (request_kind) (${sel('apiserver_current_inflight_requests')})`, '{{request_kind}}'),
        q(`sum by (verb) (${sel('apiserver_longrunning_requests')})`, 'long-running {{verb}}'),
      ],
    },
    { title: 'Terminated requests', unit: 'reqps', queries: [q(`sum by (code) (${rate(sel('apiserver_request_terminations_total'), '5m')})`, '{{code}}')] },
    {
      title: 'Priority and fairness: dispatched',
      unit: 'reqps',
      queries: [q(`sum by (priority_level) (${rate(sel('apiserver_flowcontrol_dispatched_requests_total'), '5m')})`, '{{priority_level}}')],
    },
    {
      title: 'Priority and fairness: queue wait p99',
      unit: 's',
      queries: [q(p99('apiserver_flowcontrol_request_wait_duration_seconds', ['priority_level']), '{{priority_level}}')],
    },
    {
      title: 'Priority and fairness: seats',
      unit: 'short',
      queries: [
        q(`sum by (priority_level) (${sel('apiserver_flowcontrol_current_limit_seats')})`, 'limit {{priority_level}}'),
        q(`sum by (priority_level) (${sel('apiserver_flowcontrol_current_executing_requests')})`, 'executing {{priority_level}}'),
      ],
    },
    {
      title: 'Process',
      unit: 'short',
      queries: [
        q(`${rate(sel('process_cpu_seconds_total'), '5m')}`, 'CPU {{instance}}'),
        q(`${sel('process_resident_memory_bytes')} / 2^30`, 'RSS GiB {{instance}}'),
        q(`${sel('nodejs_eventloop_lag_p99_seconds')} * 1000`, 'event-loop lag p99 ms {{instance}}'),
        q(`${rate(sel('nodejs_gc_duration_seconds_sum'), '5m')}`, 'GC s/s {{instance}}'),
      ],
    },
  ]),
  dashboard('gatehouse-auth', 'Gatehouse / Authentication and authorization', [
    { title: 'Authentication attempts', unit: 'reqps', queries: [q(`sum by (result) (${rate(sel('authentication_attempts'), '5m')})`, '{{result}}')] },
    { title: 'Authentication latency p99', unit: 's', queries: [q(p99('authentication_duration_seconds', ['result']), '{{result}}')] },
    {
      title: 'Authorization decisions',
      unit: 'reqps',
      queries: [q(`sum by (type, decision) (${rate(sel('apiserver_authorization_decisions_total'), '5m')})`, '{{type}} {{decision}}')],
    },
    {
      title: 'Token cache',
      unit: 'reqps',
      queries: [
        q(`sum by (status) (${rate(sel('authentication_token_cache_request_total'), '5m')})`, '{{status}}'),
        q(`sum by (status) (${rate(sel('authentication_token_cache_fetch_total'), '5m')})`, 'fetch {{status}}'),
      ],
    },
    {
      title: 'Client certificates: remaining lifetime p1',
      unit: 's',
      queries: [q(`histogram_quantile(0.01, sum by (le) (${rate(sel('apiserver_client_certificate_expiration_seconds_bucket'), '5m')}))`, 'p1')],
    },
    {
      title: 'Admission webhook latency p99',
      unit: 's',
      queries: [q(p99('apiserver_admission_webhook_admission_duration_seconds', ['name', 'type']), '{{type}} {{name}}')],
    },
    {
      title: 'Token and authorization webhooks',
      unit: 's',
      description: 'Round trips to the token (--authentication-token-webhook-config-file) and authorization (--authorization-webhook-config-file) webhooks.',
      queries: [
        q(p99('apiserver_delegated_authn_request_duration_seconds', ['code']), 'token p99 {{code}}'),
        q(p99('apiserver_authorization_webhook_duration_seconds', ['name', 'result']), 'authorization p99 {{name}} {{result}}'),
      ],
    },
  ]),
  dashboard('gatehouse-aggregation', 'Gatehouse / Aggregation', [
    {
      title: 'APIService availability',
      unit: 'short',
      description: '1 while available, 0 while not.',
      queries: [q(`1 - max by (name) (${sel('aggregator_unavailable_apiservice')})`, '{{name}}')],
    },
    {
      title: 'APIService unavailability transitions',
      unit: 'short',
      queries: [q(`sum by (name, reason) (increase(${sel('aggregator_unavailable_apiservice_total')}[1h]))`, '{{name}} {{reason}}')],
    },
    {
      title: 'Aggregated requests by group',
      unit: 'reqps',
      description: 'Requests for the groups of APIServices served by other servers.',
      queries: [q(aggregated(`sum by (group, code) (${rate(sel('apiserver_request_total'), '5m')})`), '{{group}} {{code}}')],
    },
    {
      title: 'Aggregated latency p99 by group',
      unit: 's',
      queries: [q(aggregated(p99('apiserver_request_duration_seconds', ['group'])), '{{group}}')],
    },
    {
      title: 'Aggregated errors by group',
      unit: 'reqps',
      queries: [q(aggregated(`sum by (group, code) (${rate(sel('apiserver_request_total', 'code=~"5.."'), '5m')})`), '{{group}} {{code}}')],
    },
  ]),
  dashboard('gatehouse-storage', 'Gatehouse / Storage', [
    { title: 'Store operations', unit: 'ops', queries: [q(`sum by (operation) (${rate(sel('etcd_request_duration_seconds_count'), '5m')})`, '{{operation}}')] },
    { title: 'Store latency p99', unit: 's', queries: [q(p99('etcd_request_duration_seconds', ['operation']), '{{operation}}')] },
    { title: 'Objects by resource', unit: 'short', queries: [q(`topk(20, max by (resource) (${sel('apiserver_storage_objects')}))`, '{{resource}}')] },
    { title: 'Store size', unit: 'bytes', queries: [q(`sum by (instance) (${sel('apiserver_storage_size_bytes')})`, '{{instance}}')] },
    { title: 'Watchers', unit: 'short', queries: [q(`sum by (kind) (${sel('apiserver_registered_watchers')})`, '{{kind}}')] },
    {
      title: 'Watch events',
      unit: 'short',
      queries: [
        q(`sum by (resource) (${rate(sel('apiserver_watch_events_total'), '5m')})`, 'events/s {{resource}}'),
        q(`sum by (resource) (${rate(sel('apiserver_watch_events_sizes_sum'), '5m')})`, 'bytes/s {{resource}}'),
      ],
    },
  ]),
];

/** Every query of every panel, named for error messages. */
export function panelQueries(): Array<{ where: string; expr: string }> {
  return dashboards.flatMap((d) => d.panels.flatMap((p) => p.queries.map((x) => ({ where: `${d.uid} / ${p.title} / ${x.legend}`, expr: x.expr }))));
}
