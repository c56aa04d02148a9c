// The gateway's authorization, built once per start: the system:masters
// bypass and the configured authorizers (--authorization-mode or
// --authorization-config, gateway/authz/build.ts), the rule resolvers the
// access reviews list rules with, and the admission plugins that check
// against the same authorizers.
import type { RegistrySource } from '../../lib/registry/live.js';
import type { ServeOptions } from '../config/flags.js';
import type { AuthorizerChain } from '../authz/chain.js';
import { buildAuthorizers } from '../authz/build.js';
import type { Attributes, ExplainOptions } from '../authz/types.js';
import type { ChainExplanation, WhoCan } from '../authz/explain.js';
import { startRbac } from '../authz/rbac/index.js';
import { rbacEscalation } from '../admission/rbacescalation.js';
import { nodeRestriction } from '../admission/noderestriction.js';
import { applyCreateAuthorization } from '../admission/applycreate.js';
import type { AdmissionPlugin } from '../pipeline/admission.js';
import { privilegedRules, ruleResolverFor, type RuleResolver } from '../reviews/accessrules.js';
import type { GatewayCore } from '../aggregation/remotecore.js';
import type { AppHooks } from './app.js';

/** Members may do anything, before any configured authorizer is asked. */
export const PRIVILEGED_GROUPS: readonly string[] = Object.freeze(['system:masters']);

export interface GatewayAuthorization {
  readonly authorizer: AuthorizerChain;
  /** The resolvers of the chain in force (--authorization-config may swap it). */
  ruleResolvers(): readonly RuleResolver[];
  readonly admission: readonly AdmissionPlugin[];
  /** The chain in force explained (access.gatehouse.dev). */
  explain(attrs: Attributes, opts?: ExplainOptions): Promise<ChainExplanation>;
  /** Who the chain in force allows a request (access.gatehouse.dev SubjectsReview). */
  whoCan(attrs: Attributes): WhoCan;
  close(): void;
}

export async function buildAuthorization(
  opts: ServeOptions,
  hooks: AppHooks,
  core: GatewayCore,
  registry: RegistrySource,
  clock: () => number,
): Promise<GatewayAuthorization> {
  // The RBAC policy is kept whatever the modes: the escalation checks resolve rules from it.
  const rbac = await startRbac(core.objects, hooks.log);
  const authz = await buildAuthorizers(opts, {
    objects: core.objects,
    log: hooks.log,
    clock,
    rbac: () => rbac.authorizer,
    privilegedGroups: PRIVILEGED_GROUPS,
  });
  const { authorizer } = authz;
  const objects = core.objects;
  const bodyLimit = opts.maxRequestBodyBytes;
  const admission: AdmissionPlugin[] = [
    rbacEscalation({
      registry,
      authorizer,
      rbac: rbac.authorizer,
      policy: rbac.policy,
      objects,
      bodyLimit,
      privilegedGroups: [...PRIVILEGED_GROUPS],
      cbor: opts.featureGates.CBORServingAndStorage,
    }),
    applyCreateAuthorization({ authorizer, objects, registry }),
  ];
  if (opts.enableAdmissionPlugins.includes('NodeRestriction'))
    admission.push(nodeRestriction({ registry, objects, bodyLimit, cbor: opts.featureGates.CBORServingAndStorage }));
  return {
    authorizer,
    admission,
    explain: (a, o) => authz.explain(a, o),
    whoCan: (a) => authz.whoCan(a),
    ruleResolvers: () => [privilegedRules(authz.privilegedGroups), ...authz.current().map((c) => ruleResolverFor(c.type, c.authorizer))],
    close: () => {
      authz.close();
      rbac.stop();
    },
  };
}
