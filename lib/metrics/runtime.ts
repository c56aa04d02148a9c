// The process's own series: prom-client's default collectors (process_* as
// client_golang's process collector names them, and Node.js's event-loop lag,
// GC, heap and handles in place of Go's runtime series) and
// gatehouse_build_info. Started once per process, by whatever serves /metrics.
import { collectDefaultMetrics, Gauge, Registry, type Metric } from 'prom-client';
import { KUBE_MAJOR, KUBE_MINOR } from '../discovery/version.js';
import { registry } from './registry.js';

let started = false;

/** Registers the process and runtime series and the build info on the process's registry; later calls do nothing. */
export function collectRuntimeMetrics(): void {
  if (started) return;
  started = true;
  // The collectors register on a registry of their own first, then move here with a declared level:
  // their HELP stays as the client library writes it, as kube's process_* series carry no level.
  const scratch = new Registry();
  collectDefaultMetrics({ register: scratch });
  for (const m of scratch.getMetricsAsArray() as unknown as Metric[]) {
    registry.declare((m as unknown as { name: string }).name, '', { stabilityLevel: 'ALPHA' });
    registry.registerMetric(m);
  }
  new Gauge(
    registry.declared({
      name: 'gatehouse_build_info',
      help: 'A metric with a constant 1 value labeled by the Kubernetes version Gatehouse serves, the Node.js version and the platform it runs on.',
      stabilityLevel: 'ALPHA',
      labelNames: ['git_version', 'major', 'minor', 'node_version', 'platform'] as const,
    }),
  ).set(
    {
      git_version: `v${KUBE_MAJOR}.${KUBE_MINOR}.0-gatehouse`,
      major: KUBE_MAJOR,
      minor: KUBE_MINOR,
      node_version: process.version,
      platform: `${process.platform}/${process.arch}`,
    },
    1,
  );
}
