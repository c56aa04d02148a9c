// The gateway's authorization, built once per start: the system:masters
// bypass and the configured authorizers (--authorization-mode or
// --authorization-config, gateway/authz/build.ts), the rule resolvers the
// access reviews list rules with, and RBAC's rule resolution, which the core
// backend's escalation checks use (admission runs in the backend's write
// path, backends/core/admission).
import type { ServeOptions } from '../config/flags.js';
import type { AuthorizerChain } from '../authz/chain.js';
import { buildAuthorizers } from '../authz/build.js';
import type { Attributes, ExplainOptions } from '../authz/types.js';
import type { ChainExplanation, WhoCan } from '../authz/explain.js';
import { startRbac, type RunningRbac } from '../authz/rbac/index.js';
import type { RbacRuleResolver } from '../../lib/rbac/rules.js';
import { privilegedRules, ruleResolverFor, type RuleResolver } from '../reviews/accessrules.js';
import type { GatewayCore } from '../aggregation/remotecore.js';
import type { AppHooks } from './app.js';

/** Members may do anything, before any configured authorizer is asked. */
export const PRIVILEGED_GROUPS: readonly string[] = Object.freeze(['system:masters']);

export interface GatewayAuthorization {
  readonly authorizer: AuthorizerChain;
  /** The resolvers of the chain in force (--authorization-config may swap it). */
  ruleResolvers(): readonly RuleResolver[];
  /** RBAC's rules of a user and of a role, from the policy the gateway keeps whatever the modes. */
  readonly rbacRules: RbacRuleResolver;
  /** The chain in force explained (access.gatehouse.dev). */
  explain(attrs: Attributes, opts?: ExplainOptions): Promise<ChainExplanation>;
  /** Who the chain in force allows a request (access.gatehouse.dev SubjectsReview). */
  whoCan(attrs: Attributes): WhoCan;
  close(): void;
}

export async function buildAuthorization(opts: ServeOptions, hooks: AppHooks, core: GatewayCore, clock: () => number): Promise<GatewayAuthorization> {
  // The RBAC policy is kept whatever the modes: the escalation checks resolve rules from it.
  const rbac = await startRbac(core.objects, hooks.log);
  const authz = await buildAuthorizers(opts, {
    objects: core.objects,
    log: hooks.log,
    clock,
    rbac: () => rbac.authorizer,
    privilegedGroups: PRIVILEGED_GROUPS,
  });
  return {
    authorizer: authz.authorizer,
    rbacRules: rbacRulesOf(rbac),
    explain: (a, o) => authz.explain(a, o),
    whoCan: (a) => authz.whoCan(a),
    ruleResolvers: () => [privilegedRules(authz.privilegedGroups), ...authz.current().map((c) => ruleResolverFor(c.type, c.authorizer))],
    close: () => {
      authz.close();
      rbac.stop();
    },
  };
}

/** The rule resolution of a running RBAC policy, as the core backend's escalation checks ask it. */
export function rbacRulesOf(rbac: RunningRbac): RbacRuleResolver {
  return { rulesFor: (user, ns) => rbac.authorizer.rulesFor(user, ns), roleRules: (ref, ns) => rbac.policy.roleRules(ref, ns) };
}
