// One interface for every authentication method; the union composes them.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';

export interface AuthnResult {
  readonly user: UserInfo;
  /** Audiences the credential was valid for, when the method checks audiences. */
  readonly audiences?: readonly string[];
  /** When the credential stops being valid (ms since the epoch), for caches. */
  readonly expiresAt?: number;
}

/**
 * Returns a result when the request's credential is this method's and valid,
 * `null` when the request carries no credential of this kind ("not mine"),
 * and throws AuthnError when it carries one that fails.
 */
export interface Authenticator {
  readonly name: string;
  authenticate(req: IncomingMessage): AuthnResult | null | Promise<AuthnResult | null>;
}

export class AuthnError extends Error {
  constructor(
    readonly authenticator: string,
    message: string,
  ) {
    super(message);
  }
}

/** Every authenticated user's group (the union adds it; the service-account verifier builds it in). */
export const AUTHENTICATED_GROUP = 'system:authenticated';
export const ANONYMOUS: UserInfo = Object.freeze({ username: 'system:anonymous', groups: Object.freeze(['system:unauthenticated']) as string[] });

/** Which method accepted a result (for the audit event), kept beside it rather than copied into it. */
const decidedBy = new WeakMap<AuthnResult, string>();

/** Notes the method that produced `result`, unless an inner method (a token method under a union) already did. */
export function noteMethod(result: AuthnResult, name: string): void {
  if (!decidedBy.has(result)) decidedBy.set(result, name);
}

/** The method that produced a result (`anonymous` for the anonymous user), or '' when none was noted. */
export function methodOf(result: AuthnResult): string {
  return decidedBy.get(result) ?? (result.user === ANONYMOUS ? 'anonymous' : '');
}

/** The issuer of a JWT a result was verified from (OIDC, service account), for the audit event. */
const issuedBy = new WeakMap<AuthnResult, string>();

export function noteIssuer(result: AuthnResult, issuer: string): void {
  issuedBy.set(result, issuer);
}

/** The JWT issuer that vouched for a result, or '' for credentials without one. */
export function issuerOf(result: AuthnResult): string {
  return issuedBy.get(result) ?? '';
}
