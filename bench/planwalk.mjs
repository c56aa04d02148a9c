// CPU µs per object of the three schema walks every write of a built-in kind
// runs (lib/schema: fillZeros, rewriteQuantities with the registry's
// canonicalQuantityValue, inStructOrder), on a Deployment, a Pod and a
// ConfigMap as a client sends them. Each figure is the best of ROUNDS rounds
// of N calls (process.cpuUsage), builds taken in turn within one run so the
// machine's drift falls on both alike:
//   node bench/planwalk.mjs [dist ...]     (default: this tree's dist/)
// fillZeros and rewriteQuantities work in place: after the first call an
// object holds its zeros and canonical quantities, so the figure is the walk
// over a complete object (what a write whose body is already complete pays).
// inStructOrder never writes into its input: `client order` (apiVersion before
// kind, as kubectl writes) makes a new top-level object each call, `Go order`
// comes back as itself.
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const N = Number(process.env.N ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const dists = (process.argv.length > 2 ? process.argv.slice(2) : [new URL('../dist', import.meta.url).pathname]).map((d) => resolve(d));

const container = (name, image) => ({
  name,
  image,
  args: ['--port=8080', '--verbose'],
  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
  env: [
    { name: 'MODE', value: 'prod' },
    { name: 'POD', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
  ],
  resources: { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '250m', memory: '128Mi' } },
  volumeMounts: [{ name: 'conf', mountPath: '/etc/app' }],
  livenessProbe: { httpGet: { path: '/healthz', port: 8080, scheme: 'HTTP' }, periodSeconds: 10 },
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
  terminationMessagePolicy: 'File',
});
const podSpec = () => ({
  containers: [container('app', 'registry.example/app:1.2.3'), container('sidecar', 'registry.example/proxy:4.5')],
  volumes: [{ name: 'conf', configMap: { name: 'app-conf', defaultMode: 420 } }],
  restartPolicy: 'Always',
  terminationGracePeriodSeconds: 30,
  dnsPolicy: 'ClusterFirst',
  schedulerName: 'default-scheduler',
  securityContext: {},
  nodeSelector: { 'kubernetes.io/os': 'linux' },
});
const meta = (name) => ({ name, namespace: 'default', labels: { app: 'web', tier: 'front' }, annotations: { 'example.com/owner': 'team-a' } });

const objects = {
  Deployment: () => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta('web'),
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web', tier: 'front' } }, spec: podSpec() },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } },
      revisionHistoryLimit: 10,
      progressDeadlineSeconds: 600,
    },
  }),
  Pod: () => ({ apiVersion: 'v1', kind: 'Pod', metadata: meta('web-0'), spec: podSpec() }),
  ConfigMap: () => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta('app-conf'),
    data: { 'app.yaml': 'x'.repeat(100), b: 'y', c: 'z' },
  }),
};
const groups = { Deployment: ['apps', 'v1'], Pod: ['', 'v1'], ConfigMap: ['', 'v1'] };

const same = (v) => v;

async function load(dist) {
  const url = (p) => pathToFileURL(`${dist}/${p}`).href;
  const { builtinSchemaOf } = await import(url('lib/schema/index.js'));
  const { fillZeros } = await import(url('lib/schema/zeros.js'));
  const { rewriteQuantities } = await import(url('lib/schema/quantities.js'));
  const { inStructOrder } = await import(url('lib/schema/keyorder.js'));
  const { canonicalQuantityValue } = await import(url('lib/registry/builtins/quantities.js'));
  const cases = [];
  for (const [kind, make] of Object.entries(objects)) {
    const schema = builtinSchemaOf(groups[kind][0], groups[kind][1], kind);
    const obj = make();
    fillZeros(schema, obj);
    rewriteQuantities(schema, obj, canonicalQuantityValue);
    const { apiVersion, kind: k, ...rest } = obj;
    const goOrder = inStructOrder(schema, { kind: k, apiVersion, ...rest });
    const clientOrder = { apiVersion, kind: k, ...rest };
    cases.push([`${kind} fillZeros`, () => fillZeros(schema, obj)]);
    cases.push([`${kind} rewriteQuantities`, () => rewriteQuantities(schema, obj, canonicalQuantityValue)]);
    cases.push([`${kind} rewriteQuantities, identity rewrite`, () => rewriteQuantities(schema, obj, same)]);
    cases.push([`${kind} inStructOrder, client order`, () => inStructOrder(schema, clientOrder)]);
    cases.push([`${kind} inStructOrder, Go order`, () => inStructOrder(schema, goOrder)]);
  }
  const only = process.env.CASE ? new RegExp(process.env.CASE) : undefined;
  return only ? cases.filter(([name]) => only.test(name)) : cases;
}

function cpuMicros(fn) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / N;
}

// CG=1, under `valgrind --tool=callgrind --callgrind-out-file=<dir>/cg.%p`: instructions per call instead of
// CPU time, one build a run. Each case runs N, then 3N more, with callgrind's counters dumped (callgrind_control)
// around each, so a dump's difference over 2N calls is the per-call count; printed by `node bench/planwalk.mjs --cg <dir>`.
if (process.env.CG) {
  const dump = (label) => execFileSync('callgrind_control', [`--dump=${label}`, String(process.pid)], { stdio: 'ignore' });
  dump('start'); // the first dump's own first-time costs fall before any case
  for (const [name, fn] of await load(dists[0])) {
    for (let i = 0; i < 2000; i++) fn();
    dump(`warm ${name}`);
    for (let i = 0; i < N; i++) fn();
    dump(`1 ${name}`);
    for (let i = 0; i < 3 * N; i++) fn();
    dump(`3 ${name}`);
  }
  process.exit(0);
}
if (process.argv[2] === '--cg') {
  const { readdirSync, readFileSync } = await import('node:fs');
  const dir = process.argv[3];
  const runs = {};
  for (const f of readdirSync(dir)) {
    const text = readFileSync(`${dir}/${f}`, 'utf8');
    const trigger = /^desc: Trigger: dump (.*)$/m.exec(text)?.[1];
    const total = Number(/^(?:summary|totals): (\d+)/m.exec(text)?.[1]);
    const m = /^([13]) (.*)$/.exec(trigger ?? '');
    if (m) (runs[m[2]] ??= {})[m[1]] = total;
  }
  for (const [name, r] of Object.entries(runs)) console.log(`${name}\t${((r['3'] - r['1']) / (2 * N)).toFixed(0)} instructions/call`);
  process.exit(0);
}

const builds = [];
for (const d of dists) builds.push(await load(d));
const best = builds.map((cases) => cases.map(() => Infinity));
for (let r = 0; r < ROUNDS; r++)
  for (let b = 0; b < builds.length; b++)
    builds[b].forEach(([, fn], i) => {
      best[b][i] = Math.min(best[b][i], cpuMicros(fn));
    });
const head = ['case', ...dists.map((d, i) => `build ${i + 1} µs`), ...(dists.length > 1 ? ['2/1'] : [])];
console.log(head.join('\t'));
builds[0].forEach(([name], i) => {
  const row = [name, ...best.map((b) => b[i].toFixed(3))];
  if (dists.length > 1) row.push((best[1][i] / best[0][i]).toFixed(3));
  console.log(row.join('\t'));
});
console.log(dists.map((d, i) => `build ${i + 1}: ${d}`).join('\n'));
