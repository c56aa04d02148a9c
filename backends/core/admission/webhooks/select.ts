// The webhooks a request goes to, in order, as kube's ShouldCallHook decides:
// the indexed candidates of its group and resource, their rules (exactly or
// through an equivalent version), the namespace selector, the object
// selector, then its matchConditions. A webhook that would be called for a
// dry run without declaring itself free of side effects refuses the request
// (400) before any call.
import type { RequestAuthorizer } from '../../../../lib/api/authorization.js';
import { internalError } from '../../../../lib/api/status.js';
import type { CoreEnv } from '../../env.js';
import { served } from '../../conversion.js';
import { isExemptFromAdmission, matchesNamespaceSelector, matchesObjectSelector, matchRequest, type Invocation, type RuleIndex } from '../matching/index.js';
import type { AdmissionAttributes } from '../types.js';
import { dryRunUnsupported } from './call.js';
import type { Webhook } from './hooks.js';
import { evaluateConditions } from './matchconditions.js';

export interface Call {
  readonly hook: Webhook;
  readonly invocation: Invocation;
  /** Position among all the webhooks of its kind (the audit annotations' index). */
  readonly ordinal: number;
}

export async function selectCalls(env: CoreEnv, index: RuleIndex<Webhook>, a: AdmissionAttributes, authorizer: RequestAuthorizer | undefined): Promise<Call[]> {
  const candidates = index.candidates(a.resource.group, a.resource.resource);
  if (candidates.length === 0 || isExemptFromAdmission(a.resource)) return [];
  const calls: Call[] = [];
  for (const hook of candidates) {
    const invocation = matchRequest(hook, a, env.registry);
    if (!invocation) continue;
    if (!(await matchesNamespaceSelector(env, a, hook.namespaceSelector))) continue;
    if (!matchesObjectSelector(a, hook.objectSelector)) continue;
    if (hook.conditions.length > 0) {
      const t = invocation.type;
      const [o, old] = t ? await Promise.all([a.object && served(env, t, a.object), a.oldObject && served(env, t, a.oldObject)]) : [a.object, a.oldObject];
      const r = await evaluateConditions(hook.conditions, a, invocation, o, old, authorizer);
      if ('error' in r) {
        if (hook.failOpen) continue;
        throw internalError(`failed calling webhook "${hook.name}": failed to evaluate match conditions: ${r.error}`);
      }
      if (!r.matches) continue;
    }
    if (a.dryRun && !hook.dryRunSafe) throw dryRunUnsupported(hook.name);
    calls.push({ hook, invocation, ordinal: hook.ordinal });
  }
  return calls;
}
