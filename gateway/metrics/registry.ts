// The process's registry lives in lib/metrics (the backends record on it too); re-exported for the gateway's metric modules.
export { registry, metricsText, metricsBody, apiServerIdHash } from '../../lib/metrics/registry.js';
export { collectRuntimeMetrics } from '../../lib/metrics/runtime.js';
