// One interface for every authorization mode; the chain composes them.
import type { Trace } from '../../lib/tracing/span.js';
import type { AuthorizationAttributes, Decision } from '../../lib/api/authorization.js';
import type { FieldRequirement, LabelRequirement } from '../../lib/api/selectors.js';

export interface Attributes extends AuthorizationAttributes {
  /**
   * Parsed `fieldSelector` / `labelSelector` of list, watch and deletecollection
   * requests (kube's AuthorizeWithSelectors). Absent when the request has none,
   * for other verbs, or when the selector does not parse (an authorizer then
   * decides as for the unrestricted request, which is the wider one).
   */
  readonly fieldSelector?: readonly FieldRequirement[];
  readonly labelSelector?: readonly LabelRequirement[];
}

export type { Decision, DecisionKind } from '../../lib/api/authorization.js';

export interface Authorizer {
  readonly name: string;
  /** True for authorizers that only pass the question on (chains): the one that decided is inside and names itself. */
  readonly delegates?: boolean;
  /** `trace`: the recorded request's authorization span (which authorizer decided, a webhook's call). */
  authorize(attrs: Attributes, trace?: Trace): Decision | Promise<Decision>;
  /** Optional: the decision with what matched (see Explanation). */
  explain?(attrs: Attributes, opts?: ExplainOptions): Explanation | Promise<Explanation>;
  /** Optional: every subject it allows the request (SubjectsReview); see SubjectEnumerator. */
  subjects?(attrs: Attributes): readonly SubjectGrant[];
}

/** What an explanation may reveal beyond the subject's own grants. */
export interface ExplainOptions {
  /**
   * Near misses of bindings to OTHER subjects too: one more group, or the
   * same ServiceAccount name in another namespace. Only the privileged
   * SubjectAccessExplanation asks for them: its caller may already ask
   * SubjectAccessReview about any group or ServiceAccount, so they reveal
   * nothing it could not probe for; the self form would show any user other
   * subjects' grants, so it never does.
   */
  readonly otherSubjects?: boolean;
}

export const NO_OPINION: Decision = Object.freeze({ kind: 'no-opinion', reason: '' });

/**
 * What an authorizer can tell beyond its decision (access.gatehouse.dev
 * explanations). An authorizer that explains itself runs the same matching
 * code for `explain` as for `authorize`; one that does not is explained by its
 * decision alone (`explainOne`).
 */
export interface Explanation {
  readonly decision: Decision;
  /** What matched, under the authorizer type's key: `rbac`, `node`, `abac`, `webhook`, `privileged`. */
  readonly facts?: Readonly<Record<string, unknown>>;
  /** Rules bound to the subject that match every attribute but one (only when not allowed), closest first. */
  readonly nearMisses?: readonly NearMiss[];
}

export interface NearMiss {
  /**
   * verb, namespace, resourceName, apiGroup, resource or nonResourceURL (a
   * rule bound to the subject); with ExplainOptions.otherSubjects also
   * `group` and `serviceaccount namespace` (a binding to another subject
   * whose role grants the request).
   */
  readonly attribute: string;
  /** The request's value; for `serviceaccount namespace` the ServiceAccount's own; absent for `group`. */
  readonly requested?: string;
  /** What the rule grants instead; for `group` and `serviceaccount namespace`, the value the subject would need. */
  readonly granted: readonly string[];
  /** Where the rule is, in the authorizer's terms (RBAC: binding, role, rule index, subject). */
  readonly facts: Readonly<Record<string, unknown>>;
}

export async function explainOne(a: Authorizer, attrs: Attributes, opts?: ExplainOptions): Promise<Explanation> {
  if (a.explain) return a.explain(attrs, opts);
  return { decision: await a.authorize(attrs) };
}

/** A subject an authorizer allows a request to (SubjectsReview), with what allows it. */
export interface SubjectGrant {
  readonly kind: 'User' | 'Group' | 'ServiceAccount';
  readonly name: string;
  /** ServiceAccounts only. */
  readonly namespace?: string;
  /** What allows it, under the authorizer type's key (as Explanation.facts). */
  readonly facts: Readonly<Record<string, unknown>>;
}
