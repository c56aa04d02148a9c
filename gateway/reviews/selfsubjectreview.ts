// SelfSubjectReview (authentication.k8s.io/v1): who the server thinks the
// caller is, after authentication and impersonation (`kubectl auth whoami`).
import type { RequestContext } from '../pipeline/context.js';
import type { CreateAdmission } from '../../lib/api/backend.js';
import { readReview, sendReview, validateReview } from './common.js';

export async function serveSelfSubjectReview(ctx: RequestContext, bodyLimit: number, admission?: CreateAdmission, cbor = false): Promise<void> {
  const review = await readReview(ctx, 'SelfSubjectReview', bodyLimit, { admission, cbor });
  await validateReview(ctx, review, admission);
  const u = ctx.user;
  const userInfo = {
    username: u.username,
    ...(u.uid ? { uid: u.uid } : {}),
    groups: [...u.groups],
    ...(u.extra && Object.keys(u.extra).length > 0 ? { extra: u.extra } : {}),
  };
  // SelfSubjectReview has no spec; kube-apiserver answers without one.
  sendReview(ctx, review, { userInfo }, null);
}
