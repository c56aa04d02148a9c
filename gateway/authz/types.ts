// One interface for every authorization mode; the chain composes them.
import type { UserInfo } from '../../lib/api/meta.js';
import type { FieldRequirement, LabelRequirement } from '../../lib/api/selectors.js';

export interface Attributes {
  readonly user: UserInfo;
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  /**
   * Parsed `fieldSelector` / `labelSelector` of list, watch and deletecollection
   * requests (kube's AuthorizeWithSelectors). Absent when the request has none,
   * for other verbs, or when the selector does not parse (an authorizer then
   * decides as for the unrestricted request, which is the wider one).
   */
  readonly fieldSelector?: readonly FieldRequirement[];
  readonly labelSelector?: readonly LabelRequirement[];
}

export type DecisionKind = 'allow' | 'deny' | 'no-opinion';

export interface Decision {
  readonly kind: DecisionKind;
  readonly reason: string;
  /**
   * Set when the authorizer could not decide (a webhook unreachable or
   * answering nonsense, a match condition that failed), whatever `kind` its
   * failure policy gave. As kube's union and authorization filter: unless an
   * authorizer allows, the request is answered 500, not 403.
   */
  readonly error?: string;
}

export interface Authorizer {
  readonly name: string;
  /** True for authorizers that only pass the question on (chains): the one that decided is inside and names itself. */
  readonly delegates?: boolean;
  authorize(attrs: Attributes): Decision | Promise<Decision>;
}

export const NO_OPINION: Decision = Object.freeze({ kind: 'no-opinion', reason: '' });
