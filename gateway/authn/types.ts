// One interface for every authentication method; the union composes them.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import type { Trace } from '../../lib/tracing/span.js';

export interface AuthnResult {
  readonly user: UserInfo;
  /** Audiences the credential was valid for, when the method checks audiences. */
  readonly audiences?: readonly string[];
  /** When the credential stops being valid (ms since the epoch), for caches. */
  readonly expiresAt?: number;
  /**
   * The method that accepted the credential (the audit event names it), stamped by the method
   * when it makes the result: results are cached and shared, so no request adds it.
   */
  readonly method?: string;
  /** The issuer of the JWT the result was verified from (OIDC, service account), for the audit event. */
  readonly issuer?: string;
}

/**
 * Returns a result when the request's credential is this method's and valid,
 * `null` when the request carries no credential of this kind ("not mine"),
 * and throws AuthnError when it carries one that fails.
 */
export interface Authenticator {
  readonly name: string;
  /** `trace`: the recorded request's authentication span, for a method that calls out (a webhook). */
  authenticate(req: IncomingMessage, trace?: Trace): AuthnResult | null | Promise<AuthnResult | null>;
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

/** The anonymous user's result: one frozen object, its method stamped like any other. */
export const ANONYMOUS_RESULT: AuthnResult = Object.freeze({ user: ANONYMOUS, method: 'anonymous' });

/** The method that produced a result, or '' when none was stamped. */
export function methodOf(result: AuthnResult): string {
  return result.method ?? (result.user === ANONYMOUS ? 'anonymous' : '');
}

/** The JWT issuer that vouched for a result, or '' for credentials without one. */
export function issuerOf(result: AuthnResult): string {
  return result.issuer ?? '';
}
