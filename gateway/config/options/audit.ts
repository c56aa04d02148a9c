// Auditing (gateway/audit/): the policy, the log and webhook backends and
// their modes, batching, throttling and truncation, as kube-apiserver's audit
// flags (k8s.io/apiserver/pkg/server/options/audit.go), with its defaults.
import { ConfigError } from '../../../lib/config/error.js';
import { bool, duration, flagsOf, int, oneOf, optionalPath, requires, type Flag, type OptionGroup } from './flag.js';

const MODES = ['batch', 'blocking', 'blocking-strict'] as const;
type AuditMode = (typeof MODES)[number];

export interface AuditOptions {
  readonly auditPolicyFile: string | undefined;
  /** `-` = standard output. */
  readonly auditLogPath: string | undefined;
  readonly auditLogMaxAge: number;
  readonly auditLogMaxBackup: number;
  readonly auditLogMaxSize: number;
  readonly auditLogFormat: 'json' | 'legacy';
  readonly auditLogCompress: boolean;
  readonly auditLogMode: AuditMode;
  readonly auditLogVersion: string;
  readonly auditLogBatchBufferSize: number;
  readonly auditLogBatchMaxSize: number;
  readonly auditLogBatchMaxWaitMs: number;
  readonly auditLogBatchThrottleEnable: boolean;
  readonly auditLogBatchThrottleQps: number;
  readonly auditLogBatchThrottleBurst: number;
  readonly auditLogTruncateEnabled: boolean;
  readonly auditLogTruncateMaxBatchSize: number;
  readonly auditLogTruncateMaxEventSize: number;
  readonly auditWebhookConfigFile: string | undefined;
  readonly auditWebhookMode: AuditMode;
  readonly auditWebhookInitialBackoffMs: number;
  readonly auditWebhookBatchBufferSize: number;
  readonly auditWebhookBatchMaxSize: number;
  readonly auditWebhookBatchMaxWaitMs: number;
  readonly auditWebhookVersion: string;
  readonly auditWebhookBatchThrottleEnable: boolean;
  readonly auditWebhookBatchThrottleQps: number;
  readonly auditWebhookBatchThrottleBurst: number;
  readonly auditWebhookTruncateEnabled: boolean;
  readonly auditWebhookTruncateMaxBatchSize: number;
  readonly auditWebhookTruncateMaxEventSize: number;
}

const flag = flagsOf<AuditOptions>();
const count = (raw: string) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer');
const positive = (raw: string) => int(raw, 1, 2 ** 31 - 1, 'must be a positive integer');
const positiveBytes = (raw: string) => int(raw, 1, Number.MAX_SAFE_INTEGER, 'must be a positive number of bytes');
/** A float32 flag (the throttle's QPS); checked against throttling being on by `checks`. */
const qps = (raw: string): number => {
  const n = /^[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(n)) throw new ConfigError('must be a non-negative number');
  return n;
};
const VERSIONS = ['audit.k8s.io/v1'] as const;

/** The batch, throttle, truncate and version flags kube gives each of the two backends. */
function backendFlags(p: 'log' | 'webhook'): Flag<AuditOptions>[] {
  const K = p === 'log' ? 'auditLog' : 'auditWebhook';
  const key = <S extends string>(suffix: S) => `${K}${suffix}` as keyof AuditOptions;
  const f = (name: string, suffix: string, arg: string, help: string, parse: (raw: string) => unknown, boolean?: true): Flag<AuditOptions> =>
    ({ name: `audit-${p}-${name}`, key: key(suffix), arg, help, parse, ...(boolean ? { boolean } : {}) }) as unknown as Flag<AuditOptions>;
  return [
    f('batch-buffer-size', 'BatchBufferSize', 'int', 'Events waiting to be sent before new ones are dropped (batch mode)', positive),
    f('batch-max-size', 'BatchMaxSize', 'int', 'Most events in one batch (batch mode)', positive),
    f('batch-max-wait', 'BatchMaxWaitMs', 'duration', 'Longest an event waits for its batch to fill (batch mode)', (raw) => duration(raw, false)),
    f('batch-throttle-enable', 'BatchThrottleEnable', 'bool', 'Limit the batches sent per second (batch mode)', bool, true),
    f('batch-throttle-qps', 'BatchThrottleQps', 'float', 'Batches per second when throttled (batch mode)', qps),
    f('batch-throttle-burst', 'BatchThrottleBurst', 'int', 'Batches sent at once when unused before, when throttled (batch mode)', count),
    f(
      'truncate-enabled',
      'TruncateEnabled',
      'bool',
      'Drop the bodies of events larger than the max event size (annotated audit.k8s.io/truncated), and the event when still too large; split batches by size',
      bool,
      true,
    ),
    f('truncate-max-batch-size', 'TruncateMaxBatchSize', 'bytes', 'Largest batch sent, in bytes, when truncating', positiveBytes),
    f('truncate-max-event-size', 'TruncateMaxEventSize', 'bytes', 'Largest event sent, in bytes, when truncating', positiveBytes),
    f('version', 'Version', 'group/version', 'API group and version of the events written', oneOf(VERSIONS)),
  ];
}

export const audit: OptionGroup<AuditOptions> = {
  title: 'Audit',
  defaults: {
    auditPolicyFile: undefined,
    auditLogPath: undefined,
    auditLogMaxAge: 0,
    auditLogMaxBackup: 0,
    auditLogMaxSize: 0,
    auditLogFormat: 'json',
    auditLogCompress: false,
    auditLogMode: 'blocking',
    auditLogVersion: 'audit.k8s.io/v1',
    // kube's log batching: one event per write, unthrottled.
    auditLogBatchBufferSize: 10_000,
    auditLogBatchMaxSize: 1,
    auditLogBatchMaxWaitMs: 0,
    auditLogBatchThrottleEnable: false,
    auditLogBatchThrottleQps: 0,
    auditLogBatchThrottleBurst: 0,
    auditLogTruncateEnabled: false,
    auditLogTruncateMaxBatchSize: 10 * 1024 * 1024,
    auditLogTruncateMaxEventSize: 100 * 1024,
    auditWebhookConfigFile: undefined,
    auditWebhookMode: 'batch',
    auditWebhookInitialBackoffMs: 10_000,
    auditWebhookVersion: 'audit.k8s.io/v1',
    auditWebhookBatchBufferSize: 10_000,
    auditWebhookBatchMaxSize: 400,
    auditWebhookBatchMaxWaitMs: 30_000,
    auditWebhookBatchThrottleEnable: true,
    auditWebhookBatchThrottleQps: 10,
    auditWebhookBatchThrottleBurst: 15,
    auditWebhookTruncateEnabled: false,
    auditWebhookTruncateMaxBatchSize: 10 * 1024 * 1024,
    auditWebhookTruncateMaxEventSize: 100 * 1024,
  },
  flags: [
    flag({
      name: 'audit-policy-file',
      key: 'auditPolicyFile',
      arg: 'file',
      help: 'audit.k8s.io/v1 Policy (YAML or JSON): which requests are audited at which level; without it nothing is audited',
      parse: optionalPath,
    }),
    flag({
      name: 'audit-log-path',
      key: 'auditLogPath',
      arg: 'file',
      help: 'Write audit events to this file, one per line (--audit-log-format); - for standard output',
      parse: optionalPath,
    }),
    flag({
      name: 'audit-log-maxage',
      key: 'auditLogMaxAge',
      arg: 'days',
      help: 'Remove rotated audit logs older than this many days (0 = keep)',
      parse: count,
    }),
    flag({ name: 'audit-log-maxbackup', key: 'auditLogMaxBackup', arg: 'int', help: 'Keep at most this many rotated audit logs (0 = all)', parse: count }),
    flag({
      name: 'audit-log-maxsize',
      key: 'auditLogMaxSize',
      arg: 'MB',
      help: 'Rotate the audit log when it would pass this many megabytes (100 when only maxage or maxbackup is set)',
      parse: count,
    }),
    flag({
      name: 'audit-log-format',
      key: 'auditLogFormat',
      arg: 'json|legacy',
      help: "Format of the audit log lines: json (one Event per line) or legacy (kube's one-line text)",
      parse: oneOf(['json', 'legacy'] as const),
    }),
    flag({ name: 'audit-log-compress', key: 'auditLogCompress', arg: 'bool', boolean: true, help: 'Gzip rotated audit logs', parse: bool }),
    flag({
      name: 'audit-log-mode',
      key: 'auditLogMode',
      arg: MODES.join('|'),
      help: "How events reach the log: in the request's path, strictly (a failed write fails the request), or in background batches",
      parse: oneOf(MODES),
    }),
    flag({
      name: 'audit-webhook-config-file',
      key: 'auditWebhookConfigFile',
      arg: 'file',
      help: 'Kubeconfig naming the server that receives audit EventLists',
      parse: optionalPath,
    }),
    flag({ name: 'audit-webhook-mode', key: 'auditWebhookMode', arg: MODES.join('|'), help: 'How events reach the audit webhook', parse: oneOf(MODES) }),
    flag({
      name: 'audit-webhook-initial-backoff',
      key: 'auditWebhookInitialBackoffMs',
      arg: 'duration',
      help: 'Wait before the first retry of a failed audit webhook request (then ×1.5, five tries)',
      parse: (raw) => duration(raw, true),
    }),
    ...backendFlags('log'),
    ...backendFlags('webhook'),
  ],
  checks(o, given) {
    const out: string[] = [];
    const logFlags = [
      'audit-log-maxage',
      'audit-log-maxbackup',
      'audit-log-maxsize',
      'audit-log-mode',
      'audit-log-compress',
      'audit-log-format',
      ...backendFlags('log').map((f) => f.name),
    ];
    const logOnly = logFlags.filter((n) => given.has(n));
    if (logOnly.length > 0 && o.auditLogPath === undefined)
      out.push(
        requires(
          logOnly.map((n) => `--${n}`),
          '--audit-log-path',
        ),
      );
    if (o.auditLogPath === '-' && (o.auditLogMaxAge || o.auditLogMaxBackup || o.auditLogMaxSize))
      out.push('--audit-log-path=- (standard output) cannot be rotated');
    const hookFlags = ['audit-webhook-mode', 'audit-webhook-initial-backoff', ...backendFlags('webhook').map((f) => f.name)];
    const hookOnly = hookFlags.filter((n) => given.has(n));
    if (hookOnly.length > 0 && o.auditWebhookConfigFile === undefined)
      out.push(
        requires(
          hookOnly.map((n) => `--${n}`),
          '--audit-webhook-config-file',
        ),
      );
    if (o.auditWebhookBatchMaxSize > o.auditWebhookBatchBufferSize)
      out.push('--audit-webhook-batch-max-size must not be larger than --audit-webhook-batch-buffer-size');
    if (o.auditLogBatchMaxSize > o.auditLogBatchBufferSize) out.push('--audit-log-batch-max-size must not be larger than --audit-log-batch-buffer-size');
    for (const p of ['log', 'webhook'] as const) {
      const [mode, throttle, qpsValue, burst, maxBatch, maxEvent] =
        p === 'log'
          ? [
              o.auditLogMode,
              o.auditLogBatchThrottleEnable,
              o.auditLogBatchThrottleQps,
              o.auditLogBatchThrottleBurst,
              o.auditLogTruncateMaxBatchSize,
              o.auditLogTruncateMaxEventSize,
            ]
          : [
              o.auditWebhookMode,
              o.auditWebhookBatchThrottleEnable,
              o.auditWebhookBatchThrottleQps,
              o.auditWebhookBatchThrottleBurst,
              o.auditWebhookTruncateMaxBatchSize,
              o.auditWebhookTruncateMaxEventSize,
            ];
      // As kube: the throttle is checked only where it applies, in batch mode.
      if (mode === 'batch' && throttle) {
        if (!(qpsValue > 0)) out.push(`--audit-${p}-batch-throttle-qps must be a positive number when --audit-${p}-batch-throttle-enable is true`);
        if (!(burst > 0)) out.push(`--audit-${p}-batch-throttle-burst must be a positive number when --audit-${p}-batch-throttle-enable is true`);
      }
      if (maxBatch < maxEvent) out.push(`--audit-${p}-truncate-max-batch-size must not be smaller than --audit-${p}-truncate-max-event-size`);
    }
    return out;
  },
};
