// SubjectAccessExplanation and SelfSubjectAccessExplanation
// (access.gatehouse.dev/v1alpha1): the spec of a SubjectAccessReview, read and
// checked by the same code (accessattributes.ts), answered with the chain's
// decision and every authorizer's part in it (gateway/authz/explain.ts).
// Who may ask is the pipeline's business, as for the reviews: `create` on
// subjectaccessexplanations, or on selfsubjectaccessexplanations (every
// authenticated user, through gatehouse:self-access-explainer).
// What each reveals differs: the self form shows only rules bound to the
// caller; the privileged form also the near misses of bindings to other
// subjects (one more group, another ServiceAccount namespace), which its
// caller could find by asking SubjectAccessReview about those subjects
// (types.ts ExplainOptions; the folder README says why).
import type { Attributes, ExplainOptions } from '../authz/types.js';
import type { ChainExplanation, Step } from '../authz/explain.js';
import type { RequestContext } from '../pipeline/context.js';
import { ACCESS_GROUP } from '../../lib/registry/builtins/access.js';
import { attributesOf, readAccessSpec, readSubject, refuse } from './accessattributes.js';
import { readReview, sendReview, type ReviewRequest } from './common.js';

export interface ExplanationOptions {
  explain(attrs: Attributes, opts?: ExplainOptions): Promise<ChainExplanation>;
  bodyLimit: number;
  /** The CBORServingAndStorage gate. */
  cbor?: boolean;
}

/** A step as the API shows it: the authorizer's facts under their own keys (rbac, node, abac, webhook, privileged). */
function stepOf(s: Step): Record<string, unknown> {
  return { name: s.name, type: s.type, decision: s.decision, ...(s.reason ? { reason: s.reason } : {}), ...s.facts };
}

export function explanationStatus(e: ChainExplanation): Record<string, unknown> {
  const d = e.decision;
  const status: Record<string, unknown> = { allowed: d.kind === 'allow' };
  if (d.kind === 'deny') status['denied'] = true;
  if (d.reason) status['reason'] = d.reason;
  if (d.error) status['evaluationError'] = d.error;
  if (e.decidedBy !== undefined) status['decidedBy'] = e.decidedBy;
  status['steps'] = e.steps.map(stepOf);
  if (e.nearMisses.length > 0) {
    status['nearMisses'] = e.nearMisses.map((m) => ({
      attribute: m.attribute,
      ...(m.requested !== undefined ? { requested: m.requested } : {}),
      granted: m.granted,
      ...m.facts,
    }));
  }
  return status;
}

async function answer(ctx: RequestContext, review: ReviewRequest, opts: ExplanationOptions, attrs: Attributes, reveal: ExplainOptions): Promise<void> {
  sendReview(ctx, review, explanationStatus(await opts.explain(attrs, reveal)));
}

export async function serveSubjectAccessExplanation(ctx: RequestContext, opts: ExplanationOptions): Promise<void> {
  const review = await readReview(ctx, 'SubjectAccessExplanation', opts.bodyLimit, { cbor: opts.cbor });
  const { spec, causes } = readAccessSpec(review.spec);
  // The v1 spec: groups are `spec.groups`.
  const subject = readSubject(review.spec, 'v1');
  refuse(review.kind, [...causes, ...subject.causes], ACCESS_GROUP);
  await answer(ctx, review, opts, attributesOf(subject.user, spec), { otherSubjects: true });
}

export async function serveSelfSubjectAccessExplanation(ctx: RequestContext, opts: ExplanationOptions): Promise<void> {
  const review = await readReview(ctx, 'SelfSubjectAccessExplanation', opts.bodyLimit, { cbor: opts.cbor });
  const { spec, causes } = readAccessSpec(review.spec);
  refuse(review.kind, causes, ACCESS_GROUP);
  // Never other subjects' bindings: any authenticated user may ask this.
  await answer(ctx, review, opts, attributesOf(ctx.user, spec), { otherSubjects: false });
}

/** The gateway-served access.gatehouse.dev types, keyed as app.ts dispatches them (`<group>/<resource>`). */
export function explanationHandlers(opts: ExplanationOptions): Record<string, (ctx: RequestContext) => Promise<void>> {
  return {
    [`${ACCESS_GROUP}/subjectaccessexplanations`]: (ctx) => serveSubjectAccessExplanation(ctx, opts),
    [`${ACCESS_GROUP}/selfsubjectaccessexplanations`]: (ctx) => serveSelfSubjectAccessExplanation(ctx, opts),
  };
}
