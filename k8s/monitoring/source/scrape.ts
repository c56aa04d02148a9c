// How Prometheus reaches Gatehouse's /metrics: a scrape job with a client
// certificate (mTLS; its subject's organization `system:monitoring` is the
// group kube's bootstrap policy lets read /metrics), and for
// prometheus-operator a ServiceMonitor with a ServiceAccount token, with the
// RBAC that grants that ServiceAccount `get` on /metrics.
import { JOB } from './promql.js';

export interface ScrapeTarget {
  /** host:port of Gatehouse's secure port. */
  target: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** The name Gatehouse's serving certificate carries, when the target's host is not it. */
  serverName?: string;
  interval?: string;
}

export const SHIPPED_TARGET: ScrapeTarget = {
  target: 'gatehouse.gatehouse.svc:443',
  caFile: '/etc/prometheus/secrets/gatehouse-metrics/ca.crt',
  certFile: '/etc/prometheus/secrets/gatehouse-metrics/tls.crt',
  keyFile: '/etc/prometheus/secrets/gatehouse-metrics/tls.key',
  interval: '30s',
};

/** One `scrape_configs` entry; the real-Prometheus test scrapes with it too. */
export function scrapeJob(t: ScrapeTarget): Record<string, unknown> {
  return {
    job_name: JOB,
    scheme: 'https',
    metrics_path: '/metrics',
    ...(t.interval ? { scrape_interval: t.interval } : {}),
    tls_config: { ca_file: t.caFile, cert_file: t.certFile, key_file: t.keyFile, ...(t.serverName ? { server_name: t.serverName } : {}) },
    static_configs: [{ targets: [t.target] }],
  };
}

const METRICS_SA = { namespace: 'monitoring', name: 'prometheus' };
export const METRICS_TOKEN_SECRET = 'gatehouse-metrics-token';

/** Applied to Gatehouse: the ServiceAccount Prometheus authenticates as, its long-lived token, and `get` on /metrics. */
export const rbac: Array<Record<string, unknown>> = [
  { apiVersion: 'v1', kind: 'Namespace', metadata: { name: METRICS_SA.namespace } },
  { apiVersion: 'v1', kind: 'ServiceAccount', metadata: METRICS_SA },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { ...METRICS_SA, name: METRICS_TOKEN_SECRET, annotations: { 'kubernetes.io/service-account.name': METRICS_SA.name } },
    type: 'kubernetes.io/service-account-token',
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'gatehouse:metrics-reader' },
    rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }],
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'gatehouse:metrics-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gatehouse:metrics-reader' },
    subjects: [{ kind: 'ServiceAccount', ...METRICS_SA }],
  },
];

/** For prometheus-operator, in the cluster where Prometheus runs: the Service named `gatehouse` (the job label the rules select). */
export const serviceMonitor: Record<string, unknown> = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'ServiceMonitor',
  metadata: { name: JOB, namespace: METRICS_SA.namespace, labels: { 'app.kubernetes.io/name': JOB } },
  spec: {
    namespaceSelector: { matchNames: ['gatehouse'] },
    selector: { matchLabels: { 'app.kubernetes.io/name': JOB } },
    endpoints: [
      {
        port: 'https',
        scheme: 'https',
        path: '/metrics',
        interval: '30s',
        authorization: { type: 'Bearer', credentials: { name: METRICS_TOKEN_SECRET, key: 'token' } },
        tlsConfig: { ca: { secret: { name: METRICS_TOKEN_SECRET, key: 'ca.crt' } }, serverName: 'gatehouse.gatehouse.svc' },
      },
    ],
  },
};
