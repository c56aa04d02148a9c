// RBAC rule resolution as the escalation checks need it (kube's
// AuthorizationRuleResolver): the rules a user holds at a scope, and the
// rules a role reference names. Whoever keeps the RBAC objects answers it —
// the gateway's policy in-process, a core backend's own in its process.
import type { UserInfo } from '../api/meta.js';
import type { PolicyRule, RoleRef } from './types.js';

/** The rules a user holds at a scope, and the problems met while collecting them. */
export interface ResolvedRules {
  readonly rules: PolicyRule[];
  readonly errors: string[];
}

export interface RbacRuleResolver {
  /** Every rule the user holds in `namespace` ('' = cluster-wide only). */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules;
  /** The rules of a role reference as seen from a binding in `namespace` ('' for ClusterRoleBindings); undefined = no such role. */
  roleRules(ref: RoleRef, namespace: string): readonly PolicyRule[] | undefined;
}
