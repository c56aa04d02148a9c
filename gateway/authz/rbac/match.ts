// Does one rule allow a request? kube's rbac.RuleAllows: verbs and API groups
// with `*`, resources with `*`, `pods/log` and `*/scale`, resourceNames (empty
// = any), nonResourceURLs exact or with a trailing `*`.
import type { Attributes } from '../types.js';
import type { PolicyRule } from './types.js';

const ALL = '*';

function verbMatches(rule: PolicyRule, verb: string): boolean {
  return rule.verbs.includes(ALL) || rule.verbs.includes(verb);
}

function groupMatches(rule: PolicyRule, group: string): boolean {
  return rule.apiGroups.includes(ALL) || rule.apiGroups.includes(group);
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources) {
    if (r === ALL || r === combined) return true;
    // `*/scale` grants the scale subresource of every resource.
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

function nameMatches(rule: PolicyRule, name: string): boolean {
  return rule.resourceNames.length === 0 || rule.resourceNames.includes(name);
}

export function urlMatches(ruleUrl: string, path: string): boolean {
  if (ruleUrl === ALL || ruleUrl === path) return true;
  return ruleUrl.endsWith(ALL) && path.startsWith(ruleUrl.replace(/\*+$/, ''));
}

export function ruleAllows(a: Attributes, rule: PolicyRule): boolean {
  if (!verbMatches(rule, a.verb)) return false;
  if (!a.isResourceRequest) return rule.nonResourceURLs.some((u) => urlMatches(u, a.path));
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return groupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && nameMatches(rule, a.name);
}

/**
 * `rules.findIndex(ruleAllows)` remembered per role for one walk over many
 * bindings (who-can, other subjects' near misses): thousands of bindings
 * share a few roles, and a role's rules are one array in the policy.
 * Walking bench/authz-rbac.ts's ns-7 binding by binding (102 bindings, one
 * role): 13 µs instead of 32 denied, 13 instead of 46 allowed (median of 6
 * paired rounds); since bindings are grouped by role it answers the role's
 * `wanted` question and then each of its bindings' rule index from memory.
 */
export function firstAllowingRule(a: Attributes): (rules: readonly PolicyRule[]) => number {
  const seen = new Map<readonly PolicyRule[], number>();
  return (rules) => {
    let i = seen.get(rules);
    if (i === undefined) {
      i = -1;
      for (let j = 0; j < rules.length; j++)
        if (ruleAllows(a, rules[j]!)) {
          i = j;
          break;
        }
      seen.set(rules, i);
    }
    return i;
  };
}

/** One attribute a rule does not grant, with what the rule grants instead. */
export interface Miss {
  readonly attribute: 'verb' | 'apiGroup' | 'resource' | 'resourceName' | 'nonResourceURL';
  readonly requested: string;
  readonly granted: readonly string[];
}

/**
 * Every attribute of the request the rule does not grant, by the same
 * predicates as `ruleAllows` (an empty list = the rule allows). A rule of the
 * other kind (resources for a non-resource request, or the reverse) is not
 * about the request at all: undefined.
 */
export function ruleMisses(a: Attributes, rule: PolicyRule): Miss[] | undefined {
  const misses: Miss[] = [];
  if (!verbMatches(rule, a.verb)) misses.push({ attribute: 'verb', requested: a.verb, granted: rule.verbs });
  if (!a.isResourceRequest) {
    if (rule.nonResourceURLs.length === 0) return undefined;
    if (!rule.nonResourceURLs.some((u) => urlMatches(u, a.path)))
      misses.push({ attribute: 'nonResourceURL', requested: a.path, granted: rule.nonResourceURLs });
    return misses;
  }
  if (rule.resources.length === 0) return undefined;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  if (!groupMatches(rule, a.apiGroup)) misses.push({ attribute: 'apiGroup', requested: a.apiGroup, granted: rule.apiGroups });
  if (!resourceMatches(rule, combined, a.subresource)) misses.push({ attribute: 'resource', requested: combined, granted: rule.resources });
  if (!nameMatches(rule, a.name)) misses.push({ attribute: 'resourceName', requested: a.name, granted: rule.resourceNames });
  return misses;
}
