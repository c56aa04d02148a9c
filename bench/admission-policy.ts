// ValidatingAdmissionPolicy figures: ConfigMap creates on a Gatehouse
// without policies, on one with a policy of three CEL expressions that
// matches them (bound with Deny; every create passes), and on one with 100
// bound policies that match Secrets only (a request no configuration names
// must cost a lookup). Three servers with the same PKI on CPU 0, the raw load
// generator (bench/loadgen.ts) on CPU 1, in the order none, one, 100, 100,
// one, none so the machine's drift lands on all. Targets: with the policy
// ≥ 80% of without, unmatched beside 100 policies ≥ 95% of without.
// BENCH_ONLY=admission-policy runs it alone in run.ts.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from './admin.js';
import { placement, startChild, withCpu, type Child } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants, type Tls } from './variants.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const A = '/apis/admissionregistration.k8s.io/v1';

/** The three expressions every bench create passes. */
const VALIDATIONS = [
  { expression: 'object.metadata.name.size() <= 253' },
  { expression: '!has(object.data) || object.data.size() < 10', message: 'at most 9 keys' },
  { expression: "request.userInfo.username != 'system:anonymous'" },
];

async function bind(a: Admin, name: string, resource: string, validations: readonly object[]): Promise<void> {
  await a.must('POST', `${A}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: [resource] }] },
      validations,
    },
  });
  await a.must('POST', `${A}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: `${name}-binding` },
    spec: { policyName: name, validationActions: ['Deny'] },
  });
}

/** Waits until a dry-run create is refused by a policy (the configuration is in force). */
async function inForce(a: Admin, body: object): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const r = await a.call('POST', '/api/v1/namespaces/bench/configmaps?dryRun=All', body);
    if (r.status >= 400) return;
    await sleep(50);
  }
  throw new Error('the bench policy never applied');
}

export async function runAdmissionPolicyBench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-vap-'));
  const children: Child[] = [];
  try {
    const base = ['--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'];
    const v = await startVariants(root, 'vap', base, children);
    const one = await v.start('one', []);
    const hundred = await v.start('hundred', []);
    const load = await startChild('vap-load', './loadgen.ts', [], 1);
    children.push(load);
    await seedConfigmaps([v.baseline.port, one.port, hundred.port], v.tls);
    const tls: Tls = v.tls;
    const a1 = new Admin(one.port, tls);
    await bind(a1, 'bench-three', 'configmaps', VALIDATIONS);
    await inForce(a1, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'probe' },
      data: Object.fromEntries([...Array(10).keys()].map((k) => [`k${k}`, 'v'])),
    });
    a1.close();
    const a100 = new Admin(hundred.port, tls);
    for (let i = 0; i < 100; i++) await bind(a100, `bench-secrets-${i}`, 'secrets', VALIDATIONS);
    a100.close();
    await sleep(500);
    const run = async (s: { port: number; child: Child }): Promise<{ rate: number; cpuUs: number }> => {
      const r = await withCpu(s.child, load, () => configmapRun(load, tls, s.port, 'POST', { warmupMs: WARMUP, durationMs: DURATION }));
      const rate = r.requests / r.seconds;
      return { rate, cpuUs: (r.cpu.server / rate) * 1e6 };
    };
    const n1 = await run(v.baseline);
    const o1 = await run(one);
    const h1 = await run(hundred);
    const h2 = await run(hundred);
    const o2 = await run(one);
    const n2 = await run(v.baseline);
    const mean = (a: { rate: number; cpuUs: number }, b: { rate: number; cpuUs: number }) => ({ rate: (a.rate + b.rate) / 2, cpuUs: (a.cpuUs + b.cpuUs) / 2 });
    const none = mean(n1, n2);
    const withPolicy = mean(o1, o2);
    const unmatched = mean(h1, h2);
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const line = (name: string, x: { rate: number; cpuUs: number }, target: string) =>
      `  ${name.padEnd(44)} ${f(x.rate)} req/s, ${x.cpuUs.toFixed(0)} µs CPU/request   ${((100 * x.rate) / none.rate).toFixed(1)}% of none by req/s, ${((100 * none.cpuUs) / x.cpuUs).toFixed(1)}% by CPU/request${target}`;
    process.stdout.write(
      [
        '',
        `=== ValidatingAdmissionPolicy (bench/admission-policy.ts; ${placement()}) ===`,
        "CREATE configmap, two runs each (none, one, 100, 100, one, none): requests/s and the server's CPU per request pooled over both",
        `  ${'no policy'.padEnd(44)} ${f(none.rate)} req/s, ${none.cpuUs.toFixed(0)} µs CPU/request`,
        line('one policy of three expressions, matching', withPolicy, ' (target ≥ 80%)'),
        line('100 policies on secrets, none matching', unmatched, ' (target ≥ 95%)'),
        '',
      ].join('\n') + '\n',
    );
    // Rows by the server's CPU per request: on a shared machine the steadier figure (req/s is printed above).
    recordRow({
      name: 'CREATE configmap, one ValidatingAdmissionPolicy of three expressions vs none (CPU per request)',
      value: withPolicy.cpuUs,
      unit: 'µs/request',
      baseline: none.cpuUs,
      target: '≥ 80% of none (none CPU / with CPU)',
      atMost: 1 / 0.8,
    });
    recordRow({
      name: 'CREATE configmap not matched by any of 100 ValidatingAdmissionPolicies vs none (CPU per request)',
      value: unmatched.cpuUs,
      unit: 'µs/request',
      baseline: none.cpuUs,
      target: '≥ 95% of none (none CPU / with CPU)',
      atMost: 1 / 0.95,
    });
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

// Run directly: this section alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runAdmissionPolicyBench();
