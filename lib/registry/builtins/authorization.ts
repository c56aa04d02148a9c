// authorization.k8s.io: the access-review types. Create-only, never stored;
// the gateway answers them itself (gateway/reviews/access*.ts).
// SubjectAccessReview is also served in v1beta1, where the groups of the
// subject are `spec.group` (webhook peers of older kube-apiservers use it).
import type { ResourceType } from '../types.js';

function review(version: string, kind: string, plural: string, namespaced = false): ResourceType {
  return {
    group: 'authorization.k8s.io',
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    shortNames: [],
    categories: [],
    verbs: ['create'],
    subresources: [],
    nameRule: 'subdomain',
    createOnUpdate: false,
    fieldSelectors: {},
    servedBy: 'gateway',
  };
}

export const subjectAccessReviewsV1 = review('v1', 'SubjectAccessReview', 'subjectaccessreviews');
export const selfSubjectAccessReviewsV1 = review('v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews');
export const localSubjectAccessReviewsV1 = review('v1', 'LocalSubjectAccessReview', 'localsubjectaccessreviews', true);
export const selfSubjectRulesReviewsV1 = review('v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews');
export const subjectAccessReviewsV1beta1 = review('v1beta1', 'SubjectAccessReview', 'subjectaccessreviews');

export const AUTHORIZATION_TYPES: readonly ResourceType[] = [
  localSubjectAccessReviewsV1,
  selfSubjectAccessReviewsV1,
  selfSubjectRulesReviewsV1,
  subjectAccessReviewsV1,
  subjectAccessReviewsV1beta1,
];
