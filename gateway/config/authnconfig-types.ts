// The typed, frozen form of an AuthenticationConfiguration (and of the
// --oidc-* flags, which become one such JWT authenticator).
import type { CompiledExpression } from '../../lib/cel/index.js';

export type AudienceMatchPolicy = 'MatchAny';

export interface IssuerSpec {
  readonly url: string;
  /** Used as is when set; else `<url>/.well-known/openid-configuration`. */
  readonly discoveryURL?: string;
  /** PEM CA bundle trusted for discovery and JWKS; else the system roots. */
  readonly certificateAuthority?: string;
  readonly audiences: readonly string[];
  readonly audienceMatchPolicy?: AudienceMatchPolicy;
}

export type ClaimValidationRule =
  { readonly claim: string; readonly requiredValue: string } | { readonly expression: CompiledExpression; readonly message?: string };

export type PrefixedClaimOrExpression = { readonly claim: string; readonly prefix: string } | { readonly expression: CompiledExpression };

export type ClaimOrExpression = { readonly claim: string } | { readonly expression: CompiledExpression };

export interface ExtraMapping {
  readonly key: string;
  readonly valueExpression: CompiledExpression;
}

export interface ClaimMappings {
  readonly username: PrefixedClaimOrExpression;
  readonly groups?: PrefixedClaimOrExpression;
  readonly uid?: ClaimOrExpression;
  readonly extra: readonly ExtraMapping[];
}

export interface UserValidationRule {
  readonly expression: CompiledExpression;
  readonly message?: string;
}

export interface JwtAuthenticatorSpec {
  readonly issuer: IssuerSpec;
  readonly claimValidationRules: readonly ClaimValidationRule[];
  readonly claimMappings: ClaimMappings;
  readonly userValidationRules: readonly UserValidationRule[];
  /** Accepted JWS algorithms (from --oidc-signing-algs; the file form uses the default). */
  readonly signingAlgs: readonly string[];
}

export interface AuthenticationConfig {
  readonly apiVersion: string;
  readonly jwt: readonly JwtAuthenticatorSpec[];
}

/** Asymmetric algorithms kube-apiserver accepts for --oidc-signing-algs; never `none` or HS*. */
export const SUPPORTED_SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'] as const;
export const DEFAULT_SIGNING_ALGS: readonly string[] = Object.freeze(['RS256']);
