// Who the caller is: client certificates, tokens, service accounts, OIDC, the token webhook, the authenticating proxy.
import type { ServeOptions } from '../flags.js';
import { SUPPORTED_SIGNING_ALGS } from '../authnconfig-types.js';
import { ConfigError } from '../../../lib/config/error.js';
import { bool, csv, duration, flagsOf, nonEmpty, optionalPath, requires, type OptionGroup } from './flag.js';

export interface AuthenticationOptions {
  readonly clientCaFiles: readonly string[];
  readonly anonymousAuth: boolean;
  readonly tokenAuthFile: string | undefined;
  readonly enableBootstrapTokenAuth: boolean;
  readonly serviceAccountKeyFiles: readonly string[];
  readonly serviceAccountSigningKeyFile: string | undefined;
  readonly serviceAccountIssuers: readonly string[];
  readonly serviceAccountLookup: boolean;
  /** 0 = no cap. */
  readonly serviceAccountMaxTokenExpirationMs: number;
  readonly apiAudiences: readonly string[];
  readonly authenticationTokenWebhookConfigFile: string | undefined;
  readonly authenticationTokenWebhookCacheTtlMs: number;
  readonly authenticationTokenWebhookVersion: 'v1' | 'v1beta1';
  readonly requestheaderClientCaFile: string | undefined;
  readonly requestheaderAllowedNames: readonly string[];
  readonly requestheaderUsernameHeaders: readonly string[];
  readonly requestheaderUidHeaders: readonly string[];
  readonly requestheaderGroupHeaders: readonly string[];
  readonly requestheaderExtraHeadersPrefix: readonly string[];
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
}

const flag = flagsOf<AuthenticationOptions>();

export const authentication: OptionGroup<AuthenticationOptions> = {
  title: 'Authentication',
  defaults: {
    clientCaFiles: [],
    anonymousAuth: true,
    tokenAuthFile: undefined,
    enableBootstrapTokenAuth: false,
    serviceAccountKeyFiles: [],
    serviceAccountSigningKeyFile: undefined,
    serviceAccountIssuers: [],
    serviceAccountLookup: true,
    serviceAccountMaxTokenExpirationMs: 0,
    apiAudiences: [],
    authenticationTokenWebhookConfigFile: undefined,
    authenticationTokenWebhookCacheTtlMs: 2 * 60_000,
    authenticationTokenWebhookVersion: 'v1beta1',
    requestheaderClientCaFile: undefined,
    requestheaderAllowedNames: [],
    requestheaderUsernameHeaders: [],
    requestheaderUidHeaders: [],
    requestheaderGroupHeaders: [],
    requestheaderExtraHeadersPrefix: [],
    oidcIssuerUrl: undefined,
    oidcClientId: undefined,
    oidcUsernameClaim: 'sub',
    oidcUsernamePrefix: undefined,
    oidcGroupsClaim: undefined,
    oidcGroupsPrefix: '',
    oidcRequiredClaims: [],
    oidcCaFile: undefined,
    oidcSigningAlgs: ['RS256'],
    authenticationConfig: undefined,
  },
  flags: [
    flag({
      name: 'client-ca-file',
      key: 'clientCaFiles',
      arg: 'file,…',
      list: true,
      help: 'CA bundles that sign client certificates (repeatable)',
      parse: csv,
    }),
    flag({
      name: 'anonymous-auth',
      key: 'anonymousAuth',
      arg: 'bool',
      boolean: true,
      help: 'Serve requests without credentials as system:anonymous',
      parse: bool,
    }),
    flag({
      name: 'token-auth-file',
      key: 'tokenAuthFile',
      arg: 'file',
      help: 'CSV of static bearer tokens: token,user,uid,"group1,group2"',
      parse: optionalPath,
    }),
    flag({
      name: 'enable-bootstrap-token-auth',
      key: 'enableBootstrapTokenAuth',
      arg: 'bool',
      boolean: true,
      help: 'Accept bootstrap tokens (kube-system bootstrap-token-<id> secrets); also runs tokencleaner and bootstrapsigner',
      parse: bool,
    }),
    flag({
      name: 'service-account-key-file',
      key: 'serviceAccountKeyFiles',
      arg: 'file,…',
      list: true,
      help: 'PEM keys (RSA/ECDSA, private or public, several per file) that verify service-account tokens (repeatable; default the signing key)',
      parse: csv,
    }),
    flag({
      name: 'service-account-signing-key-file',
      key: 'serviceAccountSigningKeyFile',
      arg: 'file',
      help: 'PEM private key that signs service-account tokens (default in dev mode: <data-dir>/pki/sa.key)',
      parse: optionalPath,
    }),
    flag({
      name: 'service-account-issuer',
      key: 'serviceAccountIssuers',
      arg: 'url',
      list: true,
      help: 'Issuer (iss) of service-account tokens; repeatable, the first one signs (default in dev mode: https://kubernetes.default.svc.cluster.local)',
      parse: issuer,
    }),
    flag({
      name: 'service-account-lookup',
      key: 'serviceAccountLookup',
      arg: 'bool',
      boolean: true,
      help: 'Service-account tokens need their service account (and bound objects) to still exist',
      parse: bool,
    }),
    flag({
      name: 'service-account-max-token-expiration',
      key: 'serviceAccountMaxTokenExpirationMs',
      arg: 'duration',
      help: 'Longest lifetime of a TokenRequest token (1h to 2^32s; 0 = no cap)',
      parse: (raw) => {
        const ms = duration(raw, false);
        if (ms !== 0 && (ms < 3_600_000 || ms > 2 ** 32 * 1000)) throw new ConfigError('must be between 1h and 2^32 seconds');
        return ms;
      },
    }),
    flag({
      name: 'api-audiences',
      key: 'apiAudiences',
      arg: 'aud,…',
      list: true,
      help: 'Audiences of the API; tokens must name one (default: the service-account issuers)',
      parse: csv,
    }),
    flag({
      name: 'authentication-token-webhook-config-file',
      key: 'authenticationTokenWebhookConfigFile',
      arg: 'file',
      help: 'Kubeconfig-format file naming an https token webhook (TokenReview)',
      parse: optionalPath,
    }),
    flag({
      name: 'authentication-token-webhook-cache-ttl',
      key: 'authenticationTokenWebhookCacheTtlMs',
      arg: 'duration',
      help: 'How long token webhook answers are cached',
      parse: (raw) => duration(raw, false),
    }),
    flag({
      name: 'authentication-token-webhook-version',
      key: 'authenticationTokenWebhookVersion',
      arg: 'v1beta1|v1',
      help: 'authentication.k8s.io TokenReview version sent to the token webhook',
      parse: (raw) => {
        if (raw !== 'v1' && raw !== 'v1beta1') throw new ConfigError('must be v1 or v1beta1');
        return raw;
      },
    }),
    flag({
      name: 'requestheader-client-ca-file',
      key: 'requestheaderClientCaFile',
      arg: 'file',
      help: 'CA bundle that signs authenticating-proxy client certificates; enables request-header authentication',
      parse: optionalPath,
    }),
    flag({
      name: 'requestheader-allowed-names',
      key: 'requestheaderAllowedNames',
      arg: 'name,…',
      list: true,
      help: 'Common names allowed for the proxy client certificate (empty = any signed by the CA)',
      parse: csv,
    }),
    flag({
      name: 'requestheader-username-headers',
      key: 'requestheaderUsernameHeaders',
      arg: 'header,…',
      list: true,
      help: 'Headers to read the user name from, first with a value wins (e.g. X-Remote-User)',
      parse: csv,
    }),
    flag({
      name: 'requestheader-uid-headers',
      key: 'requestheaderUidHeaders',
      arg: 'header,…',
      list: true,
      help: 'Headers to read the user UID from (e.g. X-Remote-Uid)',
      parse: csv,
    }),
    flag({
      name: 'requestheader-group-headers',
      key: 'requestheaderGroupHeaders',
      arg: 'header,…',
      list: true,
      help: 'Headers whose every value is a group (e.g. X-Remote-Group)',
      parse: csv,
    }),
    flag({
      name: 'requestheader-extra-headers-prefix',
      key: 'requestheaderExtraHeadersPrefix',
      arg: 'prefix,…',
      list: true,
      help: 'Header prefixes for extra user attributes (e.g. X-Remote-Extra-)',
      parse: csv,
    }),
    flag({
      name: 'oidc-issuer-url',
      key: 'oidcIssuerUrl',
      arg: 'url',
      help: 'OpenID issuer (https); enables OIDC token authentication with --oidc-client-id',
      parse: (raw) => {
        if (!URL.canParse(raw) || new URL(raw).protocol !== 'https:') throw new ConfigError('must be an https URL');
        if (/[?#]/.test(raw)) throw new ConfigError('must not contain a query or fragment');
        return raw;
      },
    }),
    flag({
      name: 'oidc-client-id',
      key: 'oidcClientId',
      arg: 'id',
      help: 'Client id that every OIDC token must be issued for (its audience)',
      parse: nonEmpty,
    }),
    flag({ name: 'oidc-username-claim', key: 'oidcUsernameClaim', arg: 'claim', help: 'JWT claim used as the user name', parse: nonEmpty }),
    flag({
      name: 'oidc-username-prefix',
      key: 'oidcUsernamePrefix',
      arg: 'prefix',
      help: 'Prefix of OIDC user names; "-" disables; default "<issuer>#" unless the claim is email',
      parse: (raw) => raw,
    }),
    flag({
      name: 'oidc-groups-claim',
      key: 'oidcGroupsClaim',
      arg: 'claim',
      help: 'JWT claim used as the groups (a string or an array of strings)',
      parse: nonEmpty,
    }),
    flag({ name: 'oidc-groups-prefix', key: 'oidcGroupsPrefix', arg: 'prefix', help: 'Prefix of OIDC group names', parse: (raw) => raw }),
    flag({
      name: 'oidc-required-claim',
      key: 'oidcRequiredClaims',
      arg: 'key=value,…',
      list: true,
      help: 'A claim the ID token must carry with this value (repeatable)',
      parse: (raw) =>
        csv(raw).map((kv): readonly [string, string] => {
          const eq = kv.indexOf('=');
          if (eq <= 0) throw new ConfigError('must be key=value', { value: kv });
          return Object.freeze([kv.slice(0, eq), kv.slice(eq + 1)] as const);
        }),
    }),
    flag({
      name: 'oidc-ca-file',
      key: 'oidcCaFile',
      arg: 'file',
      help: "CA bundle of the OIDC provider's serving certificate (default: system roots)",
      parse: optionalPath,
    }),
    flag({
      name: 'oidc-signing-algs',
      key: 'oidcSigningAlgs',
      arg: 'alg,…',
      list: true,
      help: `Accepted OIDC signing algorithms: ${SUPPORTED_SIGNING_ALGS.join(', ')}`,
      parse: (raw) => {
        const algs = csv(raw);
        if (algs.length === 0) throw new ConfigError('at least one algorithm is required');
        const bad = algs.find((a) => !(SUPPORTED_SIGNING_ALGS as readonly string[]).includes(a));
        if (bad !== undefined) throw new ConfigError(`unsupported signing algorithm (one of ${SUPPORTED_SIGNING_ALGS.join(', ')})`, { value: bad });
        return algs;
      },
    }),
    flag({
      name: 'authentication-config',
      key: 'authenticationConfig',
      arg: 'file',
      help: 'AuthenticationConfiguration file (JWT authenticators, reloaded on change); excludes --oidc-*',
      parse: optionalPath,
    }),
  ],
  checks(o) {
    const out: string[] = [];
    if (o.requestheaderClientCaFile !== undefined && o.requestheaderUsernameHeaders.length === 0) {
      out.push('--requestheader-client-ca-file requires --requestheader-username-headers');
    }
    if (o.serviceAccountSigningKeyFile !== undefined && o.serviceAccountIssuers.length === 0) {
      out.push('--service-account-signing-key-file requires --service-account-issuer');
    }
    if (o.serviceAccountIssuers.length > 0 && o.serviceAccountSigningKeyFile === undefined) {
      out.push('--service-account-issuer requires --service-account-signing-key-file');
    }
    out.push(...oidcChecks(o));
    return out;
  },
};

function issuer(raw: string): string[] {
  if (nonEmpty(raw).includes(':') && !URL.canParse(raw)) throw new ConfigError('must be a URL when it contains ":"');
  return [raw];
}

/** kube's rules for the --oidc-* flags, and their exclusion with --authentication-config. */
function oidcChecks(o: ServeOptions): string[] {
  const out: string[] = [];
  const d = authentication.defaults;
  const set = [
    o.oidcIssuerUrl !== undefined && '--oidc-issuer-url',
    o.oidcClientId !== undefined && '--oidc-client-id',
    o.oidcUsernameClaim !== d.oidcUsernameClaim && '--oidc-username-claim',
    o.oidcUsernamePrefix !== undefined && '--oidc-username-prefix',
    o.oidcGroupsClaim !== undefined && '--oidc-groups-claim',
    o.oidcGroupsPrefix !== '' && '--oidc-groups-prefix',
    o.oidcRequiredClaims.length > 0 && '--oidc-required-claim',
    o.oidcCaFile !== undefined && '--oidc-ca-file',
    o.oidcSigningAlgs.join(',') !== d.oidcSigningAlgs.join(',') && '--oidc-signing-algs',
  ].filter((f): f is string => f !== false);
  if (o.authenticationConfig !== undefined && o.featureGates.StructuredAuthenticationConfiguration === false) {
    out.push('--authentication-config requires the StructuredAuthenticationConfiguration feature gate');
  }
  if (o.authenticationConfig !== undefined && set.length > 0) {
    out.push(`--authentication-config and --oidc-* flags are mutually exclusive (given: ${set.join(', ')})`);
  } else if ((o.oidcIssuerUrl === undefined) !== (o.oidcClientId === undefined)) {
    out.push('--oidc-issuer-url and --oidc-client-id must be given together');
  } else if (o.oidcIssuerUrl === undefined && set.length > 0) {
    out.push(requires(set, '--oidc-issuer-url'));
  }
  return out;
}
