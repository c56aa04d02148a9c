// kube's gauge of deprecated APIs that were requested (1 once requested), joinable with apiserver_request_total.
import { Gauge } from 'prom-client';
import { registry } from './registry.js';

const requestedDeprecated = new Gauge(
  registry.declared({
    name: 'apiserver_requested_deprecated_apis',
    help: 'Gauge of deprecated APIs that have been requested, broken out by API group, version, resource, subresource, and removed_release.',
    stabilityLevel: 'STABLE',
    labelNames: ['group', 'version', 'resource', 'subresource', 'removed_release'] as const,
  }),
);

export function deprecatedApiRequested(group: string, version: string, resource: string, subresource: string, removedRelease: string): void {
  requestedDeprecated.set({ group, version, resource, subresource, removed_release: removedRelease }, 1);
}
