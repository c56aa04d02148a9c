// Access insight (issue 24), measured directly on the chain (no HTTP): the
// RBAC policy of bench/authz-rbac.ts with 10,000 RoleBindings about other
// subjects, behind the system:masters bypass, as the gateway builds it. In
// the same run: SubjectAccessReview's work (`AuthorizerChain.evaluate`) and
// a SubjectAccessExplanation's (`explainChain`), allowed and denied (a
// denial also collects near misses over the subject's grants at every
// scope); then SubjectsReview's (`whoCan`, which visits every binding at
// the request's scope) latency percentiles. Targets: explanation ≥ 25% of
// the review's rate; who-can p99 ≤ 50 ms. The HTTP cost, the same for both
// kinds of review, is left out, so the ratio is the stricter one.
// `node --import tsx bench/access.ts` runs it alone; bench/authz.ts calls it.
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { RbacAuthorizer } from '../gateway/authz/rbac/index.js';
import { privilegedGroups } from '../gateway/authz/always.js';
import { AuthorizerChain } from '../gateway/authz/chain.js';
import { explainChain, whoCan, type ExplainedPart } from '../gateway/authz/explain.js';
import type { Attributes } from '../gateway/authz/types.js';
import { buildPolicy } from './authz-rbac.js';

export interface AccessBenchFigures {
  readonly bindings: number;
  readonly reviewPerS: { allowed: number; denied: number };
  readonly explainPerS: { allowed: number; denied: number };
  readonly whoCanMs: { p50: number; p99: number; subjects: number };
}

async function perSecond(f: () => Promise<unknown>, ms: number): Promise<number> {
  const warm = performance.now();
  while (performance.now() - warm < ms / 4) await f();
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ms) {
    for (let i = 0; i < 100; i++) await f();
    n += 100;
    now = performance.now();
  }
  return (n * 1000) / (now - start);
}

export async function runAccessBench(bindings = 10_000, ms = 1500): Promise<AccessBenchFigures> {
  const rbac = new RbacAuthorizer(buildPolicy(bindings));
  const bypass = privilegedGroups(['system:masters']);
  const parts: ExplainedPart[] = [{ type: 'Privileged', name: bypass.name, authorizer: bypass }, { type: 'RBAC', name: 'rbac', authorizer: rbac }];
  const chain = new AuthorizerChain(parts.map((p) => p.authorizer));
  const user = { username: 'alice', groups: ['dev', 'system:authenticated'] };
  const allowed: Attributes = { user, verb: 'list', isResourceRequest: true, path: '', apiGroup: 'apps', apiVersion: 'v1', namespace: 'ns-7', resource: 'deployments', subresource: '', name: '' };
  const denied: Attributes = { ...allowed, verb: 'delete' };
  // Two rounds in mirrored order, so drift and JIT warm-up land on both; means of the rounds.
  const r = { reviewA: 0, explainA: 0, explainD: 0, reviewD: 0 };
  const order: Array<keyof typeof r> = ['reviewA', 'explainA', 'explainD', 'reviewD'];
  const run: Record<keyof typeof r, () => Promise<unknown>> = {
    reviewA: () => chain.evaluate(allowed), explainA: () => explainChain(parts, allowed),
    explainD: () => explainChain(parts, denied), reviewD: () => chain.evaluate(denied),
  };
  for (const k of [...order, ...[...order].reverse()]) r[k] += (await perSecond(run[k], ms)) / 2;
  const { reviewA, explainA, explainD, reviewD } = r;
  const times: number[] = [];
  let subjects = 0;
  for (let i = 0; i < 50; i++) whoCan(parts, { ...allowed, namespace: `ns-${i % 100}` }); // warm-up
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    subjects = whoCan(parts, { ...allowed, namespace: `ns-${i % 100}` }).subjects.length;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { bindings, reviewPerS: { allowed: reviewA, denied: reviewD }, explainPerS: { allowed: explainA, denied: explainD }, whoCanMs: { p50: q(0.5), p99: q(0.99), subjects } };
}

export function accessRows(f: AccessBenchFigures): string[][] {
  const pct = (a: number, b: number) => `${Math.round((100 * a) / b)}%`;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    [`SubjectAccessExplanation vs SubjectAccessReview, ${n(f.bindings)} bindings, measured on the chain`,
      `allowed ${n(f.explainPerS.allowed)} vs ${n(f.reviewPerS.allowed)}/s = ${pct(f.explainPerS.allowed, f.reviewPerS.allowed)}; denied (with near misses) ${n(f.explainPerS.denied)} vs ${n(f.reviewPerS.denied)}/s = ${pct(f.explainPerS.denied, f.reviewPerS.denied)}`, '≥ 25%'],
    [`SubjectsReview (who can), ${n(f.bindings)} bindings`, `p50 ${f.whoCanMs.p50.toFixed(2)} ms, p99 ${f.whoCanMs.p99.toFixed(2)} ms (${f.whoCanMs.subjects} subjects)`, 'p99 ≤ 50 ms'],
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const f = await runAccessBench();
  for (const [what, figure, target] of accessRows(f)) console.log(`${what}: ${figure} (target ${target})`);
}
