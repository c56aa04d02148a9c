// API Priority and Fairness figures, two rows:
//
// 1. GET throughput with --enable-priority-and-fairness on and off: two
//    Gatehouse processes (memory store), identical but for the flag, measured
//    alternately (on, off, off, on) so the machine's drift lands on both; once
//    as the admin (system:masters: classified, exempt, never queued) and once
//    as an ordinary user (global-default level: classified, a seat taken and
//    given back). Target: on ≥ 95% of off. A third process is the floor: APF
//    off, but the two X-Kubernetes-PF-* headers that every APF answer must
//    carry added all the same, carried as APF carries them (bench/server.ts,
//    BENCH_PF_HEADERS=1); on/floor is APF's own work (classification, seats,
//    metrics) without the headers' cost.
//
// 2. Fairness under a flood: the bench creates, through the API, a priority
//    level with small concurrency (nominalConcurrencyShares 1 → 3 seats of the
//    default 600) and a FlowSchema sending the group `bench-tenants` to it by
//    user. Requests go through the aggregation proxy to a backend that answers
//    after DELAY_MS, so each holds its seat for that long without using the
//    gateway's CPU (the situation seats exist for: a slow backend or store).
//    User B's one-at-a-time requests are timed alone, then while user A keeps
//    FLOOD_FACTOR × the level's seats in flight. Target: B's p99 under the
//    flood ≤ 3× its p99 alone. The two users' hands of queues are chosen not
//    to overlap (as test/flowcontrol/fairness.test.ts does): shuffle sharding
//    isolates most pairs of flows, and a pair that shares every queue measures
//    the deal, not the queuing.
//
// Processes (bench/procs.ts): the two gateways on CPU 0, the slow backend and
// the load generator (this file, by mode) on CPU 1. BENCH_FLOWCONTROL=0 skips
// the section in run.ts; run alone: `node --import tsx bench/flowcontrol.ts`.
// Knobs: BENCH_DURATION_MS, BENCH_WARMUP_MS, BENCH_CPU_PROF, BENCH_APF_ROUNDS (3).
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Admin } from './admin.js';
import { freePort, placement, serveCommands, startChild, withCpu, type Child, devPki } from './procs.js';
import { closedLoop, type LoopResult, type Target } from './rawclient.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const PROF = process.env['BENCH_CPU_PROF'] || undefined;
const ROUNDS = Number(process.env['BENCH_APF_ROUNDS'] ?? 3);
const CONNECTIONS = 50;
// Long beside this machine's scheduling noise (a shared 2-core box), short enough for ~200 samples of B alone.
const DELAY_MS = 25;
const FLOOD_FACTOR = 10;
const GROUP = 'slow.bench.dev';
const SLOW_PATH = `/apis/${GROUP}/v1/namespaces/bench/things/x`;
const GET_PATH = '/api/v1/namespaces/bench/configmaps/c1';
const LEVEL = { name: 'bench-small', shares: 1, queuing: { queues: 64, handSize: 2, queueLengthLimit: 50 } };
const SCHEMA = 'bench-tenants';

// ---------------------------------------------------------------- child modes

/** The slow backend: discovery at once (availability), every other path after DELAY_MS. */
async function slowBackendMode([port, certFile, keyFile]: string[]): Promise<void> {
  const [cert, key] = await Promise.all([readFile(certFile!, 'utf8'), readFile(keyFile!, 'utf8')]);
  const discovery = Buffer.from(
    JSON.stringify({
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: `${GROUP}/v1`,
      resources: [{ name: 'things', singularName: 'thing', namespaced: true, kind: 'Thing', verbs: ['get'] }],
    }),
  );
  const thing = Buffer.from(JSON.stringify({ apiVersion: `${GROUP}/v1`, kind: 'Thing', metadata: { name: 'x', namespace: 'bench' } }));
  const server = createServer({ cert, key, keepAliveTimeout: 65_000 }, (req, res) => {
    req.resume();
    const answer = (body: Buffer) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    if (req.url === `/apis/${GROUP}/v1`) answer(discovery);
    else setTimeout(() => answer(thing), DELAY_MS);
  });
  await new Promise<void>((r) => server.listen(Number(port), '127.0.0.1', r));
  serveCommands({});
}

interface LoadArgs {
  target: Target;
  path: string;
  connections: number;
  warmupMs: number;
  durationMs: number;
}

function loop(a: LoadArgs): Promise<LoopResult> {
  return closedLoop({ ...a, maxRequests: 50_000_000 }, { next: () => ({ method: 'GET', path: a.path }), done: () => 1 });
}

/** B's loop while A floods: A starts first and runs past B's window, so B is measured inside the flood. */
async function floodRun(a: { flooder: LoadArgs; victim: LoadArgs }): Promise<{ flooder: LoopResult; victim: LoopResult }> {
  const flooder = loop({ ...a.flooder, warmupMs: a.victim.warmupMs, durationMs: a.victim.durationMs + 1000 });
  await sleep(500);
  const victim = await loop(a.victim);
  return { flooder: await flooder, victim };
}

// ---------------------------------------------------------------- orchestrator

const f = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (x: number) => `${x.toFixed(1)} ms`;
const rate = (r: LoopResult) => r.requests / r.seconds;

/** Two user names in `group` whose hands in the bench level do not overlap. */
async function disjointUsers(): Promise<[string, string]> {
  const { dealHand, flowHash } = await import('../gateway/flowcontrol/shuffle.js');
  const hand = (u: string) => new Set(dealHand(flowHash(`${SCHEMA}\u0000${u}`), LEVEL.queuing.queues, LEVEL.queuing.handSize));
  const a = hand('tenant-a');
  for (let i = 0; ; i++) {
    const b = `tenant-b${i}`;
    if (![...hand(b)].some((q) => a.has(q))) return ['tenant-a', b];
  }
}

export async function runFlowcontrolBench(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-apf-'));
  const children: Child[] = [];
  const admins: Admin[] = [];
  const out = (s: string) => process.stdout.write(`${s}\n`);
  try {
    out(`\n=== API Priority and Fairness (bench/flowcontrol.ts; ${placement()}) ===`);
    const { generateCa, generateClientCert, generateServingCert } = await import('../certs/pki.js');
    const authz = ['--authorization-mode', 'AlwaysAllow', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'];
    const onPort = await freePort();
    const onDir = join(root, 'on');
    const on = await startChild('apf-on', './server.ts', ['--secure-port', String(onPort), '--data-dir', onDir, '--storage-backend', 'memory', ...authz], 0);
    children.push(on);
    const {
      tls: { ca, cert, key },
      caKey,
      tlsFlags,
    } = await devPki(onDir);
    const offPort = await freePort();
    const off = await startChild(
      'apf-off',
      './server.ts',
      [
        '--secure-port',
        String(offPort),
        '--data-dir',
        join(root, 'off'),
        '--storage-backend',
        'memory',
        ...tlsFlags,
        ...authz,
        '--enable-priority-and-fairness=false',
      ],
      0,
    );
    children.push(off);
    // The floor: APF off, but the two headers APF must set on every answer set all the same (bench/server.ts).
    const floorPort = await freePort();
    const floor = await startChild(
      'apf-floor',
      './server.ts',
      [
        '--secure-port',
        String(floorPort),
        '--data-dir',
        join(root, 'floor'),
        '--storage-backend',
        'memory',
        ...tlsFlags,
        ...authz,
        '--enable-priority-and-fairness=false',
      ],
      0,
      [],
      { BENCH_PF_HEADERS: '1' },
    );
    children.push(floor);
    const load = await startChild('apf-load', self, ['load'], 1);
    children.push(load);

    const devCa = { certPem: ca!, keyPem: caKey! };
    const [userA, userB] = await disjointUsers();
    const person = (user: string, groups: string[]) => {
      const c = generateClientCert(devCa, { user, groups });
      return { ca: ca!, cert: c.certPem, key: c.keyPem };
    };
    const adminTls = { ca: ca!, cert: cert!, key: key! };
    const readerTls = person('bench-reader', ['bench-readers']);
    for (const port of [onPort, offPort, floorPort]) {
      const admin = new Admin(port, adminTls);
      admins.push(admin);
      await admin.ready();
      await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
      await admin.must('POST', '/api/v1/namespaces/bench/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c1', namespace: 'bench' },
        data: { a: 'b' },
      });
    }

    // ---- 1. GET with APF on and off
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of each process over each of its runs (apf-<on|off>-<who>-<n>.cpuprofile).
    let runNo = 0;
    const get = async (server: Child, port: number, tls: typeof adminTls): Promise<LoopResult> => {
      if (PROF) {
        await mkdir(PROF, { recursive: true });
        await server.call('profStart');
      }
      const r = await withCpu(server, load, () =>
        load.call<LoopResult>('loop', { target: { port, ...tls }, path: GET_PATH, connections: CONNECTIONS, warmupMs: WARMUP, durationMs: DURATION }),
      );
      if (PROF) await server.call('profStop', { file: join(PROF, `${server.name}-${tls === adminTls ? 'admin' : 'user'}-${++runNo}.cpuprofile`) });
      return r;
    };
    out(`GET ${GET_PATH}, ${CONNECTIONS} connections; three processes: APF on, off, and the floor (off, but setting the two`);
    out(`  X-Kubernetes-PF-* headers every APF answer carries); ${ROUNDS} rounds of on, off, floor, floor, off, on (${DURATION / 1000} s each);`);
    out(`  the median of the rounds' ratios, by req/s and by server CPU per request (the steadier figure on a shared machine)`);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const cpuUs = (r: LoopResult) => (r.cpu!.server * 1e6) / rate(r);
    const pct = (xs: number[]) => `${(100 * median(xs)).toFixed(1)}% [${xs.map((x) => (100 * x).toFixed(0)).join(' ')}]`;
    for (const [who, tls] of [
      ['admin (exempt)', adminTls],
      ['user (global-default)', readerTls],
    ] as const) {
      const ratios = { off: { rate: [] as number[], cpu: [] as number[] }, floor: { rate: [] as number[], cpu: [] as number[] } };
      const rows: string[] = [];
      let errors = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const on1 = await get(on, onPort, tls);
        const off1 = await get(off, offPort, tls);
        const fl1 = await get(floor, floorPort, tls);
        const fl2 = await get(floor, floorPort, tls);
        const off2 = await get(off, offPort, tls);
        const on2 = await get(on, onPort, tls);
        errors += [on1, on2, off1, off2, fl1, fl2].reduce((n, r) => n + r.errors, 0);
        for (const [base, b1, b2] of [
          ['off', off1, off2],
          ['floor', fl1, fl2],
        ] as const) {
          ratios[base].rate.push((rate(on1) + rate(on2)) / (rate(b1) + rate(b2)));
          ratios[base].cpu.push((cpuUs(b1) + cpuUs(b2)) / (cpuUs(on1) + cpuUs(on2)));
        }
        const two = (a: LoopResult, b: LoopResult) => `${f(rate(a))}/${f(rate(b))} (${cpuUs(a).toFixed(0)}/${cpuUs(b).toFixed(0)} µs)`;
        rows.push(`on ${two(on1, on2)} off ${two(off1, off2)} floor ${two(fl1, fl2)}`);
      }
      out(`  ${who}: ${rows.join('; ')}; errors ${errors}`);
      recordRow({
        name: `GET with priority and fairness on vs off, ${who} (server CPU per request, median of ${ROUNDS} rounds)`,
        value: median(ratios.off.cpu),
        unit: 'ratio',
        target: '≥ 95% of off',
        atLeast: 0.95,
      });
      recordRow({
        name: `GET with priority and fairness on vs the floor (off + the two APF headers), ${who} (server CPU per request)`,
        value: median(ratios.floor.cpu),
        unit: 'ratio',
        target: "(reference: APF's own work)",
      });
      out(`    on / off   ${pct(ratios.off.rate)} by req/s, ${pct(ratios.off.cpu)} by server CPU per request   (target ≥ 95%)`);
      out(`    on / floor ${pct(ratios.floor.rate)} by req/s, ${pct(ratios.floor.cpu)} by server CPU per request   (APF's own work)`);
    }

    // ---- 2. a second flow's p99 under a flood
    const gw = admins[0]!;
    const backendCa = generateCa('slow-bench-ca');
    const host = 'slow.bench.svc';
    const leaf = generateServingCert(backendCa, { commonName: host, hosts: [host] });
    const files = { cert: join(root, 'slow.crt'), key: join(root, 'slow.key') };
    await Promise.all([writeFile(files.cert, leaf.certPem), writeFile(files.key, leaf.keyPem)]);
    const bePort = await freePort();
    children.push(await startChild('apf-slow-backend', self, ['slow-backend', String(bePort), files.cert, files.key], 1));
    await gw.must('POST', '/api/v1/namespaces/bench/services', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'slow', namespace: 'bench' },
      spec: { ports: [{ name: 'https', port: 443, targetPort: bePort }] },
    });
    await gw.must('POST', '/apis/discovery.k8s.io/v1/namespaces/bench/endpointslices', {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'slow-1', namespace: 'bench', labels: { 'kubernetes.io/service-name': 'slow' } },
      addressType: 'IPv4',
      ports: [{ name: 'https', port: bePort, protocol: 'TCP' }],
      endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
    });
    await gw.must('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: `v1.${GROUP}` },
      spec: {
        group: GROUP,
        version: 'v1',
        service: { namespace: 'bench', name: 'slow', port: 443 },
        caBundle: Buffer.from(backendCa.certPem).toString('base64'),
        groupPriorityMinimum: 1000,
        versionPriority: 15,
      },
    });
    await gw.must('POST', '/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations', {
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
      kind: 'PriorityLevelConfiguration',
      metadata: { name: LEVEL.name },
      spec: { type: 'Limited', limited: { nominalConcurrencyShares: LEVEL.shares, limitResponse: { type: 'Queue', queuing: LEVEL.queuing } } },
    });
    const fs = JSON.parse(
      await gw.must('POST', '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas', {
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: { name: SCHEMA },
        spec: {
          priorityLevelConfiguration: { name: LEVEL.name },
          matchingPrecedence: 500,
          distinguisherMethod: { type: 'ByUser' },
          rules: [
            {
              subjects: [{ kind: 'Group', group: { name: 'bench-tenants' } }],
              resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
            },
          ],
        },
      }),
    ) as { metadata: { uid: string } };
    const aTls = person(userA, ['bench-tenants']);
    const bTls = person(userB, ['bench-tenants']);
    // Served through the proxy, and classified into the bench level (the schema's uid on the answer).
    const probe = new Admin(onPort, bTls);
    admins.push(probe);
    let seen = '';
    for (let i = 0; i < 300 && seen !== fs.metadata.uid; i++) {
      const r = await probe.call('GET', SLOW_PATH);
      const uid = r.headers['x-kubernetes-pf-flowschema-uid'];
      seen = r.status === 200 && typeof uid === 'string' ? uid : '';
      if (seen !== fs.metadata.uid) await sleep(100);
    }
    if (seen !== fs.metadata.uid) throw new Error('the slow backend never answered through the gateway under the bench FlowSchema');
    // kube's NominalCL = ceil(total · shares / Σ shares) over the Limited levels (the bootstrap ones sum to 245).
    const seats = Math.ceil((600 * LEVEL.shares) / (245 + LEVEL.shares));
    const flood = seats * FLOOD_FACTOR;
    const victim = { target: { port: onPort, ...bTls }, path: SLOW_PATH, connections: 1, warmupMs: WARMUP, durationMs: DURATION };
    const alone = await load.call<LoopResult>('loop', victim);
    const both = await load.call<{ flooder: LoopResult; victim: LoopResult }>('flood', {
      flooder: { ...victim, target: { port: onPort, ...aTls }, connections: flood },
      victim,
    });
    const ratio = both.victim.latency.p99 / alone.latency.p99;
    out(
      `Fairness: level "${LEVEL.name}" (${seats} seats; ${LEVEL.queuing.queues} queues, hand ${LEVEL.queuing.handSize}, length ${LEVEL.queuing.queueLengthLimit}), requests through the proxy to a backend answering after ${DELAY_MS} ms`,
    );
    out(
      `  B (${userB}) alone, 1 connection          p50 ${ms(alone.latency.p50)}  p99 ${ms(alone.latency.p99)}  ${f(rate(alone))} req/s, errors ${alone.errors}`,
    );
    out(
      `  B while A (${userA}) floods with ${flood}    p50 ${ms(both.victim.latency.p50)}  p99 ${ms(both.victim.latency.p99)}  ${f(rate(both.victim))} req/s, errors ${both.victim.errors}`,
    );
    out(
      `  A's flood: ${f(rate(both.flooder))} req/s (${seats} seats / ${DELAY_MS} ms = ${f((seats * 1000) / DELAY_MS)} at most), answers ${JSON.stringify(both.flooder.statuses)}`,
    );
    recordRow({
      name: 'second flow p99 under a 10× flood vs alone',
      value: both.victim.latency.p99,
      unit: 'ms',
      baseline: alone.latency.p99,
      target: '≤ 3× its p99 alone',
      atMost: 3,
    });
    out(`  B's p99 under the flood / alone          ${ratio.toFixed(2)}×   (target ≤ 3×)`);
    out('');
  } finally {
    for (const a of admins) a.close();
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

// Child modes when run as a script by startChild; the orchestrator when run directly.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === 'slow-backend') await slowBackendMode(rest);
  else if (mode === 'load') serveCommands({ loop, flood: floodRun });
  else await runFlowcontrolBench();
}
