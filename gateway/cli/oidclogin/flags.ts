// kubelogin's flags with kubelogin's meaning, so a kubeconfig written for
// `kubectl oidc-login get-token` works when its command becomes
// `kubectl gatehouse oidc-login get-token`. Parsing only: no I/O here, the
// warm-cache path loads this module on every kubectl call.
import { homedir } from 'node:os';
import { join } from 'node:path';

export class UsageError extends Error {}

export const GRANT_TYPES = ['auto', 'authcode', 'authcode-keyboard', 'device-code', 'password', 'client-credentials'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];
const PKCE_METHODS = ['auto', 'no', 'S256'] as const;
export type PkceMethod = (typeof PKCE_METHODS)[number];

export interface LoginOptions {
  issuerUrl: string;
  clientId: string;
  clientSecret?: string;
  extraScopes: string[];
  pkceMethod: PkceMethod;
  grantType: GrantType;
  listenAddresses: string[];
  redirectUrl?: string;
  skipOpenBrowser: boolean;
  browserCommand?: string;
  openUrlAfterAuthentication?: string;
  username?: string;
  password?: string;
  tokenCacheDir: string;
  tokenCacheStorage: 'disk' | 'none';
  certificateAuthorities: string[];
  certificateAuthorityData: string[];
  insecureSkipTlsVerify: boolean;
  authenticationTimeoutSec: number;
  forceRefresh: boolean;
  authRequestExtraParams: Record<string, string>;
}

/** The flags `setup` takes besides the login's. */
export interface SetupOptions {
  verify: boolean;
  kubeconfig?: string;
  context?: string;
}

export const DEFAULT_LISTEN = ['127.0.0.1:8000', '127.0.0.1:18000'];

function boolValue(flag: string, v: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new UsageError(`flag ${flag} takes true or false, not ${JSON.stringify(v)}`);
}

function oneOf<T extends string>(flag: string, v: string, allowed: readonly T[]): T {
  if ((allowed as readonly string[]).includes(v)) return v as T;
  throw new UsageError(`flag ${flag} takes one of ${allowed.join(', ')}, not ${JSON.stringify(v)}`);
}

/** `host:port` as Go's net.Listen takes it; the port may be 0 (any free one). */
function listenAddress(v: string): string {
  const m = /^(\[[0-9a-fA-F:]+\]|[^:[\]]*):(\d{1,5})$/.exec(v);
  if (!m || Number(m[2]) > 65535) throw new UsageError(`flag --listen-address takes host:port, not ${JSON.stringify(v)}`);
  return v;
}

function httpUrl(flag: string, v: string): string {
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new UsageError(`flag ${flag} takes a URL, not ${JSON.stringify(v)}`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UsageError(`flag ${flag} takes an http(s) URL, not ${JSON.stringify(v)}`);
  return v;
}

const BOOL_FLAGS = new Set(['--skip-open-browser', '--insecure-skip-tls-verify', '--force-refresh', '--verify']);

export interface Parsed {
  login: LoginOptions;
  setup: SetupOptions;
}

/**
 * Parses `get-token` (and `setup`, `logout`: the same flags) arguments. `setupFlags` allows
 * --verify, --kubeconfig and --context; kubelogin's own -v/--v verbosity is accepted and ignored.
 */
export function parseLoginFlags(argv: readonly string[], opts: { setupFlags?: boolean; home?: string } = {}): Parsed {
  const login: Partial<LoginOptions> &
    Pick<LoginOptions, 'extraScopes' | 'listenAddresses' | 'certificateAuthorities' | 'certificateAuthorityData' | 'authRequestExtraParams'> = {
    extraScopes: [],
    listenAddresses: [],
    pkceMethod: 'auto',
    grantType: 'auto',
    skipOpenBrowser: false,
    tokenCacheStorage: 'disk',
    certificateAuthorities: [],
    certificateAuthorityData: [],
    insecureSkipTlsVerify: false,
    authenticationTimeoutSec: 180,
    forceRefresh: false,
    authRequestExtraParams: Object.create(null) as Record<string, string>,
  };
  const setup: SetupOptions = { verify: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('-')) throw new UsageError(`unexpected argument ${JSON.stringify(a)}`);
    const eq = a.indexOf('=');
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const inline = eq > 0 ? a.slice(eq + 1) : undefined;
    if (BOOL_FLAGS.has(flag) && inline === undefined) {
      if (flag === '--verify' && !opts.setupFlags) throw new UsageError('unknown flag --verify (setup takes it)');
      if (flag === '--skip-open-browser') login.skipOpenBrowser = true;
      else if (flag === '--insecure-skip-tls-verify') login.insecureSkipTlsVerify = true;
      else if (flag === '--force-refresh') login.forceRefresh = true;
      else setup.verify = true;
      continue;
    }
    const value = (): string => {
      if (inline !== undefined) return inline;
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`flag ${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '--oidc-issuer-url':
        login.issuerUrl = httpUrl(flag, value());
        break;
      case '--oidc-client-id':
        login.clientId = value();
        break;
      case '--oidc-client-secret':
        login.clientSecret = value();
        break;
      case '--oidc-extra-scope':
        // kubelogin's flag is a string slice: a comma also separates.
        login.extraScopes.push(
          ...value()
            .split(',')
            .filter((s) => s !== ''),
        );
        break;
      case '--oidc-pkce-method':
        login.pkceMethod = oneOf(flag, value(), PKCE_METHODS);
        break;
      case '--grant-type':
        login.grantType = oneOf(flag, value(), GRANT_TYPES);
        break;
      case '--listen-address':
        login.listenAddresses.push(...value().split(',').map(listenAddress));
        break;
      case '--oidc-redirect-url':
        login.redirectUrl = httpUrl(flag, value());
        break;
      case '--browser-command':
        login.browserCommand = value();
        break;
      case '--open-url-after-authentication':
        login.openUrlAfterAuthentication = httpUrl(flag, value());
        break;
      case '--username':
        login.username = value();
        break;
      case '--password':
        login.password = value();
        break;
      case '--token-cache-dir':
        login.tokenCacheDir = value();
        break;
      case '--token-cache-storage': {
        const v = value();
        if (v === 'keyring') throw new UsageError('flag --token-cache-storage=keyring is not supported here: use disk or none');
        login.tokenCacheStorage = oneOf(flag, v, ['disk', 'none'] as const);
        break;
      }
      case '--certificate-authority':
        login.certificateAuthorities.push(value());
        break;
      case '--certificate-authority-data':
        login.certificateAuthorityData.push(value());
        break;
      case '--authentication-timeout-sec': {
        const v = value();
        const n = Number(v);
        if (!/^\d+$/.test(v) || n < 1) throw new UsageError(`flag --authentication-timeout-sec takes a positive number of seconds, not ${JSON.stringify(v)}`);
        login.authenticationTimeoutSec = n;
        break;
      }
      case '--oidc-auth-request-extra-params':
        for (const kv of value().split(',')) {
          const k = kv.indexOf('=');
          if (k <= 0) throw new UsageError(`flag --oidc-auth-request-extra-params takes key=value, not ${JSON.stringify(kv)}`);
          login.authRequestExtraParams[kv.slice(0, k)] = kv.slice(k + 1);
        }
        break;
      case '--skip-open-browser':
        login.skipOpenBrowser = boolValue(flag, value());
        break;
      case '--insecure-skip-tls-verify':
        login.insecureSkipTlsVerify = boolValue(flag, value());
        break;
      case '--force-refresh':
        login.forceRefresh = boolValue(flag, value());
        break;
      case '-v':
      case '--v':
        value();
        break;
      case '--verify':
        if (!opts.setupFlags) throw new UsageError('unknown flag --verify (setup takes it)');
        setup.verify = boolValue(flag, value());
        break;
      case '--kubeconfig':
      case '--context':
        if (!opts.setupFlags) throw new UsageError(`unknown flag ${flag} (setup takes it)`);
        if (flag === '--kubeconfig') setup.kubeconfig = value();
        else setup.context = value();
        break;
      default:
        throw new UsageError(`unknown flag ${flag}`);
    }
  }
  if (!login.issuerUrl) throw new UsageError('flag --oidc-issuer-url is required');
  if (!login.clientId) throw new UsageError('flag --oidc-client-id is required');
  if (login.listenAddresses.length === 0) login.listenAddresses.push(...DEFAULT_LISTEN);
  login.tokenCacheDir ??= join(opts.home ?? homedir(), '.kube', 'cache', 'oidc-login');
  return { login: login as LoginOptions, setup };
}
