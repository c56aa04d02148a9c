// access.gatehouse.dev/v1alpha1: Gatehouse's own access-insight types
// (gateway/reviews/explanations.ts, subjectsreview.ts). Hand-written in the
// table form of gen/ (no Go types exist to generate them from), so OpenAPI
// and field lookups see them as every built-in kind; the specs reuse the
// authorization.k8s.io/v1 review specs, as the handlers reuse their reading.
import type { SchemaPackage } from './types.js';

/** The fields every kind starts with. */
const HEAD = {
  apiVersion: ['string', 'APIVersion defines the versioned schema of this representation of an object.'],
  kind: ['string', 'Kind is a string value representing the REST resource this object represents.'],
  metadata: ['meta.ObjectMeta', 'Standard object metadata.'],
} as const;

export const accessV1alpha1: SchemaPackage = {
  alias: 'access',
  prefix: 'dev.gatehouse.access.v1alpha1',
  types: {
    SubjectAccessExplanation: {
      d: 'SubjectAccessExplanation asks why the authorizer chain allows or denies a request of a subject: every authorizer in order, what it decided and what matched. Its near misses include bindings to other subjects (a group the subject is not in, a ServiceAccount of its name in another namespace): creating one needs create on subjectaccessexplanations, whose holder may already ask SubjectAccessReview about any subject.',
      r: ['spec'],
      f: {
        ...HEAD,
        spec: ['authorization.SubjectAccessReviewSpec', 'The request being explained, as in SubjectAccessReview.'],
        status: ['access.SubjectAccessExplanationStatus', 'Filled in by the server.'],
      },
    },
    SelfSubjectAccessExplanation: {
      d: 'SelfSubjectAccessExplanation explains a request of the caller itself. Any authenticated user may create one, so it reveals only rules bound to the caller: never near misses of bindings to other subjects (group, serviceaccount namespace).',
      r: ['spec'],
      f: {
        ...HEAD,
        spec: ['authorization.SelfSubjectAccessReviewSpec', 'The request being explained, as in SelfSubjectAccessReview.'],
        status: ['access.SubjectAccessExplanationStatus', 'Filled in by the server.'],
      },
    },
    SubjectAccessExplanationStatus: {
      d: "The chain's answer and how each authorizer reached its part of it.",
      r: ['allowed'],
      f: {
        allowed: ['bool', 'True if the chain allows the request.'],
        denied: ['bool', 'True if an authorizer denied it (false with allowed false: nobody had an opinion).'],
        reason: ['string', "The chain's reason, as SubjectAccessReview gives it."],
        evaluationError: ['string', 'Errors of authorizers that could not decide.'],
        decidedBy: ['string', 'The name, as configured, of the authorizer that allowed or denied; empty when none did.'],
        steps: ['[]access.ExplanationStep', 'Every authorizer of the chain, in order.', { lt: 'atomic' }],
        nearMisses: [
          '[]access.NearMiss',
          "When not allowed: at most 10, closest first: rules bound to the subject that match every attribute of the request but one; in SubjectAccessExplanation only, also bindings at the request's scope that would apply with one more group or another ServiceAccount namespace.",
          { lt: 'atomic' },
        ],
      },
    },
    ExplanationStep: {
      d: "One authorizer's part in a decision.",
      r: ['name', 'type', 'decision'],
      f: {
        name: ['string', "The authorizer's name as configured."],
        type: ['string', 'Privileged, RBAC, Node, ABAC, Webhook, AlwaysAllow or AlwaysDeny.'],
        decision: ['string', 'Allow, Deny, NoOpinion, Error or Skipped (an earlier authorizer decided).'],
        reason: ['string', "The authorizer's reason."],
        rbac: ['access.RbacMatch', 'RBAC: the binding, role and rule that allowed.'],
        node: ['access.NodeMatch', 'Node: why the node may reach the object.'],
        abac: ['access.AbacMatch', 'ABAC: the policy that matched.'],
        webhook: ['access.WebhookTrace', 'Webhook: what it answered and how.'],
        privileged: ['access.PrivilegedMatch', 'The privileged-group bypass: the group that matched.'],
      },
    },
    RbacMatch: {
      d: "A binding, its role and one of the role's rules.",
      f: {
        binding: ['access.ObjectRef', 'The RoleBinding or ClusterRoleBinding.'],
        role: ['access.ObjectRef', 'The Role or ClusterRole it refers to.'],
        ruleIndex: ['int32', "The index of the rule in the role's rules."],
        subject: ['access.SubjectRef', "The binding's subject that made it apply."],
      },
    },
    ObjectRef: {
      d: 'A kind, namespace and name.',
      f: { kind: ['string', 'Kind.'], namespace: ['string', 'Namespace; empty for cluster-scoped objects.'], name: ['string', 'Name.'] },
    },
    SubjectRef: {
      d: 'A user, group or ServiceAccount.',
      f: { kind: ['string', 'User, Group or ServiceAccount.'], namespace: ['string', "The ServiceAccount's namespace."], name: ['string', 'Name.'] },
    },
    NodeMatch: {
      d: 'How the Node authorizer decided.',
      f: {
        node: ['string', 'The node the user is the agent of.'],
        rule: ['string', '"graph" (a path from the object to the node), "node-name" (the node\'s own objects), or "static" (kube\'s node rules).'],
        path: ['[]string', 'The objects from the requested one to the node, as kind namespace/name.', { lt: 'atomic' }],
      },
    },
    AbacMatch: {
      d: 'The ABAC policy that matched.',
      f: { line: ['int32', 'Its line in --authorization-policy-file (1-based).'], policy: ['raw', 'The policy, in v1beta1 meaning.'] },
    },
    WebhookTrace: {
      d: "A webhook authorizer's work.",
      f: {
        called: ['bool', 'Whether the webhook was asked (false when a match condition was false or the answer was cached).'],
        cached: ['bool', 'Whether the answer came from the cache.'],
        answer: ['raw', "The status of the webhook's SubjectAccessReview answer."],
        matchConditions: ['[]access.MatchConditionResult', 'Each matchConditions expression and its result.', { lt: 'atomic' }],
      },
    },
    MatchConditionResult: {
      d: 'One match condition.',
      f: { expression: ['string', 'The CEL expression.'], result: ['string', '"true", "false" or "error".'], error: ['string', 'The evaluation error.'] },
    },
    PrivilegedMatch: {
      d: 'The privileged group the user belongs to.',
      f: { group: ['string', 'The group (system:masters).'] },
    },
    SubjectsReview: {
      d: 'SubjectsReview asks who the authorizer chain allows a request: every user, group and ServiceAccount, with what allows each.',
      r: ['spec'],
      f: {
        ...HEAD,
        spec: ['authorization.SelfSubjectAccessReviewSpec', 'The request: exactly one of resourceAttributes and nonResourceAttributes.'],
        status: ['access.SubjectsReviewStatus', 'Filled in by the server.'],
      },
    },
    SubjectsReviewStatus: {
      d: 'The subjects allowed, and whether the list is complete.',
      f: {
        subjects: ['[]access.AllowedSubject', 'Groups, then users, then ServiceAccounts, by name.', { lt: 'atomic' }],
        incomplete: ['bool', 'True when an authorizer of the chain cannot list the subjects it allows (a webhook).'],
        incompleteAuthorizers: ['[]access.IncompleteAuthorizer', 'Those authorizers, and why.', { lt: 'atomic' }],
      },
    },
    AllowedSubject: {
      d: 'A subject the chain allows the request.',
      f: {
        kind: ['string', 'User, Group or ServiceAccount.'],
        namespace: ['string', "The ServiceAccount's namespace."],
        name: ['string', 'Name.'],
        allowedBy: [
          '[]access.ExplanationStep',
          "Each authorizer that allows it, with what allows it (name, type and the authorizer's facts; no decision).",
          { lt: 'atomic' },
        ],
      },
    },
    IncompleteAuthorizer: {
      d: 'An authorizer whose subjects cannot be listed.',
      f: { name: ['string', 'Its configured name.'], type: ['string', 'Its type.'], reason: ['string', 'Why.'] },
    },
    NearMiss: {
      d: "A rule bound to the subject that matches every attribute of the request but one; or (SubjectAccessExplanation only) a binding whose role grants the request but that names another group, or the subject's ServiceAccount name in another namespace.",
      f: {
        attribute: [
          'string',
          'verb, namespace, resourceName, apiGroup, resource or nonResourceURL; group or serviceaccount namespace (SubjectAccessExplanation only).',
        ],
        requested: ['string', "The request's value; for serviceaccount namespace the ServiceAccount's own namespace; absent for group."],
        granted: [
          '[]string',
          'What the rule (or binding, for namespace) grants instead; for group and serviceaccount namespace, the value the subject would need.',
          { lt: 'atomic' },
        ],
        rbac: ['access.RbacMatch', 'The binding, role and rule.'],
      },
    },
  },
};
