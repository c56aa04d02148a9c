// Rule coverage for escalation checks, as kube's ConfirmNoEscalation: every
// rule being granted is broken into single (group, resource, verb, name) or
// (url, verb) pieces, and each piece must be covered by one rule the
// requester already holds. The missing pieces are compacted and described
// as kube describes them.
import type { PolicyRule } from './types.js';

const ALL = '*';

function rule(p: Partial<PolicyRule>): PolicyRule {
  return {
    verbs: p.verbs ?? [],
    apiGroups: p.apiGroups ?? [],
    resources: p.resources ?? [],
    resourceNames: p.resourceNames ?? [],
    nonResourceURLs: p.nonResourceURLs ?? [],
  };
}

export function breakdown(r: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const g of r.apiGroups) {
    for (const res of r.resources) {
      for (const v of r.verbs) {
        if (r.resourceNames.length === 0) out.push(rule({ apiGroups: [g], resources: [res], verbs: [v] }));
        else for (const n of r.resourceNames) out.push(rule({ apiGroups: [g], resources: [res], verbs: [v], resourceNames: [n] }));
      }
    }
  }
  for (const u of r.nonResourceURLs) for (const v of r.verbs) out.push(rule({ nonResourceURLs: [u], verbs: [v] }));
  return out;
}

const hasAll = (set: readonly string[], want: readonly string[]) => want.every((w) => set.includes(w));

function resourcesCover(owner: readonly string[], want: readonly string[]): boolean {
  if (owner.includes(ALL) || hasAll(owner, want)) return true;
  for (const path of want) {
    if (owner.includes(path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0 || !owner.includes(`*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function urlCovers(owner: string, path: string): boolean {
  if (owner === path) return true;
  return owner.endsWith(ALL) && path.startsWith(owner.replace(/\*+$/, ''));
}

export function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = owner.verbs.includes(ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = owner.apiGroups.includes(ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourcesCover(owner.resources, sub.resources);
  const urls = sub.nonResourceURLs.every((p) => owner.nonResourceURLs.some((o) => urlCovers(o, p)));
  const names =
    sub.resourceNames.length === 0 ? owner.resourceNames.length === 0 : owner.resourceNames.length === 0 || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && urls && names;
}

/** The pieces of `wanted` that no rule of `owned` covers (empty = no escalation). */
export function uncovered(owned: readonly PolicyRule[], wanted: readonly PolicyRule[]): PolicyRule[] {
  return wanted.flatMap(breakdown).filter((piece) => !owned.some((o) => ruleCovers(o, piece)));
}

/** Merges single-resource pieces that differ only in verbs (kube's CompactRules). */
export function compact(rules: readonly PolicyRule[]): PolicyRule[] {
  const merged = new Map<string, { base: PolicyRule; verbs: string[] }>();
  const out: PolicyRule[] = [];
  for (const r of rules) {
    const simple = r.apiGroups.length === 1 && r.resources.length === 1 && r.resourceNames.length <= 1 && r.nonResourceURLs.length === 0;
    if (!simple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups[0], r.resources[0], r.resourceNames[0] ?? null]);
    const m = merged.get(key);
    if (m) {
      for (const v of r.verbs) if (!m.verbs.includes(v)) m.verbs.push(v);
    } else merged.set(key, { base: r, verbs: [...r.verbs] });
  }
  for (const { base, verbs } of merged.values()) out.push({ ...base, verbs });
  return out;
}

const quoted = (xs: readonly string[]) => `[${xs.map((x) => JSON.stringify(x)).join(' ')}]`;

/** kube's CompactString: `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`. */
export function describeRule(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups.length) parts.push(`APIGroups:${quoted(r.apiGroups)}`);
  if (r.resources.length) parts.push(`Resources:${quoted(r.resources)}`);
  if (r.nonResourceURLs.length) parts.push(`NonResourceURLs:${quoted(r.nonResourceURLs)}`);
  if (r.resourceNames.length) parts.push(`ResourceNames:${quoted(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${quoted(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

/** Sorted, de-duplicated descriptions of the missing rules, one a line. */
export function describeMissing(missing: readonly PolicyRule[]): string {
  return [...new Set(compact(missing).map(describeRule))].sort().join('\n');
}
