// Builds the auditor from the audit flags: nothing without a policy file (as
// kube-apiserver), otherwise the policy and one sink per configured backend.
// Every problem (a policy that does not parse, a webhook kubeconfig that does
// not load) is a start error naming the file.
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../lib/config/error.js';
import { clientFromKubeconfig } from '../../lib/kubeconfig/index.js';
import type { AuditOptions } from '../config/options/audit.js';
import { Auditor, type AuditSink } from './auditor.js';
import { LogBackend } from './logbackend.js';
import { AuditPolicy } from './policy.js';
import { WebhookBackend } from './webhookbackend.js';
import { Truncator } from './truncate.js';
import type { AuditEvent } from './event.js';

export { Auditor } from './auditor.js';
export { AuditPolicy } from './policy.js';

export async function buildAuditor(o: AuditOptions & { maxRequestBodyBytes: number }, log: (msg: string) => void): Promise<Auditor | undefined> {
  if (o.auditPolicyFile === undefined) {
    if (o.auditLogPath !== undefined || o.auditWebhookConfigFile !== undefined) log('audit: no --audit-policy-file given, no events will be recorded');
    return undefined;
  }
  let text: string;
  try {
    text = await readFile(o.auditPolicyFile, 'utf8');
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err), { file: `--audit-policy-file ${o.auditPolicyFile}` });
  }
  const policy = AuditPolicy.parse(text, `--audit-policy-file ${o.auditPolicyFile}`);
  const sinks: AuditSink[] = [];
  // The auditor counts and logs what the truncate plugin drops; it exists once the sinks do.
  let auditor: Auditor | undefined;
  const truncator = (enabled: boolean, maxEventSize: number, maxBatchSize: number) =>
    enabled ? new Truncator({ maxEventSize, maxBatchSize }, (evs: readonly AuditEvent[], why: string) => auditor?.lost('truncate', evs, why)) : undefined;
  if (o.auditLogPath !== undefined) {
    let backend: LogBackend;
    try {
      const truncate = truncator(o.auditLogTruncateEnabled, o.auditLogTruncateMaxEventSize, o.auditLogTruncateMaxBatchSize);
      backend = new LogBackend(
        o.auditLogPath,
        { maxAgeDays: o.auditLogMaxAge, maxBackups: o.auditLogMaxBackup, maxSizeMB: o.auditLogMaxSize, compress: o.auditLogCompress },
        Date.now,
        { format: o.auditLogFormat, ...(truncate ? { truncate } : {}) },
      );
    } catch (err) {
      throw new ConfigError(err instanceof Error ? err.message : String(err), { file: `--audit-log-path ${o.auditLogPath}` });
    }
    sinks.push({
      backend,
      mode: o.auditLogMode,
      batch: {
        bufferSize: o.auditLogBatchBufferSize,
        maxSize: o.auditLogBatchMaxSize,
        maxWaitMs: o.auditLogBatchMaxWaitMs,
        ...(o.auditLogBatchThrottleEnable ? { throttle: { qps: o.auditLogBatchThrottleQps, burst: o.auditLogBatchThrottleBurst } } : {}),
      },
    });
  }
  if (o.auditWebhookConfigFile !== undefined) {
    let client;
    try {
      client = await clientFromKubeconfig(o.auditWebhookConfigFile, { timeoutMs: 30_000, log, purpose: 'audit webhook' });
    } catch (err) {
      throw new ConfigError(err instanceof Error ? err.message : String(err), { file: `--audit-webhook-config-file ${o.auditWebhookConfigFile}` });
    }
    sinks.push({
      backend: new WebhookBackend(
        client,
        o.auditWebhookInitialBackoffMs,
        truncator(o.auditWebhookTruncateEnabled, o.auditWebhookTruncateMaxEventSize, o.auditWebhookTruncateMaxBatchSize),
      ),
      mode: o.auditWebhookMode,
      batch: {
        bufferSize: o.auditWebhookBatchBufferSize,
        maxSize: o.auditWebhookBatchMaxSize,
        maxWaitMs: o.auditWebhookBatchMaxWaitMs,
        ...(o.auditWebhookBatchThrottleEnable ? { throttle: { qps: o.auditWebhookBatchThrottleQps, burst: o.auditWebhookBatchThrottleBurst } } : {}),
      },
    });
  }
  if (sinks.length === 0) log('audit: --audit-policy-file given without --audit-log-path or --audit-webhook-config-file: events are evaluated, not written');
  auditor = new Auditor({ policy, sinks, log, maxBodyBytes: o.maxRequestBodyBytes });
  return auditor;
}
