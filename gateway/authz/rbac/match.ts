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
