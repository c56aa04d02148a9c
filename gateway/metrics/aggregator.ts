// kube-aggregator's availability metrics: a gauge per APIService (1 = unavailable) and a counter of the transitions to unavailable by reason.
import { Counter, Gauge } from 'prom-client';
import { registry } from './registry.js';

const unavailable = new Gauge(
  registry.declared({
    name: 'aggregator_unavailable_apiservice',
    help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name'] as const,
  }),
);
const unavailableTotal = new Counter(
  registry.declared({
    name: 'aggregator_unavailable_apiservice_total',
    help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
    stabilityLevel: 'ALPHA',
    labelNames: ['name', 'reason'] as const,
  }),
);

/** The availability the controller found for an APIService; `changed` when it differs from what the object said. */
export function recordAvailability(name: string, available: boolean, reason: string, changed: boolean): void {
  unavailable.set({ name }, available ? 0 : 1);
  if (!available && changed) unavailableTotal.inc({ name, reason });
}

/** An APIService that is gone (or served locally now) leaves the gauge. */
export function forgetApiService(name: string): void {
  unavailable.remove({ name });
}
