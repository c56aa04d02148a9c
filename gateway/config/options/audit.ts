// Auditing (gateway/audit/): the policy, the log and webhook backends and their modes, as kube-apiserver's audit flags.
import { duration, flagsOf, int, oneOf, optionalPath, requires, BadValue, type OptionGroup } from './flag.js';

const MODES = ['batch', 'blocking', 'blocking-strict'] as const;
type AuditMode = (typeof MODES)[number];

export interface AuditOptions {
  readonly auditPolicyFile: string | undefined;
  /** `-` = standard output. */
  readonly auditLogPath: string | undefined;
  readonly auditLogMaxAge: number;
  readonly auditLogMaxBackup: number;
  readonly auditLogMaxSize: number;
  readonly auditLogFormat: 'json';
  readonly auditLogMode: AuditMode;
  readonly auditWebhookConfigFile: string | undefined;
  readonly auditWebhookMode: AuditMode;
  readonly auditWebhookInitialBackoffMs: number;
  readonly auditWebhookBatchBufferSize: number;
  readonly auditWebhookBatchMaxSize: number;
  readonly auditWebhookBatchMaxWaitMs: number;
}

const flag = flagsOf<AuditOptions>();
const count = (raw: string) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer');
const positive = (raw: string) => int(raw, 1, 2 ** 31 - 1, 'must be a positive integer');

export const audit: OptionGroup<AuditOptions> = {
  title: 'Audit',
  defaults: {
    auditPolicyFile: undefined, auditLogPath: undefined, auditLogMaxAge: 0, auditLogMaxBackup: 0, auditLogMaxSize: 0, auditLogFormat: 'json',
    auditLogMode: 'blocking', auditWebhookConfigFile: undefined, auditWebhookMode: 'batch', auditWebhookInitialBackoffMs: 10_000,
    auditWebhookBatchBufferSize: 10_000, auditWebhookBatchMaxSize: 400, auditWebhookBatchMaxWaitMs: 30_000,
  },
  flags: [
    flag({ name: 'audit-policy-file', key: 'auditPolicyFile', arg: 'file',
      help: 'audit.k8s.io/v1 Policy (YAML or JSON): which requests are audited at which level; without it nothing is audited', parse: optionalPath }),
    flag({ name: 'audit-log-path', key: 'auditLogPath', arg: 'file', help: 'Write audit events to this file, one JSON Event per line; - for standard output', parse: optionalPath }),
    flag({ name: 'audit-log-maxage', key: 'auditLogMaxAge', arg: 'days', help: 'Remove rotated audit logs older than this many days (0 = keep)', parse: count }),
    flag({ name: 'audit-log-maxbackup', key: 'auditLogMaxBackup', arg: 'int', help: 'Keep at most this many rotated audit logs (0 = all)', parse: count }),
    flag({ name: 'audit-log-maxsize', key: 'auditLogMaxSize', arg: 'MB', help: 'Rotate the audit log when it would pass this many megabytes (100 when only maxage or maxbackup is set)', parse: count }),
    flag({ name: 'audit-log-format', key: 'auditLogFormat', arg: 'json', help: 'Format of the audit log lines (json; kube\'s legacy text format is not supported)',
      parse: (raw) => { if (raw !== 'json') throw new BadValue(raw === 'legacy' ? 'legacy is not supported; use json' : 'must be json'); return 'json'; } }),
    flag({ name: 'audit-log-mode', key: 'auditLogMode', arg: MODES.join('|'), help: 'How events reach the log: in the request\'s path, strictly (a failed write fails the request), or in background batches', parse: oneOf(MODES) }),
    flag({ name: 'audit-webhook-config-file', key: 'auditWebhookConfigFile', arg: 'file', help: 'Kubeconfig naming the server that receives audit EventLists', parse: optionalPath }),
    flag({ name: 'audit-webhook-mode', key: 'auditWebhookMode', arg: MODES.join('|'), help: 'How events reach the audit webhook', parse: oneOf(MODES) }),
    flag({ name: 'audit-webhook-initial-backoff', key: 'auditWebhookInitialBackoffMs', arg: 'duration', help: 'Wait before the first retry of a failed audit webhook request (then ×1.5, five tries)',
      parse: (raw) => duration(raw, true) }),
    flag({ name: 'audit-webhook-batch-buffer-size', key: 'auditWebhookBatchBufferSize', arg: 'int', help: 'Events waiting for the audit webhook before new ones are dropped (batch mode)', parse: positive }),
    flag({ name: 'audit-webhook-batch-max-size', key: 'auditWebhookBatchMaxSize', arg: 'int', help: 'Most events in one audit webhook request (batch mode)', parse: positive }),
    flag({ name: 'audit-webhook-batch-max-wait', key: 'auditWebhookBatchMaxWaitMs', arg: 'duration', help: 'Longest an event waits for its batch to fill (batch mode)',
      parse: (raw) => duration(raw, true) }),
  ],
  checks(o, given) {
    const out: string[] = [];
    const logOnly = ['audit-log-maxage', 'audit-log-maxbackup', 'audit-log-maxsize', 'audit-log-mode'].filter((n) => given.has(n));
    if (logOnly.length > 0 && o.auditLogPath === undefined) out.push(requires(logOnly.map((n) => `--${n}`), '--audit-log-path'));
    if (o.auditLogPath === '-' && (o.auditLogMaxAge || o.auditLogMaxBackup || o.auditLogMaxSize)) out.push('--audit-log-path=- (standard output) cannot be rotated');
    const hookOnly = ['audit-webhook-mode', 'audit-webhook-initial-backoff', 'audit-webhook-batch-buffer-size', 'audit-webhook-batch-max-size', 'audit-webhook-batch-max-wait'].filter((n) => given.has(n));
    if (hookOnly.length > 0 && o.auditWebhookConfigFile === undefined) out.push(requires(hookOnly.map((n) => `--${n}`), '--audit-webhook-config-file'));
    if (o.auditWebhookBatchMaxSize > o.auditWebhookBatchBufferSize) out.push('--audit-webhook-batch-max-size must not be larger than --audit-webhook-batch-buffer-size');
    return out;
  },
};
