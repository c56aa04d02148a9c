// RBAC's near misses for a request nothing allowed (access.gatehouse.dev
// explanations), found by the decision's own predicates (match.ts):
// - rules bound to the subject, at any scope, that grant every attribute of
//   the request but one (a RoleBinding of another namespace is a namespace miss);
// - with ExplainOptions.otherSubjects only: bindings at the request's scope
//   whose role grants the request but that name another subject — a group
//   the user is not in, or a ServiceAccount of the user's name in another
//   namespace (the user being that ServiceAccount).
// Closest first (CLOSENESS), then the narrower rule (fewer `*`), at most
// MAX_NEAR_MISSES in all.
import type { Attributes, NearMiss } from '../types.js';
import { MAX_NEAR_MISSES } from '../explain.js';
import { grantFacts } from './facts.js';
import { firstAllowingRule, ruleMisses } from './match.js';
import type { Grant, RbacPolicy } from './policy.js';
import type { PolicyRule } from './types.js';

/**
 * A word added to a rule (verb, name) is closest; then another binding
 * (namespace) or another subject on a binding (the ServiceAccount's own name
 * in another namespace before any group: it is about this very subject, a
 * group may be anyone's); then another rule (group, resource, URL).
 */
const CLOSENESS = ['verb', 'resourceName', 'namespace', 'serviceaccount namespace', 'group', 'apiGroup', 'resource', 'nonResourceURL'];

const SA_PREFIX = 'system:serviceaccount:';

/** A near miss before its facts are built: only the closest MAX_NEAR_MISSES get them. */
interface Found {
  readonly attribute: string;
  readonly requested?: string;
  readonly granted: readonly string[];
  readonly grant: Grant;
  readonly ruleIndex: number;
  readonly wildcards: number;
}

// A rule's breadth, counted once per rule object: a crowded scope has hundreds of bindings to one role (counting each time was most of a near-miss search, by CPU profile).
const breadth = new WeakMap<PolicyRule, number>();

/** How broad a rule is: its `*` entries (cluster-admin's rule sorts after a rule naming the resource). */
function wildcards(r: PolicyRule): number {
  let n = breadth.get(r);
  if (n === undefined) {
    n = 0;
    for (const list of [r.verbs, r.apiGroups, r.resources, r.nonResourceURLs]) for (const x of list) if (x.endsWith('*')) n++;
    breadth.set(r, n);
  }
  return n;
}

function ruleNearMisses(policy: RbacPolicy, a: Attributes, out: Found[]): void {
  policy.visitEverywhere(a.user, (grant, rules) => {
    const b = grant.binding;
    const elsewhere = b.kind === 'RoleBinding' && b.namespace !== a.namespace;
    // A non-resource request is granted by ClusterRoleBindings only.
    if (elsewhere && !a.isResourceRequest) return false;
    rules?.forEach((rule, i) => {
      const misses = ruleMisses(a, rule);
      if (!misses) return;
      const all: Array<Pick<NearMiss, 'attribute' | 'requested' | 'granted'>> = elsewhere
        ? [...misses, { attribute: 'namespace', requested: a.namespace, granted: [b.namespace] }]
        : misses;
      if (all.length !== 1) return;
      const [miss] = all;
      out.push({ attribute: miss!.attribute, requested: miss!.requested!, granted: miss!.granted, grant, ruleIndex: i, wildcards: wildcards(rule) });
    });
    return false;
  });
}

/** The user's ServiceAccount namespace and name, when it is one. */
function serviceAccountOf(username: string): { namespace: string; name: string } | undefined {
  if (!username.startsWith(SA_PREFIX)) return undefined;
  const rest = username.slice(SA_PREFIX.length);
  const colon = rest.indexOf(':');
  if (colon <= 0 || colon === rest.length - 1) return undefined;
  return { namespace: rest.slice(0, colon), name: rest.slice(colon + 1) };
}

function subjectNearMisses(policy: RbacPolicy, a: Attributes, out: Found[]): void {
  const sa = serviceAccountOf(a.user.username);
  const groups = a.user.groups;
  const allowing = firstAllowingRule(a);
  policy.visitBindings(
    a.namespace,
    (binding, rules) => {
      const ruleIndex = allowing(rules!);
      const broad = wildcards(rules![ruleIndex]!);
      for (const subject of binding.subjects) {
        if (subject.kind === 'Group' && !groups.includes(subject.name)) {
          out.push({ attribute: 'group', granted: [subject.name], grant: { binding, subject }, ruleIndex, wildcards: broad });
        } else if (subject.kind === 'ServiceAccount' && sa && subject.name === sa.name) {
          // kube defaults a ServiceAccount subject's namespace to its RoleBinding's.
          const namespace = subject.namespace || binding.namespace;
          if (namespace === '' || namespace === sa.namespace) continue;
          out.push({
            attribute: 'serviceaccount namespace',
            requested: sa.namespace,
            granted: [namespace],
            grant: { binding, subject },
            ruleIndex,
            wildcards: broad,
          });
        }
      }
    },
    (rules) => rules !== undefined && allowing(rules) >= 0,
  );
}

export function nearMisses(policy: RbacPolicy, a: Attributes, otherSubjects: boolean): NearMiss[] {
  const found: Found[] = [];
  ruleNearMisses(policy, a, found);
  if (otherSubjects) subjectNearMisses(policy, a, found);
  // Array.prototype.sort is stable: equal misses keep the policy's visiting order.
  found.sort((x, y) => CLOSENESS.indexOf(x.attribute) - CLOSENESS.indexOf(y.attribute) || x.wildcards - y.wildcards);
  return found.slice(0, MAX_NEAR_MISSES).map((f) => ({
    attribute: f.attribute,
    ...(f.requested !== undefined ? { requested: f.requested } : {}),
    granted: [...f.granted],
    facts: { rbac: grantFacts(f.grant, f.ruleIndex) },
  }));
}
