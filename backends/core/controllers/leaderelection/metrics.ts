// client-go's leader election metrics, as kube-controller-manager exposes
// them on /metrics: whether this process holds the lease, and how often the
// leader's optimistic renewal failed and fell back to reading the lease.
import { Counter, Gauge } from 'prom-client';
import { registry } from '../../../../lib/metrics/registry.js';

const masterStatus = new Gauge(
  registry.declared({
    name: 'leader_election_master_status',
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    stabilityLevel: 'ALPHA',
    labelNames: ['name'] as const,
  }),
);

const slowpath = new Counter(
  registry.declared({
    name: 'leader_election_slowpath_total',
    help: "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease. Please make sure to group by name.",
    stabilityLevel: 'ALPHA',
    labelNames: ['name'] as const,
  }),
);

export const electionMetrics = {
  leading(name: string, on: boolean): void {
    masterStatus.set({ name }, on ? 1 : 0);
  },
  slowpath(name: string): void {
    slowpath.inc({ name });
  },
};
