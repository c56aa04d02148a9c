// Access insight (explanations and who-can), two ways.
//
// On the chain (no HTTP, `runAccessBench`): the RBAC policy of
// bench/authz-rbac.ts with 10,000 RoleBindings about other subjects, behind
// the system:masters bypass, as the gateway builds it. In the same run:
// SubjectAccessReview's work (`AuthorizerChain.evaluate`) and a
// SubjectAccessExplanation's (`explainChain` with otherSubjects, as the
// privileged form asks), allowed and denied (a denial also collects near
// misses over the subject's grants at every scope and the bindings of other
// subjects at the request's); then SubjectsReview's (`whoCan`, which visits
// the bindings of the request's scope) latency percentiles. HTTP, the same
// for both reviews, is left out, so the ratio is the stricter one.
//
// Over HTTPS (`runAccessHttp`, called by bench/authz.ts on its RBAC server
// holding 10,000 RoleBindings): the same questions POSTed by the admin
// (system:masters, so the caller's own authorization is the bypass for
// every kind), 50 keep-alive connections: SubjectAccessReview beside
// SubjectAccessExplanation for the same spec, allowed, denied, and denied in
// a namespace where ~30 other groups hold the grant (the crowded near-miss
// case), two rounds in mirrored order; then SubjectsReview over one
// connection (the latency of an answer, no queueing) and over 50 (its rate).
//
// BENCH_CPU_PROF=<dir> writes a CPU profile of the server per HTTPS run
// (access-<what>.cpuprofile; the second round's overwrites the first's).
// Targets: explanation ≥ 25% of the review's rate; who-can p99 ≤ 50 ms.
// `node --import tsx bench/access.ts` runs the chain part alone;
// `node --import tsx bench/authz.ts` both.
import { request } from 'node:https';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { RbacAuthorizer } from '../gateway/authz/rbac/index.js';
import { privilegedGroups } from '../gateway/authz/always.js';
import { AuthorizerChain } from '../gateway/authz/chain.js';
import { explainChain, whoCan, type ExplainedPart } from '../gateway/authz/explain.js';
import type { Attributes } from '../gateway/authz/types.js';
import { buildPolicy } from './authz-rbac.js';
import type { Child } from './procs.js';
import { withCpu } from './procs.js';
import type { LoopArgs, RunResult } from './authn.js';
import { cpuUs, ms, num, pct, progress, rps, share } from './report.js';
import { recordRow } from './summary.js';

export interface AccessBenchFigures {
  readonly bindings: number;
  readonly reviewPerS: { allowed: number; denied: number };
  readonly explainPerS: { allowed: number; denied: number };
  readonly whoCanMs: { p50: number; p99: number; subjects: number };
}

async function perSecond(f: () => unknown, ms: number): Promise<number> {
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
  const parts: ExplainedPart[] = [
    { type: 'Privileged', name: bypass.name, authorizer: bypass },
    { type: 'RBAC', name: 'rbac', authorizer: rbac },
  ];
  const chain = new AuthorizerChain(parts.map((p) => p.authorizer));
  const user = { username: 'alice', groups: ['dev', 'system:authenticated'] };
  const allowed: Attributes = {
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
  const denied: Attributes = { ...allowed, verb: 'delete' };
  // Two rounds in mirrored order, so drift and JIT warm-up land on both; means of the rounds.
  const r = { reviewA: 0, explainA: 0, explainD: 0, reviewD: 0 };
  const order: Array<keyof typeof r> = ['reviewA', 'explainA', 'explainD', 'reviewD'];
  const run: Record<keyof typeof r, () => unknown> = {
    reviewA: () => chain.evaluate(allowed),
    explainA: () => explainChain(parts, allowed),
    explainD: () => explainChain(parts, denied, { otherSubjects: true }),
    reviewD: () => chain.evaluate(denied),
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
  return {
    bindings,
    reviewPerS: { allowed: reviewA, denied: reviewD },
    explainPerS: { allowed: explainA, denied: explainD },
    whoCanMs: { p50: q(0.5), p99: q(0.99), subjects },
  };
}

export function accessRows(f: AccessBenchFigures): string[][] {
  const pct = (a: number, b: number) => `${Math.round((100 * a) / b)}%`;
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    [
      `SubjectAccessExplanation vs SubjectAccessReview, ${n(f.bindings)} bindings, measured on the chain`,
      `allowed ${n(f.explainPerS.allowed)} vs ${n(f.reviewPerS.allowed)}/s = ${pct(f.explainPerS.allowed, f.reviewPerS.allowed)}; denied (with near misses) ${n(f.explainPerS.denied)} vs ${n(f.reviewPerS.denied)}/s = ${pct(f.explainPerS.denied, f.reviewPerS.denied)}`,
      '≥ 25%',
    ],
    [
      `SubjectsReview (who can), ${n(f.bindings)} bindings`,
      `p50 ${f.whoCanMs.p50.toFixed(2)} ms, p99 ${f.whoCanMs.p99.toFixed(2)} ms (${f.whoCanMs.subjects} subjects)`,
      'p99 ≤ 50 ms',
    ],
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const f = await runAccessBench();
  for (const [what, figure, target] of accessRows(f)) console.log(`${what}: ${figure} (target ${target})`);
}

// ---- over HTTPS -------------------------------------------------------------

export interface AccessHttpTarget {
  /** The server (for its CPU) and the load generator child (bench/authn.ts `--child`). */
  readonly server: Child;
  readonly load: Child;
  readonly port: number;
  /** The admin's client certificate (system:masters) and the CA. */
  readonly tls: { ca: string; cert: string; key: string };
  /** A user with one binding at `allowed`'s scope, and the namespaces to ask about (bench/authz.ts fixtures). */
  readonly user: { name: string; groups: string[] };
  readonly allowed: Record<string, string>;
  readonly denied: Record<string, string>;
  readonly crowded: Record<string, string>;
  readonly warmupMs: number;
  readonly durationMs: number;
}

type Case = 'allowed' | 'denied' | 'crowded';
const CASES: readonly Case[] = ['allowed', 'denied', 'crowded'];

export interface AccessHttpFigures {
  /** Per case, each round's run: SubjectAccessReview and SubjectAccessExplanation. */
  readonly review: Record<Case, RunResult[]>;
  readonly explain: Record<Case, RunResult[]>;
  /** Near misses in one explanation of each case (what the explanation carried). */
  readonly nearMisses: Record<Case, number>;
  readonly whoCanOne: RunResult;
  readonly whoCanMany: RunResult;
  readonly subjects: number;
}

const SAR_PATH = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const SAE_PATH = '/apis/access.gatehouse.dev/v1alpha1/subjectaccessexplanations';
const WHO_PATH = '/apis/access.gatehouse.dev/v1alpha1/subjectsreviews';

/** One POST through node:https (checks the answer before a run; the load generator reads only status lines). */
interface Answer {
  status: number;
  json: { status: { allowed?: boolean; nearMisses?: unknown[]; subjects?: unknown[] } };
}

async function postOnce(t: AccessHttpTarget, path: string, body: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: t.port,
        path,
        method: 'POST',
        ca: t.tls.ca,
        cert: t.tls.cert,
        key: t.tls.key,
        servername: 'localhost',
        headers: { 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Answer['json'] }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function runAccessHttp(t: AccessHttpTarget): Promise<AccessHttpFigures> {
  const spec = (resourceAttributes: Record<string, string>) => ({ user: t.user.name, groups: t.user.groups, resourceAttributes });
  const bodies = (c: Case) => {
    const s = spec(t[c]);
    return {
      review: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: s }),
      explain: JSON.stringify({ apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SubjectAccessExplanation', spec: s }),
    };
  };
  const who = JSON.stringify({ apiVersion: 'access.gatehouse.dev/v1alpha1', kind: 'SubjectsReview', spec: { resourceAttributes: t.crowded } });
  // The answers are what the bench claims they are: the access group is served, and each case decides as named.
  const nearMisses = {} as Record<Case, number>;
  for (const c of CASES) {
    const b = bodies(c);
    const [r, e] = [await postOnce(t, SAR_PATH, b.review), await postOnce(t, SAE_PATH, b.explain)];
    if (r.status !== 201 || e.status !== 201)
      throw new Error(`access bench: ${c}: SubjectAccessReview ${r.status}, SubjectAccessExplanation ${e.status} (${JSON.stringify(e.json).slice(0, 200)})`);
    if (r.json.status.allowed !== (c === 'allowed') || e.json.status.allowed !== (c === 'allowed'))
      throw new Error(`access bench: ${c} decided ${r.json.status.allowed}/${e.json.status.allowed}`);
    nearMisses[c] = (e.json.status.nearMisses ?? []).length;
  }
  const w = await postOnce(t, WHO_PATH, who);
  if (w.status !== 201) throw new Error(`access bench: SubjectsReview ${w.status}`);
  const subjects = (w.json.status.subjects ?? []).length;

  const loop = (path: string, body: string, connections: number): LoopArgs => ({
    target: { port: t.port, ...t.tls },
    connections,
    warmupMs: t.warmupMs,
    durationMs: t.durationMs,
    maxRequests: 3_000_000,
    method: 'POST',
    path,
    body,
  });
  const prof = process.env['BENCH_CPU_PROF'] || undefined;
  const run = async (what: string, args: LoopArgs): Promise<RunResult> => {
    if (prof) await t.server.call('profStart');
    const r = await withCpu(t.server, t.load, () => t.load.call<RunResult>('loop', args));
    if (prof) await t.server.call('profStop', { file: join(prof, `access-${what.replace(/[^A-Za-z0-9]+/g, '-')}.cpuprofile`) });
    progress(
      what,
      `${num(rps(r))} req/s, p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}, non-201 ${r.requests - (r.statuses['201'] ?? 0)}; CPU server ${share(r.cpu!.server)}, load ${share(r.cpu!.load)}`,
    );
    return r;
  };
  const review = { allowed: [], denied: [], crowded: [] } as Record<Case, RunResult[]>;
  const explain = { allowed: [], denied: [], crowded: [] } as Record<Case, RunResult[]>;
  // Review, explanation, explanation, review… then the mirror: drift lands on both kinds.
  const order: Array<[Case, 'review' | 'explain']> = [
    ['allowed', 'review'],
    ['allowed', 'explain'],
    ['denied', 'explain'],
    ['denied', 'review'],
    ['crowded', 'review'],
    ['crowded', 'explain'],
  ];
  for (const [c, kind] of [...order, ...[...order].reverse()]) {
    const b = bodies(c);
    const r = await run(
      `${kind === 'review' ? 'SubjectAccessReview' : 'SubjectAccessExplanation'}, ${c}`,
      loop(kind === 'review' ? SAR_PATH : SAE_PATH, b[kind], 50),
    );
    (kind === 'review' ? review : explain)[c].push(r);
  }
  const whoCanOne = await run('SubjectsReview, 1 connection', loop(WHO_PATH, who, 1));
  const whoCanMany = await run('SubjectsReview, 50 connections', loop(WHO_PATH, who, 50));
  return { review, explain, nearMisses, whoCanOne, whoCanMany, subjects };
}

export function accessHttpRows(f: AccessHttpFigures): string[][] {
  const pooled = (rs: readonly RunResult[]) => ({
    rate: rs.reduce((s, r) => s + r.requests, 0) / rs.reduce((s, r) => s + r.seconds, 0),
    cpu: rs.reduce((s, r) => s + cpuUs(r), 0) / rs.length,
  });
  const rows = CASES.map((c) => {
    const r = pooled(f.review[c]);
    const e = pooled(f.explain[c]);
    recordRow({
      name: `SubjectAccessExplanation vs SubjectAccessReview over HTTPS, ${c}`,
      value: e.rate,
      unit: 'req/s',
      baseline: r.rate,
      target: '≥ 25%',
      atLeast: 0.25,
    });
    return [
      `SubjectAccessExplanation vs SubjectAccessReview over HTTPS, ${c}${c === 'allowed' ? '' : ` (${f.nearMisses[c]} near misses)`}`,
      `${num(e.rate)} vs ${num(r.rate)}/s = ${pct(e.rate, r.rate)}; by server CPU per request ${pct(r.cpu, e.cpu)} (${num(e.cpu)} vs ${num(r.cpu)} µs)`,
      '≥ 25%',
    ];
  });
  const one = f.whoCanOne;
  recordRow({
    name: 'SubjectsReview (who can) over HTTPS p99, 1 connection, 10,000 bindings',
    value: one.latency.p99,
    unit: 'ms',
    target: 'p99 ≤ 50 ms',
    atMost: 50,
  });
  rows.push([
    `SubjectsReview over HTTPS (${f.subjects} subjects), 1 connection; 50 connections`,
    `p50 ${ms(one.latency.p50)}, p99 ${ms(one.latency.p99)}, ${num(rps(one))}/s; ${num(rps(f.whoCanMany))}/s, p99 ${ms(f.whoCanMany.latency.p99)}`,
    'p99 ≤ 50 ms',
  ]);
  return rows;
}
