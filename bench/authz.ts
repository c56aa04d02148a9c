// Authorization figures, through the full stack:
// two Gatehouse processes (memory store) on the same core, one with
// --authorization-mode=RBAC and one with AlwaysAllow, each loaded through the
// API with the same 1,000 ClusterRoles and 10,000 RoleBindings (100
// namespaces, bindings about other users and groups) among which exactly one
// binds the measured user — `bench-user` (group `bench-devs`, not
// system:masters), with a client certificate from the dev CA — to a
// ClusterRole that grants `get configmaps` in namespace `bench`. The user
// GETs one configmap over 50 keep-alive connections: every request is one
// authorization decision. Runs alternate AlwaysAllow / RBAC twice and the
// ratio uses the means. Then the per-decision cost measured directly on the
// authorizer at 100, 1,000 and 10,000 bindings (bench/authz-rbac.ts), and
// explanations and who-can against SubjectAccessReview (bench/access.ts):
// over HTTPS on the RBAC server (which serves access.gatehouse.dev
// for it; so does the AlwaysAllow one, to keep the two alike), and on the chain.
//
// The load generator is bench/authn.ts's child (raw keep-alive TLS).
// Knobs: BENCH_AUTHZ=0 skips the section (bench/run.ts);
// BENCH_AUTHZ_DURATION_MS (default 4000), BENCH_AUTHZ_WARMUP_MS (1000).
// `node --import tsx bench/authz.ts` runs it alone.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { generateClientCert } from '../certs/pki.js';
import { freePort, placement, startChild, withCpu, type Child, devPki } from './procs.js';
import { runRbacBench, type RbacBenchRow } from './authz-rbac.js';
import { accessHttpRows, accessRows, runAccessBench, runAccessHttp, type AccessBenchFigures, type AccessHttpFigures } from './access.js';
import { Admin } from './admin.js';
import { errorsOf, LOAD_CPU, loadavg, SERVER_CPU, type LoopArgs, type RunResult } from './authn.js';
import { cpuOf, cpuUs, ms, num, out, pct, progress, rps, share, table } from './report.js';

const DURATION = Number(process.env['BENCH_AUTHZ_DURATION_MS'] ?? 4000);
const WARMUP = Number(process.env['BENCH_AUTHZ_WARMUP_MS'] ?? 1000);
const ROLES = 1_000;
const BINDINGS = 10_000;
const NAMESPACES = 100;
const USER_BINDING = 5_000;
const PATH = '/api/v1/namespaces/bench/configmaps/cm-0';
/** access.gatehouse.dev is alpha: off unless asked for. */
const ACCESS_GROUP_ON = '--runtime-config=access.gatehouse.dev/v1alpha1=true';

export interface AuthzFigures {
  load: string;
  rbac: RunResult[];
  allow: RunResult[];
  direct: RbacBenchRow[];
  /** Explanations and who-can, measured on the chain (bench/access.ts). */
  access: AccessBenchFigures;
  /** Explanations and who-can over HTTPS against the RBAC server. */
  accessHttp: AccessHttpFigures;
  fixtureSeconds: number;
}

const RBAC = 'rbac.authorization.k8s.io/v1';

async function loadFixtures(admin: Admin): Promise<void> {
  const pool = async <T>(items: T[], n: number, f: (x: T) => Promise<unknown>): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: n }, async () => {
        while (next < items.length) await f(items[next++]!);
      }),
    );
  };
  const nss = ['bench', ...Array.from({ length: NAMESPACES }, (_, i) => `ns-${i}`)];
  await pool(nss, 16, (name) => admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }));
  await admin.must('POST', '/api/v1/namespaces/bench/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm-0', namespace: 'bench' },
    data: { a: 'b' },
  });
  const resources = ['pods', 'services', 'configmaps', 'secrets', 'endpoints', 'events', 'persistentvolumeclaims'];
  await pool(
    Array.from({ length: ROLES }, (_, i) => i),
    32,
    (i) =>
      admin.must('POST', `/apis/${RBAC}/clusterroles`, {
        apiVersion: RBAC,
        kind: 'ClusterRole',
        metadata: { name: `bench-role-${i}` },
        rules: [
          { verbs: ['get', 'list', 'watch'], apiGroups: [''], resources: [resources[i % resources.length]!, resources[(i + 3) % resources.length]!] },
          { verbs: ['get', 'list'], apiGroups: ['apps'], resources: ['deployments', 'replicasets'], resourceNames: [`app-${i}`] },
        ],
      }),
  );
  await pool(
    Array.from({ length: BINDINGS }, (_, i) => i),
    32,
    (i) => {
      const mine = i === USER_BINDING;
      const ns = mine ? 'bench' : `ns-${i % NAMESPACES}`;
      return admin.must('POST', `/apis/${RBAC}/namespaces/${ns}/rolebindings`, {
        apiVersion: RBAC,
        kind: 'RoleBinding',
        metadata: { name: `rb-${i}`, namespace: ns },
        // bench-role-2 grants configmaps (resources[2]).
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: mine ? 'bench-role-2' : `bench-role-${i % ROLES}` },
        subjects: mine
          ? [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bench-user' }]
          : [
              { kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: `user-${i}` },
              { kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `group-${i}` },
            ],
      });
    },
  );
}

export async function runAuthzBench(): Promise<AuthzFigures> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-authz-'));
  const children: Child[] = [];
  const admins: Admin[] = [];
  try {
    const start = async (name: string, mode: string, dir: string): Promise<{ port: number; child: Child }> => {
      const port = await freePort();
      const child = await startChild(
        name,
        './server.ts',
        ['--secure-port', String(port), '--data-dir', dir, '--storage-backend', 'memory', '--authorization-mode', mode, ACCESS_GROUP_ON],
        SERVER_CPU,
        ['--expose-gc'],
      );
      children.push(child);
      return { port, child };
    };
    // The RBAC server makes the dev PKI; the other reuses it (same CA, same certificates).
    const rbacDir = join(root, 'rbac');
    const rbac = await start('gatehouse-rbac', 'RBAC', rbacDir);
    const {
      tls: { ca, cert, key },
      caKey,
      tlsFlags: pkiFlags,
    } = await devPki(rbacDir);
    const allowPort = await freePort();
    const allowChild = await startChild(
      'gatehouse-allow',
      './server.ts',
      [
        '--secure-port',
        String(allowPort),
        '--data-dir',
        join(root, 'allow'),
        '--storage-backend',
        'memory',
        '--authorization-mode',
        'AlwaysAllow',
        ACCESS_GROUP_ON,
        ...pkiFlags,
      ],
      SERVER_CPU,
      ['--expose-gc'],
    );
    children.push(allowChild);
    const load = await startChild('authz-loadgen', './authn.ts', ['--child'], LOAD_CPU);
    children.push(load);

    const tls = { ca: ca!, cert: cert!, key: key! };
    const rbacAdmin = new Admin(rbac.port, tls);
    const allowAdmin = new Admin(allowPort, tls);
    admins.push(rbacAdmin, allowAdmin);
    await Promise.all([rbacAdmin.ready(), allowAdmin.ready()]);
    const t0 = performance.now();
    await Promise.all([loadFixtures(rbacAdmin), loadFixtures(allowAdmin)]);
    const fixtureSeconds = (performance.now() - t0) / 1000;
    const count = async (a: Admin, path: string): Promise<number> => (JSON.parse(await a.must('GET', path)) as { items: unknown[] }).items.length;
    const rb = await count(rbacAdmin, `/apis/${RBAC}/rolebindings`);
    const cr = await count(rbacAdmin, `/apis/${RBAC}/clusterroles`);
    progress('fixtures', `${num(rb)} RoleBindings, ${num(cr)} ClusterRoles (incl. defaults) in each server, loaded in ${fixtureSeconds.toFixed(1)} s`);

    const user = generateClientCert({ certPem: ca!, keyPem: caKey! }, { user: 'bench-user', groups: ['bench-devs'] });
    const loop = (port: number): LoopArgs => ({
      target: { port, ca: ca!, cert: user.certPem, key: user.keyPem },
      connections: 50,
      warmupMs: WARMUP,
      durationMs: DURATION,
      maxRequests: 3_000_000,
      path: PATH,
    });
    // The policy is fed by a watch: wait until the user's binding is visible.
    for (let i = 0; ; i++) {
      const r = await load.call<RunResult>('loop', { ...loop(rbac.port), connections: 1, warmupMs: 0, durationMs: 100, maxRequests: 1 });
      if (r.statuses['200']) break;
      if (i > 100) throw new Error(`bench-user is not allowed on the RBAC server: ${JSON.stringify(r.statuses)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const deny = await load.call<RunResult>('loop', {
      ...loop(rbac.port),
      path: '/api/v1/namespaces/ns-1/configmaps',
      connections: 1,
      warmupMs: 0,
      durationMs: 100,
      maxRequests: 1,
    });
    if (!deny.statuses['403']) throw new Error(`expected 403 for bench-user outside its namespace, got ${JSON.stringify(deny.statuses)}`);

    // Collect the fixture-loading garbage in both servers (gc() via the server's memory reading) before measuring.
    await Promise.all([rbac.child.call('mem'), allowChild.call('mem')]);
    await new Promise((res) => setTimeout(res, 1000));

    const run = async (what: string, server: Child, port: number): Promise<RunResult> => {
      const r = await withCpu(server, load, () => load.call<RunResult>('loop', loop(port)));
      progress(
        what,
        `${num(rps(r))} req/s, p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}, errors ${errorsOf(r)}; CPU server ${share(r.cpu!.server)}, load ${share(r.cpu!.load)}`,
      );
      return r;
    };
    const allow: RunResult[] = [];
    const rbacRuns: RunResult[] = [];
    for (let round = 1; round <= 2; round++) {
      allow.push(await run(`AlwaysAllow, round ${round}`, allowChild, allowPort));
      rbacRuns.push(await run(`RBAC (10k bindings), round ${round}`, rbac.child, rbac.port));
    }
    out();
    out('  Access insight over HTTPS: the admin asks about bench-user on the RBAC server');
    const accessHttp = await runAccessHttp({
      server: rbac.child,
      load,
      port: rbac.port,
      tls,
      warmupMs: WARMUP,
      durationMs: DURATION,
      user: { name: 'bench-user', groups: ['bench-devs', 'system:authenticated'] },
      // bench-user may read configmaps in bench only; in ns-7 about 30 other groups may (bench-role-N with N % 7 in {2, 6}).
      allowed: { verb: 'get', resource: 'configmaps', namespace: 'bench' },
      denied: { verb: 'delete', resource: 'configmaps', namespace: 'bench' },
      crowded: { verb: 'list', resource: 'configmaps', namespace: 'ns-7' },
    });
    out();
    const direct = runRbacBench();
    const access = await runAccessBench();
    return { load: loadavg(), rbac: rbacRuns, allow, direct, access, accessHttp, fixtureSeconds };
  } finally {
    for (const a of admins) a.close();
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

export function printAuthz(f: AuthzFigures): void {
  const mean = (rs: RunResult[], g: (r: RunResult) => number): number => rs.reduce((s, r) => s + g(r), 0) / rs.length;
  out(
    `Authorization through the full stack: bench-user GETs ${PATH} (50 keep-alive connections, client cert; ${num(BINDINGS)} RoleBindings, ${num(ROLES)} ClusterRoles; load average ${f.load})`,
  );
  const rows: string[][] = [];
  f.allow.forEach((r, i) => {
    rows.push([`AlwaysAllow, round ${i + 1}`, num(rps(r)), ms(r.latency.p50), ms(r.latency.p99), errorsOf(r), cpuOf(r), num(cpuUs(r), 1)]);
    const b = f.rbac[i]!;
    rows.push([`RBAC, round ${i + 1}`, num(rps(b)), ms(b.latency.p50), ms(b.latency.p99), errorsOf(b), cpuOf(b), num(cpuUs(b), 1)]);
  });
  table(['authorizer', 'decisions/s', 'p50', 'p99', 'errors', 'CPU srv/load', 'srv CPU µs/req'], rows);
  const allowRate = mean(f.allow, rps);
  const rbacRate = mean(f.rbac, rps);
  const allowCpu = mean(f.allow, cpuUs);
  const rbacCpu = mean(f.rbac, cpuUs);
  const last = f.direct.at(-1)!;
  const first = f.direct[0]!;
  out('Summary against the authorization targets');
  table(
    ['measurement', 'figure', 'target'],
    [
      [
        'RBAC (10k bindings) vs AlwaysAllow, full stack',
        `${num(rbacRate)} vs ${num(allowRate)} decisions/s = ${pct(rbacRate, allowRate)}; by server CPU per request ${pct(allowCpu, rbacCpu)} (${num(rbacCpu, 1)} vs ${num(allowCpu, 1)} µs)`,
        '≥ 90%',
      ],
      [
        'RBAC per decision, measured directly',
        `allowed ${num(first.allowNs)} → ${num(last.allowNs)} ns, denied ${num(first.denyNs)} → ${num(last.denyNs)} ns from ${num(first.bindings)} to ${num(last.bindings)} bindings`,
        'flat in unrelated bindings',
      ],
      ...accessHttpRows(f.accessHttp),
      ...accessRows(f.access),
    ],
  );
}

export async function printAuthzSection(): Promise<AuthzFigures> {
  out();
  out('Authorization benchmarks (figures, not pass/fail)');
  out(`  ${placement()}; ${WARMUP} ms warm-up, ${DURATION} ms measured; load average ${loadavg()}`);
  const f = await runAuthzBench();
  out();
  printAuthz(f);
  return f;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printAuthzSection();
