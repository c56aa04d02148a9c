// The authorization question a backend may ask the front door: the
// attributes of one request and the decision. The gateway's authorizers
// answer it (gateway/authz/types.ts extends these shapes); a backend is given
// one as an interface — in-process the gateway's own chain, in a backend's own
// process its delegated SubjectAccessReview — and never imports the gateway.
import type { UserInfo } from './meta.js';

export interface AuthorizationAttributes {
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

/** What a backend asks: the whole chain of the front door, first decision wins. */
export interface RequestAuthorizer {
  authorize(attrs: AuthorizationAttributes): Decision | Promise<Decision>;
}

/** kube-apiserver's wording for a denial of a resource request. */
export function resourceDenial(a: AuthorizationAttributes): string {
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const subject = `${a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource}${a.name ? ` "${a.name}"` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${subject} is forbidden: User "${a.user.username}" cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" ${scope}`;
}
