// Dynamic admission figures: ConfigMap create on one memory server without
// admission configurations, with one validating webhook (an HTTPS server in
// this process with its own CA, answering allowed at once), and with 100
// validating webhook configurations none of which matches a ConfigMap
// create (the lookup index's cost). Each scenario is set up on the same
// server, measured, and taken down again; the order is mirrored (without,
// each scenario, each scenario reversed, without) so the machine's drift
// lands on all. A scenario is one entry of SCENARIOS: a name, its target
// (a share of the rate without admission), its setup and its teardown.
// The policy scenarios: one ValidatingAdmissionPolicy of three expressions
// that matches (every create passes), and 100 bound policies that do not.
// The quota scenario: one ResourceQuota on count/configmaps in the creates'
// namespace (ResourceQuota admission is on in every run: without it, the
// namespace has no quota). Targets: webhook ≥ 50%, policy ≥ 80%, unmatched ≥ 95%,
// quota ≥ 70%. BENCH_ONLY=admission runs it.
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCa, generateServingCert } from '../certs/pki.js';
import { Admin } from './admin.js';
import { placement, startChild, withCpu, type Child } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants } from './variants.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const ADM = '/apis/admissionregistration.k8s.io/v1';

/** What a scenario gets to set itself up: the server's admin client and the local webhook. */
export interface ScenarioContext {
  readonly admin: Admin;
  readonly webhook: { readonly url: string; readonly caBundle: string; reviews(): number };
}

export interface Scenario {
  readonly name: string;
  /** Share of the rate without admission it is held to. */
  readonly atLeast: number;
  setup(c: ScenarioContext): Promise<void>;
  teardown(c: ScenarioContext): Promise<void>;
}

const webhookConfig = (name: string, url: string, caBundle: string, resources: string[], group = '') => ({
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  metadata: { name },
  webhooks: [
    {
      name: `${name}.bench.example.com`,
      clientConfig: { url, caBundle },
      rules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [group], apiVersions: ['*'], resources }],
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    },
  ],
});

/** Creates until `seen` says the configuration is in force (it is read through a watch). */
async function untilInForce(admin: Admin, seen: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !seen(); i++) {
    await admin.call('POST', '/api/v1/namespaces/bench/configmaps?dryRun=All', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'probe-' } });
    if (!seen()) await new Promise((r) => setTimeout(r, 25));
  }
  if (!seen()) throw new Error('the admission configuration never came into force');
}

export const SCENARIOS: Scenario[] = [
  {
    name: 'one validating webhook (local HTTPS)',
    atLeast: 0.5,
    async setup(c) {
      const before = c.webhook.reviews();
      await c.admin.must('POST', `${ADM}/validatingwebhookconfigurations`, webhookConfig('one', c.webhook.url, c.webhook.caBundle, ['configmaps']));
      await untilInForce(c.admin, () => c.webhook.reviews() > before);
    },
    async teardown(c) {
      await c.admin.must('DELETE', `${ADM}/validatingwebhookconfigurations/one`);
    },
  },
  {
    name: 'not matched by any of 100 configurations',
    atLeast: 0.95,
    async setup(c) {
      // Rules on other resources of the core group and on other groups: candidates are looked up, none applies.
      for (let i = 0; i < 100; i++) {
        const [resources, group] = i % 2 === 0 ? [[`other${i}s`], ''] : [['configmaps', 'secrets'], `group${i}.example.com`];
        await c.admin.must(
          'POST',
          `${ADM}/validatingwebhookconfigurations`,
          webhookConfig(`unmatched-${i}`, c.webhook.url, c.webhook.caBundle, resources, group),
        );
      }
      // In force once a configuration made after them is (one watch delivers them in order).
      const before = c.webhook.reviews();
      await c.admin.must('POST', `${ADM}/validatingwebhookconfigurations`, webhookConfig('marker', c.webhook.url, c.webhook.caBundle, ['configmaps']));
      await untilInForce(c.admin, () => c.webhook.reviews() > before);
      await c.admin.must('DELETE', `${ADM}/validatingwebhookconfigurations/marker`);
      await new Promise((r) => setTimeout(r, 500));
    },
    async teardown(c) {
      await c.admin.must('DELETE', `${ADM}/validatingwebhookconfigurations`);
    },
  },
];

/** A ValidatingAdmissionPolicy on `resources` with its binding (Deny). */
async function boundPolicy(admin: Admin, name: string, resources: string[], validations: readonly object[]): Promise<void> {
  await admin.must('POST', `${ADM}/validatingadmissionpolicies`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: { matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources }] }, validations },
  });
  await admin.must('POST', `${ADM}/validatingadmissionpolicybindings`, {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'] },
  });
}

/** Three expressions every bench create passes; a ConfigMap of 10 keys fails the second. */
const THREE = [
  { expression: 'object.metadata.name.size() <= 253' },
  { expression: '!has(object.data) || object.data.size() < 10', message: 'at most 9 keys' },
  { expression: "request.userInfo.username != 'system:anonymous'" },
];

/** Dry-run creates of a ConfigMap the policy refuses until one is refused (the policies are read through a watch). */
async function untilRefused(admin: Admin): Promise<void> {
  const body = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { generateName: 'probe-' },
    data: Object.fromEntries([...Array(10).keys()].map((k) => [`k${k}`, 'v'])),
  };
  for (let i = 0; i < 200; i++) {
    if ((await admin.call('POST', '/api/v1/namespaces/bench/configmaps?dryRun=All', body)).status >= 400) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the admission policy never came into force');
}

SCENARIOS.push(
  {
    name: 'one ValidatingAdmissionPolicy of three expressions',
    atLeast: 0.8,
    async setup(c) {
      await boundPolicy(c.admin, 'bench-three', ['configmaps'], THREE);
      await untilRefused(c.admin);
    },
    async teardown(c) {
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicybindings/bench-three`);
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicies/bench-three`);
    },
  },
  {
    // ResourceQuota admission (on in every run): the same creates charged to a quota of their namespace.
    name: 'one ResourceQuota (count/configmaps) in the namespace',
    atLeast: 0.7,
    async setup(c) {
      const path = '/api/v1/namespaces/bench/resourcequotas';
      await c.admin.must('POST', path, { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'bench' }, spec: { hard: { 'count/configmaps': '1G' } } });
      // In force once the controller filled its status and a create is charged to it.
      for (let i = 0; i < 200; i++) {
        const got = JSON.parse((await c.admin.call('GET', `${path}/bench`)).text) as { status?: { used?: Record<string, string> } };
        const used = got.status?.used?.['count/configmaps'];
        if (used !== undefined && used !== '0') return;
        if (used !== undefined)
          await c.admin.call('POST', '/api/v1/namespaces/bench/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'probe-' } });
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('the quota never came into force');
    },
    async teardown(c) {
      await c.admin.must('DELETE', '/api/v1/namespaces/bench/resourcequotas/bench');
    },
  },
  {
    name: 'not matched by any of 100 ValidatingAdmissionPolicies',
    atLeast: 0.95,
    async setup(c) {
      for (let i = 0; i < 100; i++) await boundPolicy(c.admin, `bench-unmatched-${i}`, i % 2 === 0 ? ['secrets'] : [`other${i}s`], THREE);
      // In force once a policy bound after them is (one watch delivers them in order).
      await boundPolicy(c.admin, 'bench-marker', ['configmaps'], THREE);
      await untilRefused(c.admin);
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicybindings/bench-marker`);
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicies/bench-marker`);
      await new Promise((r) => setTimeout(r, 500));
    },
    async teardown(c) {
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicybindings`);
      await c.admin.must('DELETE', `${ADM}/validatingadmissionpolicies`);
    },
  },
);

interface Figure {
  rate: number;
  cpuUs: number;
}

const pooled = (a: Figure, b: Figure): Figure => ({ rate: (a.rate + b.rate) / 2, cpuUs: (a.cpuUs + b.cpuUs) / 2 });

async function startWebhook(): Promise<{ server: Server; url: string; caBundle: string; reviews(): number }> {
  const ca = generateCa('bench-admission-webhook-ca');
  const cert = generateServingCert(ca);
  let reviews = 0;
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      reviews++;
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; request: { uid: string } };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { server, url: `https://127.0.0.1:${port}/validate`, caBundle: Buffer.from(ca.certPem).toString('base64'), reviews: () => reviews };
}

export async function runAdmissionBench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-admission-'));
  const children: Child[] = [];
  const hook = await startWebhook();
  try {
    const base = ['--storage-backend', 'memory', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'];
    const v = await startVariants(root, 'admission', base, children);
    const load = await startChild('admission-load', './loadgen.ts', [], 1);
    children.push(load);
    await seedConfigmaps([v.baseline.port], v.tls);
    const admin = new Admin(v.baseline.port, v.tls);
    const ctx: ScenarioContext = { admin, webhook: { url: hook.url, caBundle: hook.caBundle, reviews: hook.reviews } };
    /** Requests/s, and the server's CPU µs per request (its CPU share / the rate): on a shared machine the steadier figure. */
    const run = async (): Promise<Figure> => {
      const r = await withCpu(v.baseline.child, load, () => configmapRun(load, v.tls, v.baseline.port, 'POST', { warmupMs: WARMUP, durationMs: DURATION }));
      const rate = r.requests / r.seconds;
      return { rate, cpuUs: (r.cpu.server / rate) * 1e6 };
    };
    const measured = async (s: Scenario): Promise<Figure> => {
      await s.setup(ctx);
      try {
        return await run();
      } finally {
        await s.teardown(ctx);
      }
    };
    // Unmeasured: each path (the server's, and the webhook's in this process) compiled and warm before the first figure.
    await run();
    for (const s of SCENARIOS) await measured(s);
    const off1 = await run();
    const first: Figure[] = [];
    for (const s of SCENARIOS) first.push(await measured(s));
    const second: Figure[] = [];
    for (const s of [...SCENARIOS].reverse()) second.unshift(await measured(s));
    const off2 = await run();
    const off = pooled(off1, off2);
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const lines = [
      '',
      `=== Admission (bench/admission.ts; ${placement()}) ===`,
      "CREATE configmap, 50 connections, two runs each in mirrored order: requests/s, and the server's CPU per request pooled over both (the share by CPU, the steadier figure on a shared machine, is judged against the target)",
    ];
    lines.push(`  ${'without admission'.padEnd(42)} ${f(off1.rate)} / ${f(off2.rate)} req/s, ${off.cpuUs.toFixed(0)} µs CPU/request`);
    SCENARIOS.forEach((s, i) => {
      const p = pooled(first[i]!, second[i]!);
      recordRow({
        name: `CREATE configmap, ${s.name}, vs without admission (CPU per request)`,
        value: p.cpuUs,
        unit: 'µs/request',
        baseline: off.cpuUs,
        target: `≥ ${s.atLeast * 100}% of without (without CPU / with CPU)`,
        atMost: 1 / s.atLeast,
      });
      lines.push(
        `  ${s.name.padEnd(42)} ${f(first[i]!.rate)} / ${f(second[i]!.rate)} req/s, ${p.cpuUs.toFixed(0)} µs CPU/request   ` +
          `${((100 * p.rate) / off.rate).toFixed(1)}% of without by req/s, ${((100 * off.cpuUs) / p.cpuUs).toFixed(1)}% by CPU/request (target ≥ ${s.atLeast * 100}%)`,
      );
    });
    lines.push(`  webhook reviews answered: ${f(hook.reviews())}`, '');
    process.stdout.write(lines.join('\n') + '\n');
    admin.close();
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    hook.server.closeAllConnections();
    hook.server.close();
    await rm(root, { recursive: true, force: true });
  }
}

// Run directly: this section alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runAdmissionBench();
