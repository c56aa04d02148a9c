// The RBAC authorizer: allow when a rule of a role bound to the user (or one
// of its groups) at the request's scope allows the request; otherwise no
// opinion, with kube's reason when a bound role is missing. No decision
// cache: the subject index makes a decision cost a few map lookups
// (bench/authz-rbac.ts measures it).
import type { UserInfo } from '../../../lib/api/meta.js';
import type { Attributes, Authorizer, Decision } from '../types.js';
import { NO_OPINION } from '../types.js';
import { ruleAllows } from './match.js';
import type { Grant, RbacPolicy } from './policy.js';
import { roleNotFound, type PolicyRule } from './types.js';

/** The rules a user holds at a scope, and the problems met while collecting them. */
export interface ResolvedRules {
  readonly rules: PolicyRule[];
  readonly errors: string[];
}

function describe(g: Grant): string {
  const b = g.binding;
  const s = g.subject;
  const who = s.kind === 'ServiceAccount' ? `${s.kind} "${s.name}/${s.namespace || b.namespace}"` : `${s.kind} "${s.name}"`;
  const where = b.kind === 'RoleBinding' ? `RoleBinding "${b.name}/${b.namespace}"` : `ClusterRoleBinding "${b.name}"`;
  return `RBAC: allowed by ${where} of ${b.roleRef.kind} "${b.roleRef.name}" to ${who}`;
}

function aggregate(errors: readonly string[]): string {
  return errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  constructor(private readonly policy: RbacPolicy) {}

  authorize(a: Attributes): Decision {
    let allowedBy: Grant | undefined;
    let errors: string[] | undefined;
    this.policy.visit(a.user, a.namespace, (grant, rules) => {
      if (!rules) {
        (errors ??= []).push(roleNotFound(grant.binding.roleRef));
        return false;
      }
      for (const r of rules) {
        if (ruleAllows(a, r)) { allowedBy = grant; return true; }
      }
      return false;
    });
    if (allowedBy) return { kind: 'allow', reason: describe(allowedBy) };
    return errors ? { kind: 'no-opinion', reason: `RBAC: ${aggregate(errors)}` } : NO_OPINION;
  }

  /** Every rule the user holds in `namespace` ('' = cluster-wide only): SelfSubjectRulesReview and escalation checks. */
  rulesFor(user: UserInfo, namespace: string): ResolvedRules {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    const seen = new Set<Grant['binding']>();
    this.policy.visit(user, namespace, (grant, found) => {
      if (seen.has(grant.binding)) return false;
      seen.add(grant.binding);
      if (found) rules.push(...found);
      else errors.push(roleNotFound(grant.binding.roleRef));
      return false;
    });
    return { rules, errors };
  }
}
