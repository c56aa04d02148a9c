// SubjectsReview (access.gatehouse.dev/v1alpha1): who the chain allows a
// request (gateway/authz/explain.ts whoCan). The spec is the
// SelfSubjectAccessReview spec (attributes only: the subjects are the answer),
// read and checked by the same code. Needs `create` on subjectsreviews.
import type { Attributes } from '../authz/types.js';
import type { WhoCan } from '../authz/explain.js';
import type { RequestContext } from '../pipeline/context.js';
import { ACCESS_GROUP } from '../../lib/registry/builtins/access.js';
import { cause, type StatusCause } from '../../lib/api/status.js';
import { hasOwn } from '../../lib/api/own.js';
import { attributesOf, readAccessSpec, refuse } from './accessattributes.js';
import { readReview, sendReview } from './common.js';

export interface SubjectsReviewOptions {
  whoCan(attrs: Attributes): WhoCan;
  bodyLimit: number;
  /** The CBORServingAndStorage gate. */
  cbor?: boolean;
}

export function subjectsStatus(w: WhoCan): Record<string, unknown> {
  const subjects = w.subjects.map((s) => ({
    kind: s.kind,
    ...(s.namespace !== undefined ? { namespace: s.namespace } : {}),
    name: s.name,
    allowedBy: s.allowedBy.map((b) => ({ name: b.name, type: b.type, ...b.facts })),
  }));
  return { subjects, ...(w.incomplete.length > 0 ? { incomplete: true, incompleteAuthorizers: w.incomplete } : {}) };
}

export async function serveSubjectsReview(ctx: RequestContext, opts: SubjectsReviewOptions): Promise<void> {
  // A subject in the question contradicts it (the subjects are the answer): 422, not an unknown field dropped with a warning.
  const subjectCauses: StatusCause[] = [];
  const review = await readReview(ctx, 'SubjectsReview', opts.bodyLimit, {
    cbor: opts.cbor,
    inspect: (raw) => {
      for (const f of ['user', 'groups', 'uid', 'extra']) {
        if (hasOwn(raw, f)) subjectCauses.push(cause.invalid(`spec.${f}`, raw[f], 'must be empty: a SubjectsReview asks who may'));
      }
    },
  });
  const { spec, causes } = readAccessSpec(review.spec);
  refuse(review.kind, [...causes, ...subjectCauses], ACCESS_GROUP);
  sendReview(ctx, review, subjectsStatus(opts.whoCan(attributesOf({ username: '', groups: [] }, spec))));
}
