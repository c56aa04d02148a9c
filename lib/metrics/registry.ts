// The process's one Prometheus registry; every metric registers here and
// GET /metrics serves it in the text format.
import { createHash } from 'node:crypto';
import { Registry } from 'prom-client';

export const registry = new Registry();

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** kube's `apiserver_id_hash` label value: `sha256:` + hex digest of the server's identity. */
export function apiServerIdHash(apiServerId: string): string {
  return `sha256:${createHash('sha256').update(apiServerId).digest('hex')}`;
}
