// Service-account tokens: JWTs signed by the service-account signing key
// (bound tokens from TokenRequest) or by the legacy token controller (tokens
// in `kubernetes.io/service-account-token` secrets). Two stages:
//   ServiceAccountJwtVerifier — signature (explicit algorithm allow-list per
//     key type, kid), iss, aud, exp and nbf; pure and expensive, so app.ts
//     wraps it in a CachedTokenAuthenticator keyed by the token's digest;
//   ServiceAccountTokenAuthenticator — with --service-account-lookup, the
//     service account (and the bound pod/secret/node, or the legacy secret)
//     must still exist with the same uid: checked on every request (from
//     the store's cache, live on a miss), so a deletion revokes at once —
//     one made through another process once its change arrives — even
//     while the verification is cached.
import { timingSafeEqual } from 'node:crypto';
import type { KObject, UserInfo } from '../../lib/api/meta.js';
import { isPlainObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { VerificationKey } from '../../lib/serviceaccount/keys.js';
import {
  ClaimError,
  LEGACY_ISSUER,
  identityFromClaims,
  serviceAccountUser,
  type ObjectRef,
  type ServiceAccountIdentity,
} from '../../lib/serviceaccount/claims.js';
import { secretValue } from '../../lib/bootstrap/token.js';
import type { BearerToken, TokenAuthenticator } from './token.js';
import { defaultSignatureThreads, prepareJws, signatureValid, type SignatureThreads } from './jwssignature.js';
import { AUTHENTICATED_GROUP, AuthnError, type AuthnResult } from './types.js';

/** kube's jwt.DefaultLeeway for exp, nbf and iat. */
export const DEFAULT_LEEWAY_SECONDS = 60;
const NAME = 'service-account';

/**
 * A verified token's result, carrying the identity its claims name so that the
 * lookup stage finds it again when the cache hands the same result back. A
 * private field, not a WeakMap: a WeakMap entry per verified token made every
 * full GC walk ten thousand ephemerons (the cache's worth), and spreading the
 * result (the union adding a group) leaves the field behind.
 */
class VerifiedToken implements AuthnResult {
  readonly #identity: ServiceAccountIdentity;
  readonly expiresAt?: number;
  readonly method = NAME;
  constructor(
    readonly user: UserInfo,
    readonly audiences: readonly string[],
    exp: number | undefined,
    identity: ServiceAccountIdentity,
    readonly issuer: string,
  ) {
    if (exp !== undefined) this.expiresAt = exp * 1000;
    this.#identity = identity;
    Object.freeze(this);
  }

  static identityOf(r: AuthnResult): ServiceAccountIdentity | undefined {
    return #identity in r ? (r as VerifiedToken).#identity : undefined;
  }
}

export interface JwtVerifierOptions {
  keys: readonly VerificationKey[];
  /** Issuers of bound tokens (--service-account-issuer). Legacy tokens carry `kubernetes/serviceaccount`. */
  issuers: readonly string[];
  /** The API server's audiences: what a legacy token (without aud) is valid for. */
  apiAudiences: readonly string[];
  clock?: () => number;
  leewaySeconds?: number;
  /** How signature checks are scheduled (jwssignature.ts); default: by the cores this process may use. */
  signatureThreads?: SignatureThreads;
}

function decodeJson(segment: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'));
    return isPlainObject(v) ? v : undefined;
  } catch {
    return undefined; // not JSON: not a token of this method
  }
}

function audiencesOf(aud: unknown): string[] | undefined {
  if (aud === undefined) return [];
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud as string[];
  return undefined;
}

function numericDate(v: unknown): number | undefined | null {
  if (v === undefined) return undefined;
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

export class ServiceAccountJwtVerifier implements TokenAuthenticator {
  readonly name = NAME;
  private readonly issuers: ReadonlySet<string>;
  private readonly algorithms: ReadonlySet<string>;
  private readonly clock: () => number;
  private readonly leeway: number;
  private readonly threads: SignatureThreads;

  constructor(private readonly opts: JwtVerifierOptions) {
    if (opts.keys.length === 0) throw new Error('service-account token verification needs at least one key');
    this.issuers = new Set(opts.issuers);
    this.algorithms = new Set(opts.keys.flatMap((k) => k.algorithms));
    this.clock = opts.clock ?? Date.now;
    this.leeway = opts.leewaySeconds ?? DEFAULT_LEEWAY_SECONDS;
    this.threads = opts.signatureThreads ?? defaultSignatureThreads();
  }

  async authenticateToken({ value: token }: BearerToken, audiences: readonly string[]): Promise<AuthnResult | null> {
    const parts = token.split('.');
    if (parts.length !== 3) return null;
    const payload = decodeJson(parts[1]!);
    const iss = payload?.['iss'];
    if (typeof iss !== 'string') return null;
    const legacy = iss === LEGACY_ISSUER;
    if (!legacy && !this.issuers.has(iss)) return null; // another issuer's JWT (OIDC, …)
    const fail = (why: string): never => {
      throw new AuthnError(this.name, why);
    };

    const header = decodeJson(parts[0]!);
    if (!header) fail('token header is not a JSON object');
    const alg = header!['alg'];
    if (typeof alg !== 'string' || !this.algorithms.has(alg)) fail(`signing algorithm ${JSON.stringify(alg)} is not allowed`);
    const kid = header!['kid'];
    if (kid !== undefined && typeof kid !== 'string') fail('kid is not a string');
    // No JWS extension is supported (jose and go-jose refuse unknown critical ones too).
    if (header!['crit'] !== undefined) fail('critical header parameters are not supported');
    const candidates = this.opts.keys.filter((k) => (kid === undefined || k.kid === kid) && k.algorithms.includes(alg as string));
    if (candidates.length === 0) fail(kid !== undefined ? `no verification key with kid "${String(kid)}"` : `no verification key for ${String(alg)}`);
    const jws = prepareJws(token, alg as string);
    if (!jws) fail('signature verification failed');
    let verified = false;
    for (const k of candidates) {
      // the token fails when no candidate key verifies it
      if (await signatureValid(jws!, k.key, this.threads)) {
        verified = true;
        break;
      }
    }
    if (!verified) fail('signature verification failed');

    const now = this.clock() / 1000;
    const exp = numericDate(payload!['exp']);
    const nbf = numericDate(payload!['nbf']);
    const iat = numericDate(payload!['iat']);
    if (exp === null || nbf === null || iat === null) fail('exp, nbf or iat is not a number');
    if (!legacy && exp === undefined) fail('bound token without exp');
    if (exp !== undefined && now > exp! + this.leeway) fail('token has expired');
    if (nbf !== undefined && now < nbf! - this.leeway) fail('token is not valid yet (nbf)');
    if (iat !== undefined && now < iat! - this.leeway) fail('token is issued in the future (iat)');

    const tokenAuds = audiencesOf(payload!['aud']);
    if (!tokenAuds) fail('aud is neither a string nor a list of strings');
    const valid = tokenAuds!.length === 0 ? this.opts.apiAudiences : tokenAuds!;
    const intersection = valid.filter((a) => audiences.includes(a));
    if (intersection.length === 0) fail(`token audiences ${JSON.stringify(valid)} are invalid for the target audiences ${JSON.stringify(audiences)}`);

    let id: ServiceAccountIdentity;
    try {
      id = identityFromClaims(payload!, legacy);
    } catch (err) {
      if (err instanceof ClaimError) return fail(err.message);
      throw err;
    }
    // In system:authenticated already, as the union would put it: a token seen once (the all-miss case) then
    // skips the union's per-result copy and its WeakMap entry.
    const user = serviceAccountUser(id);
    user.groups.push(AUTHENTICATED_GROUP);
    return new VerifiedToken(user, Object.freeze([...new Set(intersection)]), exp as number | undefined, id, iss);
  }
}

export interface ServiceAccountOptions {
  /** The verifier, usually cached. */
  verifier: TokenAuthenticator;
  objects: ObjectSource;
  /** --service-account-lookup: the service account and bound objects must still exist. */
  lookup: boolean;
}

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name = NAME;
  constructor(private readonly opts: ServiceAccountOptions) {}

  async authenticateToken(token: BearerToken, audiences: readonly string[]): Promise<AuthnResult | null> {
    const result = await this.opts.verifier.authenticateToken(token, audiences);
    if (!result) return null;
    const id = VerifiedToken.identityOf(result);
    if (!id) throw new AuthnError(this.name, 'verified token without an identity');
    if (this.opts.lookup) await this.stillValid(id, token.value);
    return result;
  }

  private async stillValid(id: ServiceAccountIdentity, token: string): Promise<void> {
    const { objects } = this.opts;
    const ns = id.namespace;
    const check = async (resource: string, namespace: string, ref: ObjectRef, what: string): Promise<KObject> => {
      const obj = await objects.lookup('', resource, namespace, ref.name);
      const where = namespace ? `${namespace}/${ref.name}` : ref.name;
      if (!obj) throw new AuthnError(this.name, `${what} ${where} not found`);
      if (obj.metadata.deletionTimestamp) throw new AuthnError(this.name, `${what} ${where} is being deleted`);
      if (ref.uid !== '' && obj.metadata.uid !== ref.uid)
        throw new AuthnError(this.name, `${what} ${where} uid ${obj.metadata.uid ?? ''} does not match the token's ${ref.uid}`);
      return obj;
    };
    await check('serviceaccounts', ns, id.serviceAccount, 'service account');
    if (id.legacy) {
      const secret = await check('secrets', ns, id.secret!, 'secret');
      const stored = Buffer.from(secretValue(secret, 'token') ?? '');
      const presented = Buffer.from(token);
      if (stored.length !== presented.length || !timingSafeEqual(stored, presented)) {
        throw new AuthnError(this.name, `token does not match the server's copy in secret ${ns}/${id.secret!.name}`);
      }
      return;
    }
    if (id.secret) await check('secrets', ns, id.secret, 'secret');
    if (id.pod) await check('pods', ns, id.pod, 'pod');
    else if (id.node) await check('nodes', '', id.node, 'node');
  }
}
