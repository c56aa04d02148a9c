// Per-decision cost of the RBAC authorizer, measured directly on it (no
// HTTP): a policy with 100, 1,000 and 10,000 RoleBindings that do not name
// the subject (plus the default-like group bindings every user meets), and
// the cost of an allowed and of a denied decision. The subject index should
// keep the cost flat as the unrelated bindings grow. Run alone with
// `node --import tsx bench/authz-rbac.ts`; bench/run.ts may call runRbacBench().
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { RbacAuthorizer, RbacPolicy } from '../gateway/authz/rbac/index.js';
import type { PolicyRule } from '../gateway/authz/rbac/types.js';
import type { Attributes } from '../gateway/authz/types.js';

export interface RbacBenchRow {
  readonly bindings: number;
  readonly allowNs: number;
  readonly denyNs: number;
}

const rule = (verbs: string[], apiGroups: string[], resources: string[]): PolicyRule => ({
  verbs,
  apiGroups,
  resources,
  resourceNames: [],
  nonResourceURLs: [],
});

export function buildPolicy(unrelated: number): RbacPolicy {
  const p = new RbacPolicy();
  p.setClusterRole('view', [
    rule(['get', 'list', 'watch'], [''], ['configmaps', 'endpoints', 'persistentvolumeclaims', 'pods', 'services']),
    rule(['get', 'list', 'watch'], ['apps'], ['deployments', 'replicasets', 'statefulsets']),
  ]);
  p.setClusterRole('basic', [rule(['create'], ['authorization.k8s.io'], ['selfsubjectaccessreviews'])]);
  p.setClusterRole('discovery', [{ verbs: ['get'], apiGroups: [], resources: [], resourceNames: [], nonResourceURLs: ['/api', '/api/*', '/apis', '/apis/*'] }]);
  // What every authenticated user meets.
  for (const [name, role] of [
    ['basic', 'basic'],
    ['discovery', 'discovery'],
  ]) {
    p.setBinding({
      kind: 'ClusterRoleBinding',
      namespace: '',
      name: name!,
      roleRef: { kind: 'ClusterRole', name: role! },
      subjects: [{ kind: 'Group', name: 'system:authenticated', namespace: '' }],
    });
  }
  // Bindings about other users, spread over 100 namespaces (including the subject's).
  for (let i = 0; i < unrelated; i++) {
    p.setBinding({
      kind: 'RoleBinding',
      namespace: `ns-${i % 100}`,
      name: `other-${i}`,
      roleRef: { kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: `user-${i}`, namespace: '' },
        { kind: 'Group', name: `group-${i}`, namespace: '' },
      ],
    });
  }
  p.setBinding({
    kind: 'RoleBinding',
    namespace: 'ns-7',
    name: 'alice-view',
    roleRef: { kind: 'ClusterRole', name: 'view' },
    subjects: [{ kind: 'User', name: 'alice', namespace: '' }],
  });
  return p;
}

function perDecisionNs(authz: RbacAuthorizer, attrs: Attributes, iterations: number): number {
  for (let i = 0; i < 10_000; i++) authz.authorize(attrs); // warm-up
  const start = performance.now();
  for (let i = 0; i < iterations; i++) authz.authorize(attrs);
  return ((performance.now() - start) * 1e6) / iterations;
}

export function runRbacBench(sizes: readonly number[] = [100, 1_000, 10_000], iterations = 300_000): RbacBenchRow[] {
  const user = { username: 'alice', groups: ['dev', 'system:authenticated'] };
  const base: Attributes = {
    user,
    verb: 'list',
    isResourceRequest: true,
    path: '',
    apiGroup: 'apps',
    apiVersion: 'v1',
    namespace: 'ns-7',
    resource: 'deployments',
    subresource: '',
    name: '',
  };
  const rows: RbacBenchRow[] = [];
  for (const n of sizes) {
    const authz = new RbacAuthorizer(buildPolicy(n));
    const allowNs = perDecisionNs(authz, base, iterations);
    const denyNs = perDecisionNs(authz, { ...base, verb: 'delete' }, iterations);
    rows.push({ bindings: n, allowNs, denyNs });
  }
  console.log('RBAC authorizer, per decision (measured directly, bindings not naming the subject):');
  console.log('  bindings   allowed (ns)   denied (ns)   decisions/s (allowed)');
  for (const r of rows) {
    console.log(
      `  ${String(r.bindings).padStart(8)}   ${r.allowNs.toFixed(0).padStart(12)}   ${r.denyNs.toFixed(0).padStart(11)}   ${Math.round(1e9 / r.allowNs)
        .toLocaleString('en-US')
        .padStart(21)}`,
    );
  }
  const first = rows[0]!;
  const last = rows.at(-1)!;
  console.log(
    `  growth from ${first.bindings} to ${last.bindings} bindings: allowed ×${(last.allowNs / first.allowNs).toFixed(2)}, denied ×${(last.denyNs / first.denyNs).toFixed(2)} (flat = the index works)`,
  );
  return rows;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) runRbacBench();
