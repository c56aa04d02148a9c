// `gatehouse serve` flags: one table of kube-apiserver-named flags, parsed once
// into a frozen ServeOptions. Every problem is collected and reported as one
// line, so a bad command line fails fast and says everything at once.
import { isIP } from 'node:net';
import { DurationError, formatDuration, parseDuration } from './duration.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node', 'ABAC', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];
/** Modes with an authorizer today; the rest are recognised so the message can say "not implemented yet". */
const IMPLEMENTED_MODES: ReadonlySet<string> = new Set<AuthorizationMode>(['AlwaysAllow', 'AlwaysDeny']);
export const STORAGE_BACKENDS = ['file', 'memory', 'redis'] as const;
export type StorageBackend = (typeof STORAGE_BACKENDS)[number];

export interface ServeOptions {
  readonly bindAddress: string;
  readonly securePort: number;
  readonly dataDir: string;
  readonly storageBackend: StorageBackend;
  readonly redisUrl: string | undefined;
  readonly storagePrefix: string;
  readonly tlsCertFile: string | undefined;
  readonly tlsPrivateKeyFile: string | undefined;
  readonly clientCaFiles: readonly string[];
  readonly authorizationModes: readonly AuthorizationMode[];
  readonly anonymousAuth: boolean;
  readonly watchHistoryMs: number;
  readonly livezGracePeriodMs: number;
  readonly shutdownDelayMs: number;
  readonly maxRequestBodyBytes: number;
  readonly verbosity: number;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Thrown by a value parser; the text goes after `invalid value "x" for --flag: `. */
class BadValue extends Error {
  constructor(message: string, readonly value?: string) { super(message); }
}

interface Flag<K extends keyof ServeOptions = keyof ServeOptions> {
  name: string;
  key: K;
  /** Shown in help; the real default is in DEFAULTS. */
  arg: string;
  help: string;
  boolean?: true;
  /** List flags accumulate over repeats (after the first one replaces the default); scalars keep the last value. */
  list?: true;
  parse: (raw: string) => ServeOptions[K];
}

const DEFAULTS: ServeOptions = {
  bindAddress: '127.0.0.1', securePort: 6443, dataDir: './data', storageBackend: 'file', redisUrl: undefined,
  storagePrefix: 'gatehouse', tlsCertFile: undefined, tlsPrivateKeyFile: undefined, clientCaFiles: [],
  authorizationModes: ['AlwaysDeny'], anonymousAuth: true, watchHistoryMs: 5 * 60_000, livezGracePeriodMs: 0,
  shutdownDelayMs: 0, maxRequestBodyBytes: 3 * 1024 * 1024, verbosity: 0,
};

const flag = <K extends keyof ServeOptions>(f: Flag<K>): Flag => f as unknown as Flag;

function int(raw: string, min: number, max: number, detail: string): number {
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new BadValue(detail);
  return n;
}

function duration(raw: string, positive: boolean): number {
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (err) {
    if (err instanceof DurationError) throw new BadValue(err.message);
    throw err;
  }
  if (positive && ms <= 0) throw new BadValue('must be greater than 0');
  if (ms < 0) throw new BadValue('must not be negative');
  return ms;
}

function nonEmpty(raw: string): string {
  if (raw === '') throw new BadValue('must not be empty');
  return raw;
}

function optionalPath(raw: string): string | undefined {
  return raw === '' ? undefined : raw;
}

/** strconv.ParseBool, which kube's boolean flags use. */
function bool(raw: string): boolean {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(raw)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(raw)) return false;
  throw new BadValue('must be true or false');
}

function csv(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

function authorizationModes(raw: string): AuthorizationMode[] {
  const modes = csv(raw);
  if (modes.length === 0) throw new BadValue('at least one mode is required');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) throw new BadValue(`unknown mode (one of ${AUTHORIZATION_MODES.join(', ')})`, m);
    if (!IMPLEMENTED_MODES.has(m)) throw new BadValue('mode not implemented yet', m);
    if (seen.has(m)) throw new BadValue('mode given more than once', m);
    seen.add(m);
  }
  return modes as AuthorizationMode[];
}

export const FLAGS: readonly Flag[] = [
  flag({ name: 'bind-address', key: 'bindAddress', arg: 'ip', help: 'The IP address to listen on (0.0.0.0 or :: for all interfaces)',
    parse: (raw) => { if (!isIP(raw)) throw new BadValue('must be an IP address'); return raw; } }),
  flag({ name: 'secure-port', key: 'securePort', arg: 'port', help: 'The port to serve HTTPS on',
    parse: (raw) => int(raw, 1, 65535, 'must be an integer between 1 and 65535') }),
  flag({ name: 'data-dir', key: 'dataDir', arg: 'dir', help: 'Where the file store and the generated dev PKI live', parse: nonEmpty }),
  flag({ name: 'storage-backend', key: 'storageBackend', arg: 'file|memory|redis', help: 'Where objects are stored',
    parse: (raw) => {
      if (!(STORAGE_BACKENDS as readonly string[]).includes(raw)) throw new BadValue(`must be one of ${STORAGE_BACKENDS.join(', ')}`);
      return raw as StorageBackend;
    } }),
  flag({ name: 'redis-url', key: 'redisUrl', arg: 'url', help: 'redis://[user:password@]host:port[/db] or rediss://…[?ca=file] (with --storage-backend=redis)',
    parse: (raw) => { if (!/^rediss?:\/\/[^\s]+$/.test(raw) || !URL.canParse(raw)) throw new BadValue('must be a redis:// or rediss:// URL'); return raw; } }),
  flag({ name: 'storage-prefix', key: 'storagePrefix', arg: 'prefix', help: 'Key prefix for every stored object (redis)',
    parse: (raw) => {
      if (/[{}\s*?[\]\\]/.test(nonEmpty(raw))) throw new BadValue('must not contain braces, spaces or glob characters');
      return raw;
    } }),
  flag({ name: 'tls-cert-file', key: 'tlsCertFile', arg: 'file', help: 'Serving certificate (PEM); default: the generated dev PKI', parse: optionalPath }),
  flag({ name: 'tls-private-key-file', key: 'tlsPrivateKeyFile', arg: 'file', help: 'Private key of --tls-cert-file', parse: optionalPath }),
  flag({ name: 'client-ca-file', key: 'clientCaFiles', arg: 'file,…', list: true, help: 'CA bundles that sign client certificates (repeatable)', parse: csv }),
  flag({ name: 'authorization-mode', key: 'authorizationModes', arg: 'mode,…', list: true,
    help: `Ordered authorizers: ${AUTHORIZATION_MODES.join(', ')} (only AlwaysAllow and AlwaysDeny so far)`, parse: authorizationModes }),
  flag({ name: 'anonymous-auth', key: 'anonymousAuth', arg: 'bool', boolean: true, help: 'Serve requests without credentials as system:anonymous', parse: bool }),
  flag({ name: 'watch-history', key: 'watchHistoryMs', arg: 'duration', help: 'How long watch history is kept before a watch gets 410 Gone',
    parse: (raw) => duration(raw, true) }),
  flag({ name: 'livez-grace-period', key: 'livezGracePeriodMs', arg: 'duration', help: 'Time after start during which /livez does not fail',
    parse: (raw) => duration(raw, false) }),
  flag({ name: 'shutdown-delay-duration', key: 'shutdownDelayMs', arg: 'duration', help: 'Time to keep serving after a shutdown signal while /readyz fails',
    parse: (raw) => duration(raw, false) }),
  flag({ name: 'max-request-body-bytes', key: 'maxRequestBodyBytes', arg: 'bytes', help: 'Largest accepted request body',
    parse: (raw) => int(raw, 1, Number.MAX_SAFE_INTEGER, 'must be a positive integer') }),
  flag({ name: 'v', key: 'verbosity', arg: 'level', help: 'Log verbosity', parse: (raw) => int(raw, 0, 10, 'must be an integer between 0 and 10') }),
];

/**
 * kube-apiserver flags that Gatehouse will accept but does not implement yet (DESIGN.md section 3).
 * Recognised so that the message says "not supported yet" rather than "unknown"; `bool` ones take no
 * separate value. Implementing one = moving it from here into FLAGS.
 */
export const UNSUPPORTED_FLAGS: ReadonlyMap<string, 'bool' | 'value'> = new Map([
  ['token-auth-file', 'value'], ['enable-bootstrap-token-auth', 'bool'],
  ['service-account-key-file', 'value'], ['service-account-signing-key-file', 'value'],
  ['service-account-issuer', 'value'], ['service-account-lookup', 'bool'], ['api-audiences', 'value'],
  ['oidc-issuer-url', 'value'], ['oidc-client-id', 'value'], ['oidc-ca-file', 'value'],
  ['oidc-username-claim', 'value'], ['oidc-username-prefix', 'value'], ['oidc-groups-claim', 'value'],
  ['oidc-groups-prefix', 'value'], ['oidc-required-claim', 'value'], ['oidc-signing-algs', 'value'],
  ['authentication-config', 'value'],
  ['authentication-token-webhook-config-file', 'value'], ['authentication-token-webhook-cache-ttl', 'value'],
  ['authentication-token-webhook-version', 'value'],
  ['requestheader-client-ca-file', 'value'], ['requestheader-allowed-names', 'value'],
  ['requestheader-username-headers', 'value'], ['requestheader-uid-headers', 'value'],
  ['requestheader-group-headers', 'value'], ['requestheader-extra-headers-prefix', 'value'],
  ['authorization-policy-file', 'value'], ['authorization-config', 'value'],
  ['authorization-webhook-config-file', 'value'], ['authorization-webhook-version', 'value'],
  ['authorization-webhook-cache-authorized-ttl', 'value'], ['authorization-webhook-cache-unauthorized-ttl', 'value'],
  ['proxy-client-cert-file', 'value'], ['proxy-client-key-file', 'value'],
  ['enable-admission-plugins', 'value'], ['runtime-config', 'value'], ['feature-gates', 'value'],
  ['audit-log-path', 'value'],
]);

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
    const unsupported = UNSUPPORTED_FLAGS.get(name);
    if (!f && !unsupported) {
      problems.push(`unknown flag: ${shown}`);
      continue;
    }
    const isBool = f ? f.boolean === true : unsupported === 'bool';
    if (raw === undefined) {
      if (isBool) raw = 'true';
      else if (i + 1 < argv.length) raw = argv[++i]!;
      else {
        problems.push(`flag needs an argument: ${shown}`);
        continue;
      }
    }
    if (!f) {
      problems.push(`flag --${name} is not supported yet`);
      continue;
    }
    try {
      const parsed = f.parse(raw);
      const prev = values.get(f);
      values.set(f, f.list && Array.isArray(prev) && Array.isArray(parsed) ? [...prev, ...parsed] : parsed);
    } catch (err) {
      if (!(err instanceof BadValue)) throw err;
      problems.push(`invalid value "${err.value ?? raw}" for ${shown}: ${err.message}`);
    }
  }

  const opts: Mutable<ServeOptions> = { ...DEFAULTS };
  for (const [f, v] of values) (opts as Record<string, unknown>)[f.key] = v;
  problems.push(...crossChecks(opts));
  if (problems.length > 0) return { error: problems.join('; ') };
  return { options: Object.freeze({ ...opts, clientCaFiles: Object.freeze([...opts.clientCaFiles]), authorizationModes: Object.freeze([...opts.authorizationModes]) }) };
}

function crossChecks(o: ServeOptions): string[] {
  const out: string[] = [];
  if ((o.tlsCertFile === undefined) !== (o.tlsPrivateKeyFile === undefined)) {
    out.push('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const redis = o.storageBackend === 'redis';
  if (o.redisUrl !== undefined && !redis) out.push('--redis-url requires --storage-backend=redis');
  if (redis && o.redisUrl === undefined) out.push('--storage-backend=redis requires --redis-url');
  const modes = o.authorizationModes;
  if (new Set(modes).size !== modes.length) {
    const dup = modes.find((m, i) => modes.indexOf(m) !== i)!;
    out.push(`invalid value "${dup}" for --authorization-mode: mode given more than once`);
  }
  return out;
}

/** Help text generated from the table, defaults included. */
export function usage(): string {
  const rows = FLAGS.map((f) => {
    const left = `${f.name === 'v' ? '-v, --v' : `    --${f.name}`} ${f.boolean ? '' : f.arg}`.trimEnd();
    const d = DEFAULTS[f.key];
    const shown = f.key.endsWith('Ms') && typeof d === 'number' ? formatDuration(d)
      : Array.isArray(d) ? d.join(',') : d === undefined ? '' : String(d);
    return `  ${left.padEnd(40)} ${f.help}${shown === '' ? '' : ` (default ${shown})`}`;
  });
  const later: string[] = [];
  for (const n of UNSUPPORTED_FLAGS.keys()) {
    const last = later.length - 1;
    if (last >= 0 && later[last]!.length + n.length < 96) later[last] += ` --${n}`;
    else later.push(`  --${n}`);
  }
  return ['Usage: gatehouse serve [flags]', '', 'Flags:', ...rows, '', 'Recognised, not supported yet:', ...later].join('\n');
}
