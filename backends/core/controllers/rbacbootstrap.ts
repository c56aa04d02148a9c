// The default RBAC policy (policies/rbac), created or reconciled at every
// start as kube-apiserver's `rbac/bootstrap-roles` hook does: missing
// objects are created; existing ones get the missing labels, annotations,
// rules, aggregation selectors and subjects added (never removed); objects
// annotated rbac.authorization.kubernetes.io/autoupdate=false are left
// alone. A binding whose roleRef differs is deleted and recreated.
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import { AUTOUPDATE_ANNOTATION, defaultClusterRoleBindings, defaultClusterRoles } from '../../../policies/rbac/index.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { getOrCreate } from './loop.js';
import { guaranteedUpdate, retryOnConflict, RETRY, StoreError } from '../store/types.js';

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function rbacType(env: CoreEnv, plural: string): ResourceType {
  const t = env.registry.lookup(RBAC_GROUP, 'v1', plural);
  if (!t) throw new Error(`the registry has no ${RBAC_GROUP}/v1 ${plural} type`);
  return t;
}

const json = (v: unknown) => JSON.stringify(v);
const listOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** Adds what `expected` has and `current` lacks; undefined when nothing is missing. */
function reconcile(current: KObject, expected: KObject, fields: readonly string[]): KObject | undefined {
  const next: KObject = structuredClone(current);
  const meta = next.metadata;
  meta.labels = { ...expected.metadata.labels, ...meta.labels };
  meta.annotations = { ...expected.metadata.annotations, ...meta.annotations };
  for (const f of fields) {
    const have = listOf(next[f]);
    const missing = listOf(expected[f]).filter((x) => !have.some((h) => json(h) === json(x)));
    if (missing.length > 0) next[f] = [...have, ...missing];
  }
  const agg = expected['aggregationRule'] as { clusterRoleSelectors?: unknown[] } | undefined;
  if (agg) {
    const cur = (next['aggregationRule'] ?? {}) as { clusterRoleSelectors?: unknown[] };
    const have = listOf(cur.clusterRoleSelectors);
    const missing = listOf(agg.clusterRoleSelectors).filter((x) => !have.some((h) => json(h) === json(x)));
    if (missing.length > 0 || !next['aggregationRule']) next['aggregationRule'] = { ...cur, clusterRoleSelectors: [...have, ...missing] };
  }
  return json(next) === json(current) ? undefined : next;
}

const ENSURE_ATTEMPTS = 5;

async function ensure(env: CoreEnv, t: ResourceType, expected: KObject, fields: readonly string[]): Promise<void> {
  const name = expected.metadata.name!;
  const key = objectKey(t, '', name);
  // An object that keeps changing under these writes is left as it is until the next reconcile.
  await retryOnConflict<void>(
    async () => {
      const current = await getOrCreate(env, t, key, expected);
      if (!current) return;
      if (current.metadata.annotations?.[AUTOUPDATE_ANNOTATION] === 'false') return;
      if (t.plural === 'clusterrolebindings' && json(current['roleRef']) !== json(expected['roleRef'])) {
        // roleRef is immutable: the binding is recreated as expected.
        try {
          await env.store.delete(key, Number(current.metadata.resourceVersion));
        } catch (err) {
          if (!(err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict'))) throw err;
        }
        return RETRY;
      }
      await guaranteedUpdate(env.store, key, (cur) => {
        const next = reconcile(cur, expected, fields);
        return next ? (prepareUpdate(t, next, cur, 'main') ?? null) : null;
      });
    },
    { giveUp: undefined },
    ENSURE_ATTEMPTS,
  );
}

/** Creates or reconciles every default ClusterRole, then every default ClusterRoleBinding. */
export async function reconcileDefaultRbac(env: CoreEnv): Promise<void> {
  const roles = rbacType(env, 'clusterroles');
  const bindings = rbacType(env, 'clusterrolebindings');
  for (const r of defaultClusterRoles()) await ensure(env, roles, r, ['rules']);
  for (const b of defaultClusterRoleBindings()) await ensure(env, bindings, b, ['subjects']);
}

/** The post-start hook: reconciles, retrying while the store is not ready (kube's hook polls until it succeeds). */
export async function bootstrapRbac(env: CoreEnv, attempts = 30, pauseMs = 1000): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await reconcileDefaultRbac(env);
      return;
    } catch (err) {
      if (i >= attempts) throw err;
      env.log(`rbac/bootstrap-roles: ${err instanceof Error ? err.message : String(err)}; retrying`);
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  }
}
