// kube's policy matcher (admission/plugin/policy/matching): a request
// matches a policy's matchConstraints (or a binding's matchResources) when
// the namespace and object selectors let it through, no excludeResourceRule
// matches it, and a resourceRule does, exactly or (matchPolicy Equivalent)
// through another version of the resource. resourceNames limit a rule to
// those names.
import { matchesNamespaceSelector, matchesObjectSelector, matchRequest, ruleMatches, type Invocation } from '../matching/index.js';
import type { CoreEnv } from '../../env.js';
import type { AdmissionAttributes } from '../types.js';
import type { MatchResources, NamedRule } from './compiled.js';

const namesAllow = (r: NamedRule, name: string) => r.names.size === 0 || r.names.has(name);

/** How the request matches, or undefined; throws a configuration error (a selector that does not parse, a namespace not found). */
export async function matchResources(m: MatchResources, a: AdmissionAttributes, env: CoreEnv): Promise<Invocation | undefined> {
  if (m.selectorError !== undefined) throw new Error(m.selectorError);
  if (!matchesObjectSelector(a, m.objectSelector)) return undefined;
  if (!(await matchesNamespaceSelector(env, a, m.namespaceSelector))) return undefined;
  const exact = { operation: a.operation, ...a.resource, subresource: a.subresource, namespace: a.namespace };
  if (m.exclude.some((r) => namesAllow(r, a.name) && ruleMatches(r.rule, exact))) return undefined;
  const rules = m.rules.filter((r) => namesAllow(r, a.name)).map((r) => r.rule);
  if (rules.length === 0) return undefined;
  return matchRequest({ rules, equivalent: m.equivalent }, a, env.registry);
}
