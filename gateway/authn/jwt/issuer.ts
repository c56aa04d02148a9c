// One configured issuer: verify the JWS with the issuer's keys and the
// explicit algorithm allow-list, check iss/aud/exp/nbf, then the claim
// rules, the mappings and the user rules. Every failure is an AuthnError.
import type { errors as JoseErrors } from 'jose';
import { fromJson, type CelInput } from '../../../lib/cel/index.js';
import type { JwtAuthenticatorSpec } from '../../config/authnconfig-types.js';
import { AuthnError, type AuthnResult } from '../types.js';
import { checkClaims } from './claims.js';
import type { KeySource } from './keys.js';
import { checkUser, mapUser } from './mapping.js';

export const AUTHENTICATOR_NAME = 'oidc';

export class IssuerAuthenticator {
  constructor(
    readonly spec: JwtAuthenticatorSpec,
    readonly keys: KeySource,
    private readonly clock: () => number,
  ) {}

  async authenticate(token: string): Promise<AuthnResult> {
    const { issuer } = this.spec;
    let payload: Record<string, unknown>;
    // jose is imported on first use: its module loading is no part of a start (bench/startup.ts).
    const { errors, jwtVerify } = await import('jose');
    try {
      ({ payload } = await jwtVerify(token, this.keys.getKey, {
        algorithms: [...this.spec.signingAlgs],
        issuer: issuer.url,
        audience: [...issuer.audiences],
        requiredClaims: ['exp'],
        currentDate: new Date(this.clock()),
      }));
    } catch (err) {
      throw new AuthnError(AUTHENTICATOR_NAME, `issuer ${JSON.stringify(issuer.url)}: ${reason(err, errors)}`);
    }
    try {
      let cel: CelInput | undefined;
      const celClaims = (): CelInput => (cel ??= fromJson(payload));
      checkClaims(this.spec.claimValidationRules, payload, celClaims);
      const user = mapUser(this.spec.claimMappings, payload, celClaims);
      checkUser(this.spec.userValidationRules, user);
      const exp = payload.exp as number;
      return Object.freeze({ user, expiresAt: exp * 1000 });
    } catch (err) {
      throw new AuthnError(AUTHENTICATOR_NAME, `issuer ${JSON.stringify(issuer.url)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

function reason(err: unknown, joseErrors: typeof JoseErrors): string {
  if (err instanceof joseErrors.JOSEError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}
