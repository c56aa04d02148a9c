// `gatehouse serve` flags: the option groups of options/ (one module per
// group, as kube-apiserver's options packages: serving, storage,
// authentication, …) composed into one table, parsed once into a frozen
// ServeOptions. Every problem is collected and reported as one line, so a bad
// command line fails fast and says everything at once.
import { formatDuration } from './duration.js';
import { ConfigError } from '../../lib/config/error.js';
import type { Flag, OptionGroup } from './options/flag.js';
import { serving, type ServingOptions } from './options/serving.js';
import { storage, type StorageOptions } from './options/storage.js';
import { authentication, type AuthenticationOptions } from './options/authentication.js';
import { authorization, type AuthorizationOptions } from './options/authorization.js';
import { admission, type AdmissionOptions } from './options/admission.js';
import { flowcontrol, type FlowControlOptions } from './options/flowcontrol.js';
import { aggregation, type AggregationOptions } from './options/aggregation.js';
import { sidecar, type SidecarOptions } from './options/sidecar.js';
import { forwardAuth, type ForwardAuthOptions } from './options/forwardauth.js';
import { controllers, type ControllerOptions } from './options/controllers.js';
import { leaderElection, type LeaderElectionOptions } from './options/leaderelection.js';
import { identityLease, type IdentityLeaseOptions } from './options/identitylease.js';
import { csrSigning, type CsrSigningOptions } from './options/csrsigning.js';
import { features, type FeatureOptions } from './options/features.js';
import { audit, type AuditOptions } from './options/audit.js';
import { tracing, type TracingOptions } from './options/tracing.js';
import { metrics, type MetricsOptions } from './options/metrics.js';

export { STORAGE_BACKENDS, type StorageBackend } from './options/storage.js';
export { AUTHORIZATION_MODES, type AuthorizationMode } from './options/authorization.js';
export { ADMISSION_PLUGINS, type AdmissionPluginName } from './options/admission.js';
export { CONTROLLERS, CONTROLLERS_OFF_BY_DEFAULT, controllerEnabled } from './options/controllers.js';

export type ServeOptions = ServingOptions &
  StorageOptions &
  AuthenticationOptions &
  AuthorizationOptions &
  AdmissionOptions &
  FlowControlOptions &
  AggregationOptions &
  SidecarOptions &
  ForwardAuthOptions &
  ControllerOptions &
  LeaderElectionOptions &
  IdentityLeaseOptions &
  CsrSigningOptions &
  FeatureOptions &
  AuditOptions &
  TracingOptions &
  MetricsOptions;

/** A group seen by the composer, which reads every group's options the same way. */
type AnyGroup = OptionGroup<Record<string, unknown>>;

/** The groups in the order --help prints them. */
const GROUPS = [
  serving,
  storage,
  authentication,
  authorization,
  admission,
  flowcontrol,
  aggregation,
  sidecar,
  forwardAuth,
  controllers,
  leaderElection,
  identityLease,
  csrSigning,
  features,
  audit,
  tracing,
  metrics,
] as unknown as readonly AnyGroup[];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const DEFAULTS = Object.assign({}, ...GROUPS.map((g) => g.defaults)) as ServeOptions;

export const FLAGS: readonly Flag[] = GROUPS.flatMap((g) => g.flags as readonly Flag[]);

const BY_NAME: ReadonlyMap<string, Flag> = new Map(FLAGS.map((f) => [f.name, f]));

export function wantsHelp(argv: readonly string[]): boolean {
  return argv.some((a) => a === '--help' || a === '-h');
}

export function parseServeFlags(argv: string[]): { options: ServeOptions } | { error: string } {
  const problems: string[] = [];
  const values = new Map<Flag, unknown>();

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    // `--name`, `--name=value`, and -v's short forms (`-v 3`, `-v=3`, `-v3`), as pflag accepts them.
    const m = /^--([^=]+)(?:=(.*))?$/s.exec(arg) ?? /^-(v)(?:=?(.+))?$/s.exec(arg);
    if (!m) {
      problems.push(arg.startsWith('-') && arg !== '-' ? `unknown flag: ${arg}` : `unexpected argument "${arg}"`);
      continue;
    }
    const name = m[1]!;
    const shown = arg.startsWith('--') ? `--${name}` : `-${name}`;
    let raw = m[2];
    const f = BY_NAME.get(name);
    if (!f) {
      problems.push(`unknown flag: ${shown}`);
      continue;
    }
    if (raw === undefined) {
      if (f.boolean) raw = 'true';
      else if (i + 1 < argv.length) raw = argv[++i]!;
      else {
        problems.push(`flag needs an argument: ${shown}`);
        continue;
      }
    }
    try {
      const prev = values.get(f);
      const parsed = (f.parse as (raw: string, prev?: unknown) => unknown)(raw, prev);
      values.set(f, f.list && Array.isArray(prev) && Array.isArray(parsed) ? [...prev, ...parsed] : parsed);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(err.forFlag(shown, raw).message);
    }
  }

  const opts: Mutable<ServeOptions> = { ...DEFAULTS };
  for (const [f, v] of values) (opts as Record<string, unknown>)[f.key as string] = v;
  const givenNames = new Set([...values.keys()].map((f) => f.name));
  for (const g of GROUPS) problems.push(...(g.checks?.(opts, givenNames) ?? []));
  for (const v of Object.values(opts)) if (Array.isArray(v)) Object.freeze(v);
  if (problems.length > 0) return { error: problems.join('; ') };
  return {
    options: Object.freeze({ ...opts, clientCaFiles: Object.freeze([...opts.clientCaFiles]), authorizationModes: Object.freeze([...opts.authorizationModes]) }),
  };
}

/** Help text generated from the groups, defaults included. */
export function usage(): string {
  const rows = (g: AnyGroup) =>
    (g.flags as readonly Flag[]).map((f) => {
      const left = `${f.name === 'v' ? '-v, --v' : `    --${f.name}`} ${f.boolean ? '' : f.arg}`.trimEnd();
      const d = (DEFAULTS as unknown as Record<string, unknown>)[f.key as string];
      const shown =
        (f.key as string).endsWith('Ms') && typeof d === 'number'
          ? formatDuration(d)
          : Array.isArray(d)
            ? d.join(',')
            : d === undefined
              ? ''
              : // An object's defaults (the feature gates) are listed in its help.
                typeof d === 'object' && d !== null
                ? ''
                : String(d);
      return `  ${left.padEnd(40)} ${f.help}${shown === '' ? '' : ` (default ${shown})`}`;
    });
  return ['Usage: gatehouse serve [flags]', ...GROUPS.flatMap((g) => ['', `${g.title} flags:`, ...rows(g)])].join('\n');
}
