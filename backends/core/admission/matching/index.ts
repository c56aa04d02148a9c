// Which webhooks or policies a request goes to, as kube decides it, at the
// cost of a Map lookup when none applies: configurations are indexed once
// per change by the group and resource their rules name (`*` kept as a
// key), and the candidates of a group/resource are memoized until the next
// change. Candidates are then checked rule by rule, exactly and (matchPolicy
// Equivalent) through the other versions of the resource.
import type { Registry } from '../../../../lib/registry/index.js';
import type { ResourceType } from '../../../../lib/registry/types.js';
import type { AdmissionAttributes, GroupVersionKind, GroupVersionResource } from '../types.js';
import { equivalentResources } from './equivalent.js';
import { ruleKeys, ruleMatches, type Rule, type RuleTarget } from './rules.js';

export { parseRule, ruleMatches, type Rule, type RuleTarget } from './rules.js';
export { equivalentResources, type Equivalent } from './equivalent.js';
export { parseSelector, matchesNamespaceSelector, matchesObjectSelector, namespaceLabels, type ParsedSelector } from './selectors.js';

export interface Matchable {
  readonly rules: readonly Rule[];
  /** matchPolicy Equivalent (kube's default) rather than Exact. */
  readonly equivalent: boolean;
}

/** What a matched item is called with: the request's resource and kind, or an equivalent version's. */
export interface Invocation {
  readonly resource: GroupVersionResource;
  readonly kind: GroupVersionKind;
  /** Set when the item matched through another version: the type objects are converted to. */
  readonly type?: ResourceType;
}

/** Configurations not sent to webhooks or policies, so that a broken one can always be fixed (kube's exemption). */
const EXEMPT = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export function isExemptFromAdmission(gvr: GroupVersionResource): boolean {
  return gvr.group === 'admissionregistration.k8s.io' && EXEMPT.has(gvr.resource);
}

const key = (group: string, resource: string) => `${group}\0${resource}`;

export class RuleIndex<T extends Matchable> {
  readonly #byKey = new Map<string, number[]>();
  /** By group, then resource: no `group\0resource` key built and hashed per lookup (3 a write). */
  readonly #memo = new Map<string, Map<string, readonly T[]>>();

  constructor(readonly items: readonly T[]) {
    items.forEach((item, i) => {
      for (const rule of item.rules) {
        for (const k of ruleKeys(rule)) {
          const kk = key(k.group, k.resource);
          const list = this.#byKey.get(kk);
          if (!list) this.#byKey.set(kk, [i]);
          else if (list[list.length - 1] !== i) list.push(i);
        }
      }
    });
  }

  /** The items whose rules name this group and resource (or `*`), in their order. */
  candidates(group: string, resource: string): readonly T[] {
    let byResource = this.#memo.get(group);
    let c = byResource?.get(resource);
    if (c) return c;
    const k = key(group, resource);
    const idx = new Set<number>();
    for (const kk of [k, key(group, '*'), key('*', resource), key('*', '*')]) for (const i of this.#byKey.get(kk) ?? []) idx.add(i);
    c = [...idx].sort((x, y) => x - y).map((i) => this.items[i]!);
    // Bounded by the served resources; cleared with the index at the next change.
    if (!byResource) this.#memo.set(group, (byResource = new Map()));
    byResource.set(resource, c);
    return c;
  }
}

function target(a: AdmissionAttributes, gvr: GroupVersionResource): RuleTarget {
  return { operation: a.operation, group: gvr.group, version: gvr.version, resource: gvr.resource, subresource: a.subresource, namespace: a.namespace };
}

/** How `item` applies to the request: exactly, through an equivalent version, or not at all. */
export function matchRequest(item: Matchable, a: AdmissionAttributes, registry: Registry): Invocation | undefined {
  const exact = target(a, a.resource);
  if (item.rules.some((r) => ruleMatches(r, exact))) return { resource: a.resource, kind: a.kind };
  if (!item.equivalent) return undefined;
  for (const eq of equivalentResources(registry, a.resource, a.subresource)) {
    const t = target(a, eq.resource);
    if (item.rules.some((r) => ruleMatches(r, t))) return { resource: eq.resource, kind: eq.kind, type: eq.type };
  }
  return undefined;
}
