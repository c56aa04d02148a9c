// kube's policy matcher (admission/plugin/policy/matching): a request
// matches a policy's matchConstraints (or a binding's matchResources) when
// the namespace and object selectors let it through, no excludeResourceRule
// matches it, and a resourceRule does, exactly or (matchPolicy Equivalent)
// through another version of the resource. resourceNames limit a rule to
// those names.
import { matchesNamespaceSelector, matchesObjectSelector, matchRequest, type Invocation } from '../matching/index.js';
import type { CoreEnv } from '../../env.js';
import type { AdmissionAttributes } from '../types.js';
import type { MatchResources, NamedRule } from './compiled.js';

const namesAllow = (r: NamedRule, name: string) => r.names.size === 0 || r.names.has(name);

/** How the request matches, or undefined; throws a configuration error (a selector that does not parse, a namespace not found). */
export async function matchResources(m: MatchResources, a: AdmissionAttributes, env: CoreEnv): Promise<Invocation | undefined> {
  if (m.selectorError !== undefined) throw new Error(m.selectorError);
  if (!matchesObjectSelector(a, m.objectSelector)) return undefined;
  if (!(await matchesNamespaceSelector(env, a, m.namespaceSelector))) return undefined;
  const excluded = m.exclude.filter((r) => namesAllow(r, a.name)).map((r) => r.rule);
  if (excluded.length > 0 && matchRequest({ rules: excluded, equivalent: m.equivalent }, a, env.registry)) return undefined;
  // No resourceRules (a binding's matchResources may have none): every resource.
  if (m.rules.length === 0) return { resource: a.resource, kind: a.kind };
  const rules = m.rules.filter((r) => namesAllow(r, a.name)).map((r) => r.rule);
  if (rules.length === 0) return undefined;
  return matchRequest({ rules, equivalent: m.equivalent }, a, env.registry);
}
