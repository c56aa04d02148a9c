// kube's admission rules (admissionregistration RuleWithOperations): which
// operations, groups, versions, resources (with `*`, `res/*`, `*/sub`, `*/*`)
// and scope a webhook or policy applies to. Parsed once per configuration
// change; a request is checked against the parsed form.
import type { Operation } from '../types.js';

/** A request's coordinates as rules see them (kube's admission.Attributes). */
export interface RuleTarget {
  readonly operation: Operation;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  readonly subresource: string;
  readonly namespace: string;
}

export interface Rule {
  readonly operations: ReadonlySet<string>;
  readonly groups: ReadonlySet<string>;
  readonly versions: ReadonlySet<string>;
  /** `resource` or `resource/subresource` as written, `*` parts included. */
  readonly resources: readonly string[];
  readonly scope: 'Cluster' | 'Namespaced' | '*';
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

/** A stored rule (validated on write: odd shapes only match less). */
export function parseRule(json: unknown): Rule {
  const r = (json !== null && typeof json === 'object' ? json : {}) as Record<string, unknown>;
  const scope = r['scope'] === 'Cluster' || r['scope'] === 'Namespaced' ? r['scope'] : '*';
  return {
    operations: new Set(strings(r['operations'])),
    groups: new Set(strings(r['apiGroups'])),
    versions: new Set(strings(r['apiVersions'])),
    resources: strings(r['resources']),
    scope,
  };
}

const has = (set: ReadonlySet<string>, v: string) => set.has('*') || set.has(v);

function resourceMatches(resources: readonly string[], resource: string, subresource: string): boolean {
  const full = subresource ? `${resource}/${subresource}` : resource;
  for (const r of resources) {
    if (r === '*/*' || r === full) return true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      // `*` is every resource without a subresource.
      if (r === '*' && subresource === '') return true;
      continue;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource) && subresource !== '') return true;
  }
  return false;
}

/** kube's scope rule: a Namespace object is cluster-scoped even though its requests carry its name as namespace. */
function scopeMatches(scope: Rule['scope'], t: RuleTarget): boolean {
  if (scope === '*') return true;
  const isNamespace = t.group === '' && t.resource === 'namespaces';
  if (scope === 'Namespaced') return !isNamespace && t.namespace !== '';
  return isNamespace || t.namespace === '';
}

export function ruleMatches(rule: Rule, t: RuleTarget): boolean {
  return (
    has(rule.operations, t.operation) &&
    has(rule.groups, t.group) &&
    has(rule.versions, t.version) &&
    resourceMatches(rule.resources, t.resource, t.subresource) &&
    scopeMatches(rule.scope, t)
  );
}

/** The group/resource pairs (`*` kept) a rule can match, for the lookup index. */
export function ruleKeys(rule: Rule): Array<{ group: string; resource: string }> {
  const groups = rule.groups.has('*') ? ['*'] : [...rule.groups];
  const resources = new Set(rule.resources.map((r) => (r.includes('/') ? r.slice(0, r.indexOf('/')) : r)));
  const out: Array<{ group: string; resource: string }> = [];
  for (const group of groups) for (const resource of resources) out.push({ group, resource });
  return out;
}
