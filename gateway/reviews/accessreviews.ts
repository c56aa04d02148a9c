// SubjectAccessReview (v1, v1beta1), SelfSubjectAccessReview and
// LocalSubjectAccessReview (authorization.k8s.io): run the authorizer chain
// on the spec's attributes and answer in the request's apiVersion with
// status.allowed, status.denied (a real deny only), status.reason. This is
// `kubectl auth can-i`, and what lets a kube-apiserver use Gatehouse as its
// authorization webhook.
import { badRequest } from '../../lib/api/status.js';
import { isPlainObject } from '../../lib/api/meta.js';
import type { Attributes, Decision } from '../authz/types.js';
import type { RequestContext } from '../pipeline/context.js';
import { attributesOf, readAccessSpec, readSubject, refuse } from './accessattributes.js';
import type { CreateAdmission } from '../../lib/api/backend.js';
import { readReview, sendReview, validateReview, type ReviewRequest } from './common.js';
import { serveSelfSubjectRulesReview, type RulesReviewOptions } from './accessrules.js';

export interface AccessReviewOptions {
  /** The chain's own answer, keeping "no opinion" apart from "deny". */
  evaluate(attrs: Attributes): Decision | Promise<Decision>;
  bodyLimit: number;
  /** The CBORServingAndStorage gate. */
  cbor?: boolean;
  /** Admission of the review's create (the core backend's plugins); absent = not admitted. */
  admission?: CreateAdmission | undefined;
}

async function answer(ctx: RequestContext, review: ReviewRequest, opts: AccessReviewOptions, attrs: Attributes): Promise<void> {
  await validateReview(ctx, review, opts.admission);
  const d = await opts.evaluate(attrs);
  const status: Record<string, unknown> = { allowed: d.kind === 'allow' };
  if (d.kind === 'deny') status['denied'] = true;
  if (d.reason) status['reason'] = d.reason;
  // As kube's SubjectAccessReview REST: the error of an authorizer that could not decide.
  if (d.error) status['evaluationError'] = d.error;
  sendReview(ctx, review, status);
}

export async function serveSubjectAccessReview(ctx: RequestContext, opts: AccessReviewOptions): Promise<void> {
  const review = await readReview(ctx, 'SubjectAccessReview', opts.bodyLimit, { admission: opts.admission, cbor: opts.cbor });
  const { spec, causes } = readAccessSpec(review.spec);
  const subject = readSubject(review.spec, ctx.info.apiVersion);
  refuse(review.kind, [...causes, ...subject.causes]);
  await answer(ctx, review, opts, attributesOf(subject.user, spec));
}

export async function serveSelfSubjectAccessReview(ctx: RequestContext, opts: AccessReviewOptions): Promise<void> {
  const review = await readReview(ctx, 'SelfSubjectAccessReview', opts.bodyLimit, { admission: opts.admission, cbor: opts.cbor });
  const { spec, causes } = readAccessSpec(review.spec);
  refuse(review.kind, causes);
  await answer(ctx, review, opts, attributesOf(ctx.user, spec));
}

export async function serveLocalSubjectAccessReview(ctx: RequestContext, opts: AccessReviewOptions): Promise<void> {
  const read = await readReview(ctx, 'LocalSubjectAccessReview', opts.bodyLimit, { namespaced: true, admission: opts.admission, cbor: opts.cbor });
  const namespace = ctx.info.namespace;
  const meta = isPlainObject(read.body['metadata']) ? read.body['metadata'] : {};
  const review: ReviewRequest = { ...read, body: { ...read.body, metadata: { ...meta, namespace } } };
  const { spec, causes } = readAccessSpec(review.spec);
  const subject = readSubject(review.spec, ctx.info.apiVersion);
  if (spec.nonResource)
    causes.push({ reason: 'FieldValueInvalid', field: 'spec.nonResourceAttributes', message: 'Invalid value: "": disallowed on this kind of request' });
  refuse(review.kind, [...causes, ...subject.causes]);
  const attrs = attributesOf(subject.user, spec);
  if (attrs.namespace !== namespace) throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
  await answer(ctx, review, opts, attrs);
}

/** The gateway-served authorization.k8s.io types, keyed as app.ts dispatches them (`<group>/<resource>`). */
export function accessReviewHandlers(opts: AccessReviewOptions & RulesReviewOptions): Record<string, (ctx: RequestContext) => Promise<void>> {
  return {
    'authorization.k8s.io/subjectaccessreviews': (ctx) => serveSubjectAccessReview(ctx, opts),
    'authorization.k8s.io/selfsubjectaccessreviews': (ctx) => serveSelfSubjectAccessReview(ctx, opts),
    'authorization.k8s.io/localsubjectaccessreviews': (ctx) => serveLocalSubjectAccessReview(ctx, opts),
    'authorization.k8s.io/selfsubjectrulesreviews': (ctx) => serveSelfSubjectRulesReview(ctx, opts),
  };
}
