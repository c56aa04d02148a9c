// The RBAC authorizer: allow when a rule of a role bound to the user (or one
// of its groups) at the request's scope allows the request; otherwise no
// opinion, with kube's reason when a bound role is missing. No decision
// cache: the subject index makes a decision cost a few map lookups
// (bench/authz-rbac.ts measures it).
import type { UserInfo } from '../../../lib/api/meta.js';
import type { Attributes, Authorizer, Decision, ExplainOptions, Explanation, SubjectGrant } from '../types.js';
import { NO_OPINION } from '../types.js';
import { firstAllowingRule, ruleAllows } from './match.js';
import { grantFacts } from './facts.js';
import { nearMisses } from './nearmisses.js';
import type { Grant, RbacPolicy } from './policy.js';
import { roleNotFound, type PolicyRule } from './types.js';
import type { ResolvedRules } from '../../../lib/rbac/rules.js';

export type { ResolvedRules } from '../../../lib/rbac/rules.js';

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

interface Match {
  readonly allowedBy: Grant | undefined;
  readonly ruleIndex: number;
  readonly errors: string[] | undefined;
}

function decisionOf(m: Match): Decision {
  if (m.allowedBy) return { kind: 'allow', reason: describe(m.allowedBy) };
  return m.errors ? { kind: 'no-opinion', reason: `RBAC: ${aggregate(m.errors)}` } : NO_OPINION;
}

export class RbacAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  constructor(private readonly policy: RbacPolicy) {}

  authorize(a: Attributes): Decision {
    return decisionOf(this.match(a));
  }

  /** The decision with the binding, role and rule that allowed; near misses (nearmisses.ts) when nothing did. */
  explain(a: Attributes, opts?: ExplainOptions): Explanation {
    const m = this.match(a);
    const decision = decisionOf(m);
    if (m.allowedBy) return { decision, facts: { rbac: grantFacts(m.allowedBy, m.ruleIndex) } };
    return { decision, nearMisses: nearMisses(this.policy, a, opts?.otherSubjects === true) };
  }

  /** The first grant and rule allowing the request (kube's order), and the missing roles met before it. */
  private match(a: Attributes): Match {
    // The hot path of every request: plain loops, one result object.
    const m: { allowedBy: Grant | undefined; ruleIndex: number; errors: string[] | undefined } = { allowedBy: undefined, ruleIndex: -1, errors: undefined };
    this.policy.visit(a.user, a.namespace, (grant, rules) => {
      if (!rules) {
        (m.errors ??= []).push(roleNotFound(grant.binding.roleRef));
        return false;
      }
      for (let i = 0; i < rules.length; i++) {
        if (ruleAllows(a, rules[i]!)) {
          m.allowedBy = grant;
          m.ruleIndex = i;
          return true;
        }
      }
      return false;
    });
    return m;
  }

  /** Every subject of a binding at the request's scope whose role has a rule allowing the request (the first such rule named). */
  subjects(a: Attributes): SubjectGrant[] {
    const out: SubjectGrant[] = [];
    const allowing = firstAllowingRule(a);
    this.policy.visitBindings(
      a.namespace,
      (binding, rules) => {
        const ruleIndex = allowing(rules!);
        for (const subject of binding.subjects) {
          const namespace = subject.kind === 'ServiceAccount' ? subject.namespace || binding.namespace : undefined;
          // A ServiceAccount subject without a namespace never matches (policy.ts subjectKey).
          if (namespace === '') continue;
          out.push({
            kind: subject.kind,
            name: subject.name,
            ...(namespace !== undefined ? { namespace } : {}),
            facts: { rbac: grantFacts({ binding, subject }, ruleIndex) },
          });
        }
      },
      (rules) => rules !== undefined && allowing(rules) >= 0,
    );
    return out;
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
