// access.gatehouse.dev: Gatehouse's own access-insight types. Create-only,
// never stored, answered by the gateway itself (gateway/reviews/explain*.ts,
// subjectsreview.ts), as the authorization.k8s.io reviews are. An alpha
// version: served only with --runtime-config=access.gatehouse.dev/v1alpha1=true
// (lib/registry/versions.ts says why).
import type { ResourceType } from '../types.js';

export const ACCESS_GROUP = 'access.gatehouse.dev';

function review(kind: string, plural: string): ResourceType {
  return {
    group: ACCESS_GROUP,
    version: 'v1alpha1',
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

export const subjectAccessExplanations = review('SubjectAccessExplanation', 'subjectaccessexplanations');
export const selfSubjectAccessExplanations = review('SelfSubjectAccessExplanation', 'selfsubjectaccessexplanations');

export const subjectsReviews = review('SubjectsReview', 'subjectsreviews');

export const ACCESS_TYPES: readonly ResourceType[] = [selfSubjectAccessExplanations, subjectAccessExplanations, subjectsReviews];
