// --authentication-config: an AuthenticationConfiguration (YAML or JSON)
// parsed once into frozen typed objects, every problem reported with its
// field path in one message. Also turns the --oidc-* flags into the same
// typed JWT authenticator, as kube-apiserver does.
import { parse as parseYaml } from 'yaml';
import { formatConfigError } from '../../lib/config/error.js';
import { DEFAULT_SIGNING_ALGS, SUPPORTED_SIGNING_ALGS, type AuthenticationConfig, type JwtAuthenticatorSpec } from './authnconfig-types.js';
import { validateIssuer, type IssuerContext } from './authnconfig-issuer.js';
import { validateClaimMappings } from './authnconfig-mappings.js';
import { object, list, string, type Errors } from './authnconfig-read.js';
import { validateClaimRules, validateUserRules } from './authnconfig-rules.js';
import { fieldError, FieldPath } from './fielderrors.js';

export * from './authnconfig-types.js';

export const MAX_JWT_AUTHENTICATORS = 64;
export const AUTHENTICATION_CONFIG_KIND = 'AuthenticationConfiguration';
/** kube accepts v1alpha1, v1beta1 and v1; the spec spells the group with its neutral `svc.io`. */
export const AUTHENTICATION_CONFIG_VERSIONS: readonly string[] = Object.freeze(
  ['apiserver.config.k8s.io', 'apiserver.config.svc.io'].flatMap((g) => ['v1alpha1', 'v1beta1', 'v1'].map((v) => `${g}/${v}`)),
);

export interface AuthnConfigOptions {
  /** Issuers that JWT authenticators must not claim (the service-account issuer). */
  readonly disallowedIssuers?: readonly string[];
}

export type AuthnConfigResult = { readonly config: AuthenticationConfig } | { readonly error: string };

/** Parses and validates the file's text; `source` names it in the message. */
export function parseAuthenticationConfig(text: string, source: string, opts: AuthnConfigOptions = {}): AuthnConfigResult {
  const invalid = (reason: string) => ({ error: formatConfigError(reason, { kind: 'authentication configuration', value: source }) });
  let raw: unknown;
  try {
    raw = parseYaml(text, { uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    return invalid(err instanceof Error ? err.message.split('\n')[0]! : String(err));
  }
  const errs: Errors = [];
  const config = validateAuthenticationConfig(raw, { disallowedIssuers: opts.disallowedIssuers ?? [] }, errs);
  if (!config || errs.length > 0) return invalid(errs.join('; '));
  return { config };
}

function validateAuthenticationConfig(raw: unknown, ctx: IssuerContext, errs: Errors): AuthenticationConfig | undefined {
  const root = FieldPath.root();
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    errs.push('the document must be an object with apiVersion, kind and jwt');
    return undefined;
  }
  const o = object(raw, root, ['apiVersion', 'kind', 'jwt', 'anonymous'], errs)!;
  const apiVersion = string(o.apiVersion, root.child('apiVersion'), errs);
  if (apiVersion === undefined || apiVersion === '') errs.push(fieldError.required(root.child('apiVersion')));
  else if (!AUTHENTICATION_CONFIG_VERSIONS.includes(apiVersion))
    errs.push(fieldError.unsupported(root.child('apiVersion'), apiVersion, AUTHENTICATION_CONFIG_VERSIONS));
  const kind = string(o.kind, root.child('kind'), errs);
  if (kind !== AUTHENTICATION_CONFIG_KIND)
    errs.push(kind ? fieldError.unsupported(root.child('kind'), kind, [AUTHENTICATION_CONFIG_KIND]) : fieldError.required(root.child('kind')));
  if (o.anonymous !== undefined)
    errs.push(fieldError.forbidden(root.child('anonymous'), 'anonymous authentication is configured with --anonymous-auth; this field is not supported yet'));

  const jp = root.child('jwt');
  const items = list(o.jwt, jp, errs);
  if (items.length > MAX_JWT_AUTHENTICATORS) {
    errs.push(fieldError.tooMany(jp, items.length, MAX_JWT_AUTHENTICATORS));
    return undefined;
  }
  const jwt: JwtAuthenticatorSpec[] = [];
  const urls = new Map<string, number>();
  const discovery = new Map<string, number>();
  items.forEach((item, i) => {
    const spec = validateJwt(item, jp.index(i), ctx, errs);
    if (!spec) return;
    if (urls.has(spec.issuer.url)) errs.push(fieldError.duplicate(jp.index(i).child('issuer').child('url'), spec.issuer.url));
    urls.set(spec.issuer.url, i);
    const d = spec.issuer.discoveryURL;
    if (d !== undefined) {
      if (discovery.has(d)) errs.push(fieldError.duplicate(jp.index(i).child('issuer').child('discoveryURL'), d));
      discovery.set(d, i);
    }
    jwt.push(spec);
  });
  if (errs.length > 0 || !apiVersion) return undefined;
  return Object.freeze({ apiVersion, jwt: Object.freeze(jwt) });
}

function validateJwt(raw: unknown, p: FieldPath, ctx: IssuerContext, errs: Errors): JwtAuthenticatorSpec | undefined {
  const o = object(raw, p, ['issuer', 'claimValidationRules', 'claimMappings', 'userValidationRules'], errs);
  if (!o) {
    errs.push(fieldError.required(p.child('issuer').child('url')));
    return undefined;
  }
  const before = errs.length;
  const issuer = validateIssuer(o.issuer, p.child('issuer'), ctx, errs);
  const claimValidationRules = validateClaimRules(o.claimValidationRules, p.child('claimValidationRules'), errs);
  const claimValidationExpressions = claimValidationRules.flatMap((r) => ('expression' in r ? [r.expression] : []));
  const claimMappings = validateClaimMappings(o.claimMappings, p.child('claimMappings'), { claimValidationExpressions }, errs);
  const userValidationRules = validateUserRules(o.userValidationRules, p.child('userValidationRules'), errs);
  if (errs.length > before || !issuer || !claimMappings) return undefined;
  return Object.freeze({
    issuer,
    claimMappings,
    claimValidationRules: Object.freeze(claimValidationRules),
    userValidationRules: Object.freeze(userValidationRules),
    signingAlgs: Object.freeze([...SUPPORTED_SIGNING_ALGS]),
  });
}

/** The --oidc-* flags, as they are given (see flags.ts). */
export interface OidcFlagValues {
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly usernameClaim: string;
  readonly usernamePrefix: string | undefined;
  readonly groupsClaim: string | undefined;
  readonly groupsPrefix: string;
  readonly requiredClaims: readonly (readonly [string, string])[];
  /** Contents of --oidc-ca-file. */
  readonly caPem: string | undefined;
  readonly signingAlgs: readonly string[];
}

/**
 * The flags as one JWT authenticator, with kube's username prefix rule: a
 * claim other than `email` gets `<issuer>#` unless a prefix is given; `-`
 * disables prefixing.
 */
export function jwtFromFlags(f: OidcFlagValues): JwtAuthenticatorSpec {
  let prefix = f.usernamePrefix;
  if (prefix === undefined) prefix = f.usernameClaim === 'email' ? '' : `${f.issuerUrl}#`;
  else if (prefix === '-') prefix = '';
  return Object.freeze({
    issuer: Object.freeze({ url: f.issuerUrl, audiences: Object.freeze([f.clientId]), ...(f.caPem ? { certificateAuthority: f.caPem } : {}) }),
    claimValidationRules: Object.freeze(f.requiredClaims.map(([claim, requiredValue]) => Object.freeze({ claim, requiredValue }))),
    claimMappings: Object.freeze({
      username: Object.freeze({ claim: f.usernameClaim, prefix }),
      ...(f.groupsClaim ? { groups: Object.freeze({ claim: f.groupsClaim, prefix: f.groupsPrefix }) } : {}),
      extra: Object.freeze([]),
    }),
    userValidationRules: Object.freeze([]),
    signingAlgs: Object.freeze([...(f.signingAlgs.length > 0 ? f.signingAlgs : DEFAULT_SIGNING_ALGS)]),
  });
}
