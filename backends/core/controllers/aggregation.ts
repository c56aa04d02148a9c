// The ClusterRole aggregation controller (kube-controller-manager's
// `clusterrole-aggregation`): a ClusterRole with
// aggregationRule.clusterRoleSelectors gets as `rules` the rules of every
// other ClusterRole whose labels match a selector (roles in name order,
// duplicates dropped), kept current as roles and their labels change.
// A pass computes to a fixpoint in memory, so chains (view → edit → admin)
// settle in one pass, then writes the roles that changed.
import type { KObject } from '../../../lib/api/meta.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelector } from '../../../lib/api/selectors.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { guaranteedUpdate } from '../store/types.js';
import { WatchingController } from './loop.js';

function clusterRoleType(env: CoreEnv): ResourceType {
  const t = env.registry.lookup('rbac.authorization.k8s.io', 'v1', 'clusterroles');
  if (!t) throw new Error('the registry has no rbac.authorization.k8s.io/v1 clusterroles type');
  return t;
}

/** The selectors of an aggregated role; undefined for a plain role. A malformed selector matches nothing. */
function selectorsOf(role: KObject): LabelSelector[] | undefined {
  const rule = role['aggregationRule'] as { clusterRoleSelectors?: unknown } | undefined | null;
  if (!rule || typeof rule !== 'object') return undefined;
  const list = Array.isArray(rule.clusterRoleSelectors) ? rule.clusterRoleSelectors : [];
  return list.flatMap((s) => {
    try {
      return [labelSelectorFromObject(s)];
    } catch {
      return [];
    }
  });
}

const MAX_ROUNDS = 10;

export class ClusterRoleAggregationController extends WatchingController {
  constructor(env: CoreEnv, retryMs?: number) {
    super(env, 'clusterrole-aggregation', [listPrefix(clusterRoleType(env), '')], retryMs);
  }

  protected async pass(): Promise<number | undefined> {
    const t = clusterRoleType(this.env);
    const { items } = await this.env.store.list(listPrefix(t, ''));
    const roles = [...items].sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    const rules = new Map<string, unknown[]>(roles.map((r) => [r.metadata.name ?? '', Array.isArray(r['rules']) ? r['rules'] : []]));
    const aggregated = roles.map((r) => ({ role: r, selectors: selectorsOf(r) })).filter((a) => a.selectors !== undefined);
    const changed = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      let moved = false;
      for (const { role, selectors } of aggregated) {
        const name = role.metadata.name ?? '';
        const seen = new Set<string>();
        const next: unknown[] = [];
        for (const other of roles) {
          const otherName = other.metadata.name ?? '';
          if (otherName === name || !selectors!.some((s) => matchesLabels(s, other.metadata.labels))) continue;
          for (const rule of rules.get(otherName) ?? []) {
            const k = JSON.stringify(rule);
            if (!seen.has(k)) {
              seen.add(k);
              next.push(rule);
            }
          }
        }
        if (JSON.stringify(next) !== JSON.stringify(rules.get(name))) {
          rules.set(name, next);
          changed.add(name);
          moved = true;
        }
      }
      if (!moved) break;
    }
    for (const name of changed) {
      const want = rules.get(name)!;
      await guaranteedUpdate(this.env.store, objectKey(t, '', name), (cur) => {
        if (selectorsOf(cur) === undefined || JSON.stringify(cur['rules'] ?? []) === JSON.stringify(want)) return null;
        return prepareUpdate(t, { ...structuredClone(cur), rules: want }, cur, 'main') ?? null;
      });
    }
    return undefined;
  }
}
