// `gatehouse serve` flags: one table of kube-apiserver-named flags, parsed once
// into a frozen ServeOptions. Every problem is collected and reported as one
// line, so a bad command line fails fast and says everything at once.
import { isIP } from 'node:net';
import { DurationError, formatDuration, parseDuration } from './duration.js';
import { SUPPORTED_SIGNING_ALGS } from './authnconfig-types.js';
import { FEATURE_GATE_DEFAULTS, FeatureGateError, parseFeatureGates, type FeatureGates } from './featuregates.js';

export const AUTHORIZATION_MODES = ['AlwaysAllow', 'AlwaysDeny', 'RBAC', 'Node', 'ABAC', 'Webhook'] as const;
export type AuthorizationMode = (typeof AUTHORIZATION_MODES)[number];
/** Admission plugins --enable-admission-plugins accepts. */
export const ADMISSION_PLUGINS = ['NodeRestriction'] as const;
export type AdmissionPluginName = (typeof ADMISSION_PLUGINS)[number];
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
  readonly oidcIssuerUrl: string | undefined;
  readonly oidcClientId: string | undefined;
  readonly oidcUsernameClaim: string;
  readonly oidcUsernamePrefix: string | undefined;
  readonly oidcGroupsClaim: string | undefined;
  readonly oidcGroupsPrefix: string;
  readonly oidcRequiredClaims: readonly (readonly [string, string])[];
  readonly oidcCaFile: string | undefined;
  readonly oidcSigningAlgs: readonly string[];
  readonly authenticationConfig: string | undefined;
  readonly tokenAuthFile: string | undefined;
  readonly enableBootstrapTokenAuth: boolean;
  readonly serviceAccountKeyFiles: readonly string[];
  readonly serviceAccountSigningKeyFile: string | undefined;
  readonly serviceAccountIssuers: readonly string[];
  readonly serviceAccountLookup: boolean;
  /** 0 = no cap. */
  readonly serviceAccountMaxTokenExpirationMs: number;
  readonly apiAudiences: readonly string[];
  /** kube-controller-manager style: `*`, names, `-name`; see CONTROLLERS. */
  readonly controllers: readonly string[];
  readonly authenticationTokenWebhookConfigFile: string | undefined;
  readonly authenticationTokenWebhookCacheTtlMs: number;
  readonly authenticationTokenWebhookVersion: 'v1' | 'v1beta1';
  readonly requestheaderClientCaFile: string | undefined;
  readonly requestheaderAllowedNames: readonly string[];
  readonly requestheaderUsernameHeaders: readonly string[];
  readonly requestheaderUidHeaders: readonly string[];
  readonly requestheaderGroupHeaders: readonly string[];
  readonly requestheaderExtraHeadersPrefix: readonly string[];
  /** Front-proxy client certificate presented to aggregated backends (default: the dev PKI's front-proxy-client). */
  readonly proxyClientCertFile: string | undefined;
  readonly proxyClientKeyFile: string | undefined;
  readonly watchHistoryMs: number;
  readonly livezGracePeriodMs: number;
  readonly shutdownDelayMs: number;
  readonly maxRequestBodyBytes: number;
  /** Deadline of a request that is not long-running (the `timeout` query parameter may shorten it). */
  readonly requestTimeoutMs: number;
  /** A watch without timeoutSeconds ends at a random point between this and twice this. */
  readonly minRequestTimeoutS: number;
  /** Concurrent non-mutating / mutating requests that are not long-running; 0 = no limit. */
  readonly maxRequestsInflight: number;
  readonly maxMutatingRequestsInflight: number;
  /** API Priority and Fairness: the two limits above are one total shared by priority levels; off, they apply plainly. */
  readonly enablePriorityAndFairness: boolean;
  /** SETTINGS_MAX_CONCURRENT_STREAMS of each HTTP/2 connection. */
  readonly http2MaxStreamsPerConnection: number;
  /** Most connections one remote address may hold open; 0 = no cap (kube has none). */
  readonly maxConnectionsPerClientAddress: number;
  /** Share of HTTP/2 requests after which the client is sent GOAWAY (0 to 0.02). */
  readonly goawayChance: number;
  readonly verbosity: number;
  /** --authorization-config (excludes --authorization-mode and --authorization-webhook-*). */
  readonly authorizationConfig: string | undefined;
  readonly authorizationPolicyFile: string | undefined;
  readonly authorizationWebhookConfigFile: string | undefined;
  readonly authorizationWebhookVersion: 'v1' | 'v1beta1';
  readonly authorizationWebhookCacheAuthorizedTtlMs: number;
  readonly authorizationWebhookCacheUnauthorizedTtlMs: number;
  readonly enableAdmissionPlugins: readonly AdmissionPluginName[];
  readonly featureGates: FeatureGates;
  /** Sidecar mode (gateway/sidecar/): the one HTTP(S) service every authorized request is proxied to. */
  readonly upstream: string | undefined;
  readonly upstreamCaFile: string | undefined;
  /** kube-rbac-proxy style file: `resourceAttributes: {namespace, apiGroup, apiVersion, resource, subresource, name}`. */
  readonly resourceAttributesFile: string | undefined;
  readonly allowPaths: readonly string[];
  readonly ignorePaths: readonly string[];
  /** kube-rbac-proxy's identity headers to the upstream: the user, and the groups joined by a separator. */
  readonly authHeaderFieldsEnabled: boolean;
  readonly authHeaderUserFieldName: string;
  readonly authHeaderGroupsFieldName: string;
  readonly authHeaderGroupsFieldSeparator: string;
  /** Built-in groups served by a remote core backend (gateway/aggregation/remotecore.ts) instead of in-process. */
  readonly coreBackendUrl: string | undefined;
  readonly coreBackendCaFile: string | undefined;
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
  // Secure by default, as kube-apiserver.
  authorizationModes: ['Node', 'RBAC'], anonymousAuth: true,
  oidcIssuerUrl: undefined, oidcClientId: undefined, oidcUsernameClaim: 'sub', oidcUsernamePrefix: undefined, oidcGroupsClaim: undefined,
  oidcGroupsPrefix: '', oidcRequiredClaims: [], oidcCaFile: undefined, oidcSigningAlgs: ['RS256'], authenticationConfig: undefined,
  tokenAuthFile: undefined, enableBootstrapTokenAuth: false, serviceAccountKeyFiles: [], serviceAccountSigningKeyFile: undefined,
  serviceAccountIssuers: [], serviceAccountLookup: true, serviceAccountMaxTokenExpirationMs: 0, apiAudiences: [], controllers: ['*'],
  authenticationTokenWebhookConfigFile: undefined, authenticationTokenWebhookCacheTtlMs: 2 * 60_000, authenticationTokenWebhookVersion: 'v1beta1',
  requestheaderClientCaFile: undefined, requestheaderAllowedNames: [], requestheaderUsernameHeaders: [], requestheaderUidHeaders: [],
  requestheaderGroupHeaders: [], requestheaderExtraHeadersPrefix: [], proxyClientCertFile: undefined, proxyClientKeyFile: undefined, watchHistoryMs: 5 * 60_000, livezGracePeriodMs: 0,
  shutdownDelayMs: 0, maxRequestBodyBytes: 3 * 1024 * 1024, requestTimeoutMs: 60_000, minRequestTimeoutS: 1800, maxRequestsInflight: 400, maxMutatingRequestsInflight: 200, enablePriorityAndFairness: true, http2MaxStreamsPerConnection: 1000, maxConnectionsPerClientAddress: 1000, goawayChance: 0, verbosity: 0,
  authorizationConfig: undefined, authorizationPolicyFile: undefined, authorizationWebhookConfigFile: undefined, authorizationWebhookVersion: 'v1beta1',
  authorizationWebhookCacheAuthorizedTtlMs: 5 * 60_000, authorizationWebhookCacheUnauthorizedTtlMs: 30_000, enableAdmissionPlugins: [], featureGates: FEATURE_GATE_DEFAULTS,
  upstream: undefined, upstreamCaFile: undefined, resourceAttributesFile: undefined, allowPaths: [], ignorePaths: [],
  authHeaderFieldsEnabled: false, authHeaderUserFieldName: 'x-remote-user', authHeaderGroupsFieldName: 'x-remote-groups', authHeaderGroupsFieldSeparator: '|',
  coreBackendUrl: undefined, coreBackendCaFile: undefined,
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

/** An HTTP header name (RFC 9110 token), lowercased as Node keys headers. */
function headerName(raw: string): string {
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(nonEmpty(raw))) throw new BadValue('must be an HTTP header name');
  return raw.toLowerCase();
}

/** Joins values inside one header: printable, and never a line break. */
function headerSeparator(raw: string): string {
  if (!/^[\x20-\x7e]+$/.test(nonEmpty(raw))) throw new BadValue('must be printable ASCII');
  return raw;
}

function csv(raw: string): string[] {
  return raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** Controllers of the core backend that --controllers names; `*` = the ones on by default. */
export const CONTROLLERS = ['serviceaccount-token', 'serviceaccount', 'root-ca-cert-publisher', 'tokencleaner', 'bootstrapsigner'] as const;
/** Off under `*` unless --enable-bootstrap-token-auth (kube-controller-manager keeps them off by default too). */
export const CONTROLLERS_OFF_BY_DEFAULT: ReadonlySet<string> = new Set(['tokencleaner', 'bootstrapsigner']);

function controllers(raw: string): string[] {
  const names = csv(raw);
  if (names.length === 0) throw new BadValue('at least one controller name or * is required');
  for (const n of names) {
    const bare = n.startsWith('-') ? n.slice(1) : n;
    if (n !== '*' && !(CONTROLLERS as readonly string[]).includes(bare)) throw new BadValue(`unknown controller (*, ${CONTROLLERS.join(', ')}, or -name to disable)`, n);
  }
  return names;
}

/** Whether a controller runs, from the --controllers list (the last mention wins, as in kube-controller-manager). */
export function controllerEnabled(o: Pick<ServeOptions, 'controllers' | 'enableBootstrapTokenAuth'>, name: (typeof CONTROLLERS)[number]): boolean {
  if (o.controllers.includes(`-${name}`)) return false;
  if (o.controllers.includes(name)) return true;
  if (!o.controllers.includes('*')) return false;
  return !CONTROLLERS_OFF_BY_DEFAULT.has(name) || o.enableBootstrapTokenAuth;
}

function issuer(raw: string): string[] {
  if (nonEmpty(raw).includes(':') && !URL.canParse(raw)) throw new BadValue('must be a URL when it contains ":"');
  return [raw];
}

function authorizationModes(raw: string): AuthorizationMode[] {
  const modes = csv(raw);
  if (modes.length === 0) throw new BadValue('at least one mode is required');
  const seen = new Set<string>();
  for (const m of modes) {
    if (!(AUTHORIZATION_MODES as readonly string[]).includes(m)) throw new BadValue(`unknown mode (one of ${AUTHORIZATION_MODES.join(', ')})`, m);
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
  flag({ name: 'redis-url', key: 'redisUrl', arg: 'url',
    help: 'redis://[user:password@]host:port[/db] or rediss://…[?ca=file]; a Redis Cluster: several seeds host:port,host:port,… or redis+cluster://… (with --storage-backend=redis)',
    parse: (raw) => {
      // Same grammar as backends/core/store/redis-connect.ts parseRedisUrl (which reports the details).
      const m = /^(rediss?)(\+cluster)?:\/\/(?:[^@/?#\s]*@)?([^/?#@\s]+)(?:\/([0-9]*))?(?:\?(ca=[^#\s&]+))?$/.exec(raw);
      if (!m) throw new BadValue('must be a redis:// or rediss:// URL');
      const hosts = m[3]!.split(',');
      if (!hosts.every((h) => /^(\[[0-9a-fA-F:.]+\]|[^:[\],]+)(:[0-9]{1,5})?$/.test(h))) throw new BadValue('has a bad host:port');
      if ((m[2] !== undefined || hosts.length > 1) && m[4] && Number(m[4]) !== 0) throw new BadValue('a Redis Cluster has no database other than 0');
      if (m[5] !== undefined && m[1] !== 'rediss') throw new BadValue('ca= needs rediss://');
      return raw;
    } }),
  flag({ name: 'storage-prefix', key: 'storagePrefix', arg: 'prefix', help: 'Key prefix for every stored object (redis)',
    parse: (raw) => {
      if (/[{}\s*?[\]\\]/.test(nonEmpty(raw))) throw new BadValue('must not contain braces, spaces or glob characters');
      return raw;
    } }),
  flag({ name: 'tls-cert-file', key: 'tlsCertFile', arg: 'file', help: 'Serving certificate (PEM); default: the generated dev PKI', parse: optionalPath }),
  flag({ name: 'tls-private-key-file', key: 'tlsPrivateKeyFile', arg: 'file', help: 'Private key of --tls-cert-file', parse: optionalPath }),
  flag({ name: 'client-ca-file', key: 'clientCaFiles', arg: 'file,…', list: true, help: 'CA bundles that sign client certificates (repeatable)', parse: csv }),
  flag({ name: 'authorization-mode', key: 'authorizationModes', arg: 'mode,…', list: true,
    help: `Ordered authorizers: ${AUTHORIZATION_MODES.join(', ')}`, parse: authorizationModes }),
  flag({ name: 'anonymous-auth', key: 'anonymousAuth', arg: 'bool', boolean: true, help: 'Serve requests without credentials as system:anonymous', parse: bool }),
  flag({ name: 'token-auth-file', key: 'tokenAuthFile', arg: 'file', help: 'CSV of static bearer tokens: token,user,uid,"group1,group2"', parse: optionalPath }),
  flag({ name: 'enable-bootstrap-token-auth', key: 'enableBootstrapTokenAuth', arg: 'bool', boolean: true,
    help: 'Accept bootstrap tokens (kube-system bootstrap-token-<id> secrets); also runs tokencleaner and bootstrapsigner', parse: bool }),
  flag({ name: 'service-account-key-file', key: 'serviceAccountKeyFiles', arg: 'file,…', list: true,
    help: 'PEM keys (RSA/ECDSA, private or public, several per file) that verify service-account tokens (repeatable; default the signing key)', parse: csv }),
  flag({ name: 'service-account-signing-key-file', key: 'serviceAccountSigningKeyFile', arg: 'file',
    help: 'PEM private key that signs service-account tokens (default in dev mode: <data-dir>/pki/sa.key)', parse: optionalPath }),
  flag({ name: 'service-account-issuer', key: 'serviceAccountIssuers', arg: 'url', list: true,
    help: 'Issuer (iss) of service-account tokens; repeatable, the first one signs (default in dev mode: https://kubernetes.default.svc.cluster.local)', parse: issuer }),
  flag({ name: 'service-account-lookup', key: 'serviceAccountLookup', arg: 'bool', boolean: true,
    help: 'Service-account tokens need their service account (and bound objects) to still exist', parse: bool }),
  flag({ name: 'service-account-max-token-expiration', key: 'serviceAccountMaxTokenExpirationMs', arg: 'duration',
    help: 'Longest lifetime of a TokenRequest token (1h to 2^32s; 0 = no cap)',
    parse: (raw) => {
      const ms = duration(raw, false);
      if (ms !== 0 && (ms < 3_600_000 || ms > 2 ** 32 * 1000)) throw new BadValue('must be between 1h and 2^32 seconds');
      return ms;
    } }),
  flag({ name: 'api-audiences', key: 'apiAudiences', arg: 'aud,…', list: true,
    help: 'Audiences of the API; tokens must name one (default: the service-account issuers)', parse: csv }),
  flag({ name: 'controllers', key: 'controllers', arg: 'name,…', list: true,
    help: `Core controllers to run: * (defaults), ${CONTROLLERS.join(', ')}, -name disables`, parse: controllers }),
  flag({ name: 'authentication-token-webhook-config-file', key: 'authenticationTokenWebhookConfigFile', arg: 'file',
    help: 'Kubeconfig-format file naming an https token webhook (TokenReview)', parse: optionalPath }),
  flag({ name: 'authentication-token-webhook-cache-ttl', key: 'authenticationTokenWebhookCacheTtlMs', arg: 'duration',
    help: 'How long token webhook answers are cached', parse: (raw) => duration(raw, false) }),
  flag({ name: 'authentication-token-webhook-version', key: 'authenticationTokenWebhookVersion', arg: 'v1beta1|v1',
    help: 'authentication.k8s.io TokenReview version sent to the token webhook',
    parse: (raw) => { if (raw !== 'v1' && raw !== 'v1beta1') throw new BadValue('must be v1 or v1beta1'); return raw; } }),
  flag({ name: 'requestheader-client-ca-file', key: 'requestheaderClientCaFile', arg: 'file',
    help: 'CA bundle that signs authenticating-proxy client certificates; enables request-header authentication', parse: optionalPath }),
  flag({ name: 'requestheader-allowed-names', key: 'requestheaderAllowedNames', arg: 'name,…', list: true,
    help: 'Common names allowed for the proxy client certificate (empty = any signed by the CA)', parse: csv }),
  flag({ name: 'requestheader-username-headers', key: 'requestheaderUsernameHeaders', arg: 'header,…', list: true,
    help: 'Headers to read the user name from, first with a value wins (e.g. X-Remote-User)', parse: csv }),
  flag({ name: 'requestheader-uid-headers', key: 'requestheaderUidHeaders', arg: 'header,…', list: true,
    help: 'Headers to read the user UID from (e.g. X-Remote-Uid)', parse: csv }),
  flag({ name: 'requestheader-group-headers', key: 'requestheaderGroupHeaders', arg: 'header,…', list: true,
    help: 'Headers whose every value is a group (e.g. X-Remote-Group)', parse: csv }),
  flag({ name: 'requestheader-extra-headers-prefix', key: 'requestheaderExtraHeadersPrefix', arg: 'prefix,…', list: true,
    help: 'Header prefixes for extra user attributes (e.g. X-Remote-Extra-)', parse: csv }),
  flag({ name: 'proxy-client-cert-file', key: 'proxyClientCertFile', arg: 'file',
    help: 'Client certificate (PEM) presented to aggregated API backends; default: the dev PKI front-proxy-client', parse: optionalPath }),
  flag({ name: 'proxy-client-key-file', key: 'proxyClientKeyFile', arg: 'file', help: 'Private key of --proxy-client-cert-file', parse: optionalPath }),
  flag({ name: 'oidc-issuer-url', key: 'oidcIssuerUrl', arg: 'url', help: 'OpenID issuer (https); enables OIDC token authentication with --oidc-client-id',
    parse: (raw) => {
      if (!URL.canParse(raw) || new URL(raw).protocol !== 'https:') throw new BadValue('must be an https URL');
      if (/[?#]/.test(raw)) throw new BadValue('must not contain a query or fragment');
      return raw;
    } }),
  flag({ name: 'oidc-client-id', key: 'oidcClientId', arg: 'id', help: 'Client id that every OIDC token must be issued for (its audience)', parse: nonEmpty }),
  flag({ name: 'oidc-username-claim', key: 'oidcUsernameClaim', arg: 'claim', help: 'JWT claim used as the user name', parse: nonEmpty }),
  flag({ name: 'oidc-username-prefix', key: 'oidcUsernamePrefix', arg: 'prefix',
    help: 'Prefix of OIDC user names; "-" disables; default "<issuer>#" unless the claim is email', parse: (raw) => raw }),
  flag({ name: 'oidc-groups-claim', key: 'oidcGroupsClaim', arg: 'claim', help: 'JWT claim used as the groups (a string or an array of strings)', parse: nonEmpty }),
  flag({ name: 'oidc-groups-prefix', key: 'oidcGroupsPrefix', arg: 'prefix', help: 'Prefix of OIDC group names', parse: (raw) => raw }),
  flag({ name: 'oidc-required-claim', key: 'oidcRequiredClaims', arg: 'key=value,…', list: true, help: 'A claim the ID token must carry with this value (repeatable)',
    parse: (raw) => csv(raw).map((kv): readonly [string, string] => {
      const eq = kv.indexOf('=');
      if (eq <= 0) throw new BadValue('must be key=value', kv);
      return Object.freeze([kv.slice(0, eq), kv.slice(eq + 1)] as const);
    }) }),
  flag({ name: 'oidc-ca-file', key: 'oidcCaFile', arg: 'file', help: 'CA bundle of the OIDC provider\'s serving certificate (default: system roots)', parse: optionalPath }),
  flag({ name: 'oidc-signing-algs', key: 'oidcSigningAlgs', arg: 'alg,…', list: true, help: `Accepted OIDC signing algorithms: ${SUPPORTED_SIGNING_ALGS.join(', ')}`,
    parse: (raw) => {
      const algs = csv(raw);
      if (algs.length === 0) throw new BadValue('at least one algorithm is required');
      const bad = algs.find((a) => !(SUPPORTED_SIGNING_ALGS as readonly string[]).includes(a));
      if (bad !== undefined) throw new BadValue(`unsupported signing algorithm (one of ${SUPPORTED_SIGNING_ALGS.join(', ')})`, bad);
      return algs;
    } }),
  flag({ name: 'authentication-config', key: 'authenticationConfig', arg: 'file',
    help: 'AuthenticationConfiguration file (JWT authenticators, reloaded on change); excludes --oidc-*', parse: optionalPath }),
  flag({ name: 'watch-history', key: 'watchHistoryMs', arg: 'duration', help: 'How long watch history is kept before a watch gets 410 Gone',
    parse: (raw) => duration(raw, true) }),
  flag({ name: 'livez-grace-period', key: 'livezGracePeriodMs', arg: 'duration', help: 'Time after start during which /livez does not fail',
    parse: (raw) => duration(raw, false) }),
  flag({ name: 'shutdown-delay-duration', key: 'shutdownDelayMs', arg: 'duration', help: 'Time to keep serving after a shutdown signal while /readyz fails',
    parse: (raw) => duration(raw, false) }),
  flag({ name: 'max-request-body-bytes', key: 'maxRequestBodyBytes', arg: 'bytes', help: 'Largest accepted request body',
    parse: (raw) => int(raw, 1, Number.MAX_SAFE_INTEGER, 'must be a positive integer') }),
  flag({ name: 'request-timeout', key: 'requestTimeoutMs', arg: 'duration',
    help: 'Deadline of requests that are not long-running (watches and upgrades are); the timeout query parameter may shorten it', parse: (raw) => duration(raw, true) }),
  flag({ name: 'min-request-timeout', key: 'minRequestTimeoutS', arg: 'seconds',
    help: 'A watch without timeoutSeconds ends at a random point between this many seconds and twice that, so clients spread their reconnects',
    parse: (raw) => int(raw, 1, 2 ** 31 - 1, 'must be a positive number of seconds') }),
  flag({ name: 'max-requests-inflight', key: 'maxRequestsInflight', arg: 'int',
    help: 'Most non-mutating requests in flight at once (long-running ones excepted); more get 429; 0 = no limit',
    parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer') }),
  flag({ name: 'max-mutating-requests-inflight', key: 'maxMutatingRequestsInflight', arg: 'int',
    help: 'Most mutating requests in flight at once; more get 429; 0 = no limit',
    parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer') }),
  flag({ name: 'enable-priority-and-fairness', key: 'enablePriorityAndFairness', arg: 'bool', boolean: true,
    help: 'Classify requests by FlowSchema and queue them fairly per PriorityLevelConfiguration within the total of the two in-flight limits; false = the plain limits', parse: bool }),
  flag({ name: 'http2-max-streams-per-connection', key: 'http2MaxStreamsPerConnection', arg: 'int',
    help: 'Most concurrent streams a client may open on one HTTP/2 connection',
    parse: (raw) => int(raw, 1, 2 ** 31 - 1, 'must be a positive integer') }),
  flag({ name: 'max-connections-per-client-address', key: 'maxConnectionsPerClientAddress', arg: 'int',
    help: 'Most connections one client address may hold open at once (more are closed before the TLS handshake); behind a load balancer that hides client addresses, raise it or set 0 = no cap',
    parse: (raw) => int(raw, 0, 2 ** 31 - 1, 'must be a non-negative integer') }),
  flag({ name: 'goaway-chance', key: 'goawayChance', arg: 'fraction',
    help: 'Share of HTTP/2 requests after which the client is told to reconnect (GOAWAY), so long-lived clients spread over replicas; 0 (off) to 0.02',
    parse: (raw) => {
      const n = /^(0|0?\.[0-9]+)$/.test(raw) ? Number(raw) : NaN;
      if (!(n >= 0 && n <= 0.02)) throw new BadValue('must be a number from 0 to 0.02');
      return n;
    } }),
  flag({ name: 'authorization-config', key: 'authorizationConfig', arg: 'file',
    help: 'AuthorizationConfiguration file (ordered authorizers, several webhooks, reloaded on change); excludes --authorization-mode and --authorization-webhook-*', parse: optionalPath }),
  flag({ name: 'authorization-policy-file', key: 'authorizationPolicyFile', arg: 'file', help: 'ABAC policy file: one JSON policy per line (with --authorization-mode=ABAC)', parse: optionalPath }),
  flag({ name: 'authorization-webhook-config-file', key: 'authorizationWebhookConfigFile', arg: 'file',
    help: 'Kubeconfig-format file naming an https authorization webhook (SubjectAccessReview; with --authorization-mode=Webhook)', parse: optionalPath }),
  flag({ name: 'authorization-webhook-version', key: 'authorizationWebhookVersion', arg: 'v1beta1|v1',
    help: 'authorization.k8s.io SubjectAccessReview version sent to the authorization webhook',
    parse: (raw) => { if (raw !== 'v1' && raw !== 'v1beta1') throw new BadValue('must be v1 or v1beta1'); return raw; } }),
  flag({ name: 'authorization-webhook-cache-authorized-ttl', key: 'authorizationWebhookCacheAuthorizedTtlMs', arg: 'duration',
    help: 'How long allow answers of the authorization webhook are cached', parse: (raw) => duration(raw, false) }),
  flag({ name: 'authorization-webhook-cache-unauthorized-ttl', key: 'authorizationWebhookCacheUnauthorizedTtlMs', arg: 'duration',
    help: 'How long other answers of the authorization webhook are cached', parse: (raw) => duration(raw, false) }),
  flag({ name: 'enable-admission-plugins', key: 'enableAdmissionPlugins', arg: 'plugin,…', list: true,
    help: `Admission plugins to run: ${ADMISSION_PLUGINS.join(', ')}`,
    parse: (raw) => csv(raw).map((n) => {
      if (!(ADMISSION_PLUGINS as readonly string[]).includes(n)) throw new BadValue(`unknown or unsupported admission plugin (supported: ${ADMISSION_PLUGINS.join(', ')})`, n);
      return n as AdmissionPluginName;
    }) }),
  flag({ name: 'feature-gates', key: 'featureGates', arg: 'Name=bool,…',
    help: `Feature gates: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')} (the last --feature-gates wins)`,
    parse: (raw) => {
      try { return parseFeatureGates(raw); } catch (err) {
        if (err instanceof FeatureGateError) throw new BadValue(err.message, err.value);
        throw err;
      }
    } }),
  flag({ name: 'upstream', key: 'upstream', arg: 'url',
    help: 'Sidecar mode: authenticate and authorize every request, then proxy it to this http(s) URL with X-Remote-* identity headers', parse: (raw) => {
      if (!URL.canParse(raw) || !['http:', 'https:'].includes(new URL(raw).protocol)) throw new BadValue('must be an http:// or https:// URL');
      if (/[?#]/.test(raw)) throw new BadValue('must not contain a query or fragment');
      return raw.replace(/\/+$/, '');
    } }),
  flag({ name: 'upstream-ca-file', key: 'upstreamCaFile', arg: 'file', help: 'CA bundle of an https --upstream (default: system roots)', parse: optionalPath }),
  flag({ name: 'resource-attributes', key: 'resourceAttributesFile', arg: 'file',
    help: 'Sidecar mode: YAML/JSON with resourceAttributes {namespace, apiGroup, apiVersion, resource, subresource, name} authorized instead of the path', parse: optionalPath }),
  flag({ name: 'allow-paths', key: 'allowPaths', arg: 'pattern,…', list: true,
    help: 'Sidecar mode: only paths matching one of these patterns (* = one path segment) are proxied; others get 404', parse: csv }),
  flag({ name: 'ignore-paths', key: 'ignorePaths', arg: 'pattern,…', list: true,
    help: 'Sidecar mode: paths matching these patterns are proxied without authentication or authorization', parse: csv }),
  flag({ name: 'auth-header-fields-enabled', key: 'authHeaderFieldsEnabled', arg: 'bool', boolean: true,
    help: 'Sidecar mode: send the user and groups to the upstream in --auth-header-user-field-name and --auth-header-groups-field-name (kube-rbac-proxy)', parse: bool }),
  flag({ name: 'auth-header-user-field-name', key: 'authHeaderUserFieldName', arg: 'header',
    help: 'Sidecar mode: the header telling the upstream the user name; a client\'s own is always removed', parse: headerName }),
  flag({ name: 'auth-header-groups-field-name', key: 'authHeaderGroupsFieldName', arg: 'header',
    help: 'Sidecar mode: the header telling the upstream the user\'s groups; a client\'s own is always removed', parse: headerName }),
  flag({ name: 'auth-header-groups-field-separator', key: 'authHeaderGroupsFieldSeparator', arg: 'string',
    help: 'Sidecar mode: what joins the group names in the groups header', parse: headerSeparator }),
  flag({ name: 'core-backend-url', key: 'coreBackendUrl', arg: 'url',
    help: 'Serve the built-in groups from a remote `gatehouse core-backend` (https URL) instead of in-process', parse: (raw) => {
      if (!URL.canParse(raw) || new URL(raw).protocol !== 'https:') throw new BadValue('must be an https:// URL');
      const u = new URL(raw);
      if (u.search || u.hash || (u.pathname !== '/' && u.pathname !== '')) throw new BadValue('must be https://host:port with no path, query or fragment');
      return `${u.protocol}//${u.host}`;
    } }),
  flag({ name: 'core-backend-ca-file', key: 'coreBackendCaFile', arg: 'file', help: 'CA bundle of --core-backend-url\'s serving certificate', parse: optionalPath }),
  flag({ name: 'v', key: 'verbosity', arg: 'level', help: 'Log verbosity', parse: (raw) => int(raw, 0, 10, 'must be an integer between 0 and 10') }),
];

/**
 * kube-apiserver flags that Gatehouse will accept but does not implement yet (DESIGN.md section 3).
 * Recognised so that the message says "not supported yet" rather than "unknown"; `bool` ones take no
 * separate value. Implementing one = moving it from here into FLAGS.
 */
export const UNSUPPORTED_FLAGS: ReadonlyMap<string, 'bool' | 'value'> = new Map([
  ['runtime-config', 'value'],
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
  const givenNames = new Set([...values.keys()].map((f) => f.name));
  problems.push(...(opts.upstream !== undefined ? sidecarFlagChecks(opts, givenNames) : authorizationFlagChecks(opts, givenNames)));
  problems.push(...aggregationFlagChecks(opts));
  for (const v of Object.values(opts)) if (Array.isArray(v)) Object.freeze(v);
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
  if (o.requestheaderClientCaFile !== undefined && o.requestheaderUsernameHeaders.length === 0) {
    out.push('--requestheader-client-ca-file requires --requestheader-username-headers');
  }
  if ((o.proxyClientCertFile === undefined) !== (o.proxyClientKeyFile === undefined)) {
    out.push('--proxy-client-cert-file and --proxy-client-key-file must be given together');
  }
  if (o.serviceAccountSigningKeyFile !== undefined && o.serviceAccountIssuers.length === 0) {
    out.push('--service-account-signing-key-file requires --service-account-issuer');
  }
  if (o.serviceAccountIssuers.length > 0 && o.serviceAccountSigningKeyFile === undefined) {
    out.push('--service-account-issuer requires --service-account-signing-key-file');
  }
  out.push(...oidcChecks(o));
  const modes = o.authorizationModes;
  if (new Set(modes).size !== modes.length) {
    const dup = modes.find((m, i) => modes.indexOf(m) !== i)!;
    out.push(`invalid value "${dup}" for --authorization-mode: mode given more than once`);
  }
  return out;
}

/** kube's rules for the authorization flags: the configuration file excludes the mode and webhook flags; each file needs its mode. */
function authorizationFlagChecks(o: ServeOptions, given: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (o.authorizationConfig !== undefined) {
    const clash = ['authorization-mode', 'authorization-webhook-config-file', 'authorization-webhook-version',
      'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl'].filter((n) => given.has(n));
    if (clash.length > 0) out.push(`--authorization-config and ${clash.map((n) => `--${n}`).join(', ')} are mutually exclusive`);
    return out;
  }
  const modes: readonly string[] = o.authorizationModes;
  if (modes.includes('ABAC') && o.authorizationPolicyFile === undefined) out.push('--authorization-mode=ABAC requires --authorization-policy-file');
  if (!modes.includes('ABAC') && o.authorizationPolicyFile !== undefined) out.push('--authorization-policy-file requires ABAC in --authorization-mode');
  if (modes.includes('Webhook') && o.authorizationWebhookConfigFile === undefined) out.push('--authorization-mode=Webhook requires --authorization-webhook-config-file');
  if (!modes.includes('Webhook') && o.authorizationWebhookConfigFile !== undefined) out.push('--authorization-webhook-config-file requires Webhook in --authorization-mode');
  return out;
}

/** Sidecar mode authorizes through the cluster's SubjectAccessReview (webhook file or in-cluster), nothing else. */
function sidecarFlagChecks(o: ServeOptions, given: ReadonlySet<string>): string[] {
  const out: string[] = [];
  if (given.has('authorization-mode') && (o.authorizationModes.length !== 1 || o.authorizationModes[0] !== 'Webhook')) {
    out.push('--upstream authorizes through the cluster (SubjectAccessReview): --authorization-mode must be Webhook or unset');
  }
  const clash = ['authorization-config', 'authorization-policy-file', 'core-backend-url'].filter((n) => given.has(n));
  if (clash.length > 0) out.push(`--upstream and ${clash.map((n) => `--${n}`).join(', ')} are mutually exclusive`);
  if (o.allowPaths.length > 0 && o.ignorePaths.length > 0) out.push('--allow-paths and --ignore-paths are mutually exclusive');
  // The sidecar has no FlowSchemas of its own (gateway/sidecar/README.md): asking for them is a mistake to report, not to ignore.
  if (given.has('enable-priority-and-fairness') && o.enablePriorityAndFairness) {
    out.push('--upstream keeps the plain in-flight limits (no FlowSchemas of its own): --enable-priority-and-fairness must be false or unset');
  }
  if (o.authHeaderUserFieldName === o.authHeaderGroupsFieldName) {
    out.push(`invalid value "${o.authHeaderGroupsFieldName}" for --auth-header-groups-field-name: must differ from --auth-header-user-field-name`);
  }
  return out;
}

/** Flags that only mean something with --upstream or --core-backend-url. */
function aggregationFlagChecks(o: ServeOptions): string[] {
  const out: string[] = [];
  if (o.upstream === undefined) {
    const orphan = [o.upstreamCaFile !== undefined && '--upstream-ca-file', o.resourceAttributesFile !== undefined && '--resource-attributes',
      o.allowPaths.length > 0 && '--allow-paths', o.ignorePaths.length > 0 && '--ignore-paths',
      o.authHeaderFieldsEnabled && '--auth-header-fields-enabled'].filter((f): f is string => f !== false);
    if (orphan.length > 0) out.push(`${orphan.join(', ')} ${orphan.length > 1 ? 'require' : 'requires'} --upstream`);
  } else if (o.upstreamCaFile !== undefined && !o.upstream.startsWith('https:')) {
    out.push('--upstream-ca-file requires an https:// --upstream');
  }
  if (o.coreBackendCaFile !== undefined && o.coreBackendUrl === undefined) out.push('--core-backend-ca-file requires --core-backend-url');
  if (o.coreBackendUrl !== undefined && o.coreBackendCaFile === undefined) out.push('--core-backend-url requires --core-backend-ca-file');
  return out;
}

/** kube's rules for the --oidc-* flags, and their exclusion with --authentication-config. */
function oidcChecks(o: ServeOptions): string[] {
  const out: string[] = [];
  const set = [
    o.oidcIssuerUrl !== undefined && '--oidc-issuer-url', o.oidcClientId !== undefined && '--oidc-client-id',
    o.oidcUsernameClaim !== DEFAULTS.oidcUsernameClaim && '--oidc-username-claim', o.oidcUsernamePrefix !== undefined && '--oidc-username-prefix',
    o.oidcGroupsClaim !== undefined && '--oidc-groups-claim', o.oidcGroupsPrefix !== '' && '--oidc-groups-prefix',
    o.oidcRequiredClaims.length > 0 && '--oidc-required-claim', o.oidcCaFile !== undefined && '--oidc-ca-file',
    o.oidcSigningAlgs.join(',') !== DEFAULTS.oidcSigningAlgs.join(',') && '--oidc-signing-algs',
  ].filter((f): f is string => f !== false);
  if (o.authenticationConfig !== undefined && o.featureGates.StructuredAuthenticationConfiguration === false) {
    out.push('--authentication-config requires the StructuredAuthenticationConfiguration feature gate');
  }
  if (o.authenticationConfig !== undefined && set.length > 0) {
    out.push(`--authentication-config and --oidc-* flags are mutually exclusive (given: ${set.join(', ')})`);
  } else if ((o.oidcIssuerUrl === undefined) !== (o.oidcClientId === undefined)) {
    out.push('--oidc-issuer-url and --oidc-client-id must be given together');
  } else if (o.oidcIssuerUrl === undefined && set.length > 0) {
    out.push(`${set.join(', ')} ${set.length > 1 ? 'require' : 'requires'} --oidc-issuer-url`);
  }
  return out;
}

/** Help text generated from the table, defaults included. */
export function usage(): string {
  const rows = FLAGS.map((f) => {
    const left = `${f.name === 'v' ? '-v, --v' : `    --${f.name}`} ${f.boolean ? '' : f.arg}`.trimEnd();
    const d = DEFAULTS[f.key];
    const shown = f.key.endsWith('Ms') && typeof d === 'number' ? formatDuration(d)
      : Array.isArray(d) ? d.join(',') : d === undefined ? ''
        : typeof d === 'object' ? Object.entries(d).map(([k, v]) => `${k}=${String(v)}`).join(',') : String(d);
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
