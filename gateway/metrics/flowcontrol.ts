// API Priority and Fairness metrics, named, labelled and bucketed as
// kube-apiserver's (k8s.io/apiserver/pkg/util/flowcontrol/metrics). A
// request only adds to plain numbers of its (priority level, flow schema)
// series, which the dispatcher looks up once per pair and keeps; the
// exposition is built from them when /metrics is read. (prom-client's
// labelled children validate and hash their label object on every call:
// four of those per request would cost the hot path more than the queuing.)
import type { Metric } from 'prom-client';
import { registry } from './registry.js';
import type { StabilityLevel } from '../../lib/metrics/lifecycle.js';

/** kube's requestDurationSecondsBuckets. */
export const WAIT_BUCKETS = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

export type RejectReason = 'queue-full' | 'time-out' | 'concurrency-limit' | 'cancelled';
const REASONS: readonly RejectReason[] = ['queue-full', 'time-out', 'concurrency-limit', 'cancelled'];

class Waits {
  readonly counts = new Array<number>(WAIT_BUCKETS.length).fill(0);
  sum = 0;
  count = 0;
  observe(seconds: number): void {
    this.sum += seconds;
    this.count++;
    for (let i = 0; i < WAIT_BUCKETS.length; i++) {
      if (seconds <= WAIT_BUCKETS[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

/** One (priority level, flow schema) pair's figures. */
export class FlowSeries {
  executing = 0;
  inqueue = 0;
  dispatched = 0;
  readonly rejected: Record<RejectReason, number> = { 'queue-full': 0, 'time-out': 0, 'concurrency-limit': 0, cancelled: 0 };
  readonly ran = new Waits();
  readonly refused = new Waits();
  constructor(
    readonly level: string,
    readonly schema: string,
  ) {}
}

const series = new Map<string, FlowSeries>();
const limits = new Map<string, { nominal: number; current: number }>();

/** The pair's series, shared by every server of the process (tests run several): their figures add up. */
export function flowSeries(level: string, schema: string): FlowSeries {
  const key = `${level}\u0000${schema}`;
  let s = series.get(key);
  if (!s) {
    s = new FlowSeries(level, schema);
    series.set(key, s);
  }
  return s;
}

/** A level's limits in seats (an unlimited server's Infinity is not exported). */
export function setLevelLimits(level: string, nominal: number, current: number): void {
  limits.set(level, { nominal, current });
}

type Value = { labels: Record<string, string>; value: number; metricName?: string };

/** A metric read from the numbers above when the registry is serialized. */
function collected(name: string, text: string, stabilityLevel: StabilityLevel, type: 'counter' | 'gauge' | 'histogram', values: () => Value[]): void {
  const help = registry.declare(name, text, { stabilityLevel });
  const metric = { name, help, type, aggregator: 'sum', get: () => ({ name, help, type, aggregator: 'sum', values: values() }) };
  registry.registerMetric(metric as unknown as Metric);
}

const pairs = (f: (s: FlowSeries) => number): Value[] =>
  [...series.values()].map((s) => ({ labels: { flow_schema: s.schema, priority_level: s.level }, value: f(s) }));

collected('apiserver_flowcontrol_rejected_requests_total', 'Number of requests rejected by API Priority and Fairness subsystem', 'BETA', 'counter', () =>
  [...series.values()].flatMap((s) =>
    REASONS.filter((r) => s.rejected[r] > 0).map((reason) => ({
      labels: { flow_schema: s.schema, priority_level: s.level, reason },
      value: s.rejected[reason],
    })),
  ),
);

collected('apiserver_flowcontrol_dispatched_requests_total', 'Number of requests executed by API Priority and Fairness subsystem', 'BETA', 'counter', () =>
  pairs((s) => s.dispatched),
);

collected(
  'apiserver_flowcontrol_current_executing_requests',
  'Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem',
  'BETA',
  'gauge',
  () => pairs((s) => s.executing),
);

collected(
  'apiserver_flowcontrol_current_inqueue_requests',
  'Number of requests currently pending in queues of the API Priority and Fairness subsystem',
  'BETA',
  'gauge',
  () => pairs((s) => s.inqueue),
);

const WAIT_NAME = 'apiserver_flowcontrol_request_wait_duration_seconds';
collected(WAIT_NAME, 'Length of time a request spent waiting in its queue', 'BETA', 'histogram', () => {
  const out: Value[] = [];
  for (const s of series.values()) {
    for (const [execute, w] of [
      ['true', s.ran],
      ['false', s.refused],
    ] as const) {
      if (w.count === 0) continue;
      const labels = { execute, flow_schema: s.schema, priority_level: s.level };
      let cumulative = 0;
      WAIT_BUCKETS.forEach((le, i) => {
        cumulative += w.counts[i]!;
        out.push({ metricName: `${WAIT_NAME}_bucket`, labels: { le: String(le), ...labels }, value: cumulative });
      });
      out.push({ metricName: `${WAIT_NAME}_bucket`, labels: { le: '+Inf', ...labels }, value: w.count });
      out.push({ metricName: `${WAIT_NAME}_sum`, labels, value: w.sum });
      out.push({ metricName: `${WAIT_NAME}_count`, labels, value: w.count });
    }
  }
  return out;
});

const levelValues = (f: (l: { nominal: number; current: number }) => number): Value[] =>
  [...limits].filter(([, l]) => Number.isFinite(f(l))).map(([level, l]) => ({ labels: { priority_level: level }, value: f(l) }));

collected('apiserver_flowcontrol_nominal_limit_seats', 'Nominal number of execution seats configured for each priority level', 'BETA', 'gauge', () =>
  levelValues((l) => l.nominal),
);

collected('apiserver_flowcontrol_current_limit_seats', 'current derived number of execution seats available to each priority level', 'ALPHA', 'gauge', () =>
  levelValues((l) => l.current),
);
