// Metrics of the authentication configuration controller, named and
// labelled as kube-apiserver names them.
import { Counter, Gauge } from 'prom-client';
import { registry } from './registry.js';

const reloadsTotal = new Counter(
  registry.declared({
    name: 'apiserver_authentication_config_controller_automatic_reloads_total',
    help: 'Total number of automatic reloads of authentication configuration split by status and apiserver identity.',
    stabilityLevel: 'ALPHA',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  }),
);

const lastReload = new Gauge(
  registry.declared({
    name: 'apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds',
    help: 'Timestamp of the last automatic reload of authentication configuration split by status and apiserver identity.',
    stabilityLevel: 'ALPHA',
    labelNames: ['status', 'apiserver_id_hash'] as const,
  }),
);

const lastConfigInfo = new Gauge(
  registry.declared({
    name: 'apiserver_authentication_config_controller_last_config_info',
    help: 'Information about the last applied authentication configuration with hash as label, split by apiserver identity.',
    stabilityLevel: 'ALPHA',
    labelNames: ['apiserver_id_hash', 'hash'] as const,
  }),
);

export type ReloadStatus = 'success' | 'failure';

export interface AuthnConfigMetrics {
  reload(status: ReloadStatus, atMs: number): void;
  configApplied(hash: string): void;
}

/** Metrics for one server identity (`apiserver_id_hash`). */
export function authnConfigMetrics(apiServerIdHash: string): AuthnConfigMetrics {
  let previousHash: string | undefined;
  return {
    reload(status, atMs) {
      reloadsTotal.inc({ status, apiserver_id_hash: apiServerIdHash });
      lastReload.set({ status, apiserver_id_hash: apiServerIdHash }, atMs / 1000);
    },
    configApplied(hash) {
      if (previousHash !== undefined) lastConfigInfo.remove({ apiserver_id_hash: apiServerIdHash, hash: previousHash });
      previousHash = hash;
      lastConfigInfo.set({ apiserver_id_hash: apiServerIdHash, hash }, 1);
    },
  };
}
