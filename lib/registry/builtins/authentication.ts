// authentication.k8s.io: the virtual review types. Create-only, never
// stored; the gateway answers them itself (gateway/reviews/).
import type { ResourceType } from '../types.js';

function review(version: string, kind: string, plural: string): ResourceType {
  return {
    group: 'authentication.k8s.io',
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: false,
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

export const tokenReviewsV1 = review('v1', 'TokenReview', 'tokenreviews');
export const tokenReviewsV1beta1 = review('v1beta1', 'TokenReview', 'tokenreviews');
export const selfSubjectReviewsV1 = review('v1', 'SelfSubjectReview', 'selfsubjectreviews');
// kubectl 1.27's `auth whoami` knows only v1beta1 and v1alpha1, where kube 1.27 served it.
export const selfSubjectReviewsV1beta1 = review('v1beta1', 'SelfSubjectReview', 'selfsubjectreviews');

export const AUTHENTICATION_TYPES: readonly ResourceType[] = [tokenReviewsV1, tokenReviewsV1beta1, selfSubjectReviewsV1, selfSubjectReviewsV1beta1];
