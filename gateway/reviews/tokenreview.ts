// TokenReview (authentication.k8s.io v1 and v1beta1): runs Gatehouse's token
// authenticators on spec.token for spec.audiences (default: the API server's
// own) and answers with the request's apiVersion: status.authenticated, the
// user (with system:authenticated, as kube-apiserver's request authenticator
// adds it), status.audiences = the intersection, status.error on failure.
// This is what lets a real kube-apiserver use Gatehouse as its token webhook.
import { badRequest } from '../../lib/api/status.js';
import { AuthnError, type AuthnResult } from '../authn/types.js';
import { BearerToken, type TokenAuthenticator } from '../authn/token.js';
import { withAuthenticatedGroup } from '../authn/union.js';
import type { RequestContext } from '../pipeline/context.js';
import type { CreateAdmission } from '../../lib/api/backend.js';
import { readReview, sendReview, validateReview } from './common.js';

export interface TokenReviewOptions {
  tokens: TokenAuthenticator;
  apiAudiences: readonly string[];
  bodyLimit: number;
  /** The CBORServingAndStorage gate. */
  cbor?: boolean;
  /** Admission of the review's create (the core backend's plugins); absent = not admitted. */
  admission?: CreateAdmission | undefined;
  log(msg: string): void;
}

function stringList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) throw badRequest(`TokenReview.${field} must be a list of strings`);
  return v as string[];
}

export async function serveTokenReview(ctx: RequestContext, opts: TokenReviewOptions): Promise<void> {
  const review = await readReview(ctx, 'TokenReview', opts.bodyLimit, { admission: opts.admission, cbor: opts.cbor });
  const token = review.spec['token'];
  if (typeof token !== 'string' || token === '') throw badRequest('token is required for TokenReview in authentication');
  const requested = stringList(review.spec['audiences'], 'spec.audiences');
  const audiences = requested.length > 0 ? requested : opts.apiAudiences;
  await validateReview(ctx, review, opts.admission);

  let result: AuthnResult | null = null;
  let error: string | undefined;
  try {
    result = await opts.tokens.authenticateToken(new BearerToken(token), audiences);
  } catch (err) {
    if (!(err instanceof AuthnError)) throw err;
    error = err.message;
  }
  let validFor = result?.audiences;
  if (result && validFor === undefined && audiences.length > 0 && opts.apiAudiences.length > 0) {
    // An audience-agnostic method (static or bootstrap token) is valid for the API server's audiences only.
    validFor = audiences.filter((a) => opts.apiAudiences.includes(a));
    if (validFor.length === 0) {
      error = `token audiences ${JSON.stringify(audiences)} is invalid for the target audiences ${JSON.stringify(opts.apiAudiences)}`;
      result = null;
    }
  }
  const status: Record<string, unknown> = { authenticated: result !== null };
  if (result) {
    const u = withAuthenticatedGroup(result).user;
    status['user'] = { username: u.username, ...(u.uid ? { uid: u.uid } : {}), groups: [...u.groups], ...(u.extra ? { extra: u.extra } : {}) };
    if (validFor && validFor.length > 0) status['audiences'] = [...validFor];
  } else {
    if (error !== undefined) status['error'] = error;
    opts.log(`token review by "${ctx.user.username}": not authenticated${error ? `: ${error}` : ''}`);
  }
  sendReview(ctx, review, status);
}
