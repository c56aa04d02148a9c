// Workload figures of the built-in kinds: Deployment creates beside
// ConfigMap creates, and LISTs of 1,000 Pods beside LISTs of 1,000
// ConfigMaps (objects/s), on one in-process Gatehouse on the memory store
// (bench/inprocess.ts: client and server share the process, so only the
// ratios mean anything). The objects are what clients send: a Deployment as
// `kubectl create deployment` plus ports, resources and probes; Pods as a
// ReplicaSet makes them, with two containers, through kube's defaulting and
// the ServiceAccount admission's token volume (no owner reference: no
// ReplicaSet exists here, and the garbage collector would take them). Rounds
// are mirrored (ConfigMap, workload, workload, ConfigMap) so a shared
// machine's drift lands on both; each row also gives this process's CPU per
// request, and the LIST row the same comparison per byte (a list's cost
// follows its bytes, and a Pod is about six times a ConfigMap). The LIST
// row's floor: a bare node:https server in this process (same certificate,
// same client, same loop) answering the two lists' very bytes and doing
// nothing else; the ratio of its two rates is what the bytes alone allow.
// `BENCH_ONLY=workloads npm run bench`; alone: `node --import tsx bench/workloads.ts`.
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { Admin } from './admin.js';
import { CONNECTIONS, DURATION, meanRate, measuredRate, rateLoop, withInProcessServer, type Call, type Rate, type ServerContext } from './inprocess.js';
import { recordRow } from './summary.js';

const LISTED = 1000;

/** One warm-up pass of each, then two mirrored rounds: the mean of each side. */
async function mirrored(base: () => Promise<Rate>, other: () => Promise<Rate>): Promise<{ base: Rate; other: Rate }> {
  await base();
  await other();
  const b: Rate[] = [];
  const o: Rate[] = [];
  for (let round = 0; round < 2; round++) {
    b.push(await base());
    o.push(await other());
    o.push(await other());
    b.push(await base());
  }
  return { base: meanRate(b), other: meanRate(o) };
}

function deployment(name: string): string {
  const labels = { app: name, tier: 'web' };
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              ports: [{ containerPort: 80, name: 'http' }],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' } },
            },
          ],
        },
      },
    },
  });
}

function pod(i: number): string {
  const labels = { app: 'shop', 'pod-template-hash': '6d4cf56db6' };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `shop-6d4cf56db6-${i}`,
      labels,
    },
    spec: {
      containers: [
        { name: 'shop', image: 'example.com/shop:2.4.1', ports: [{ containerPort: 8080 }], resources: { requests: { cpu: '250m', memory: '256Mi' } } },
        { name: 'proxy', image: 'envoyproxy/envoy:v1.31.0', args: ['--config-path', '/etc/envoy/envoy.yaml'] },
      ],
    },
  });
}

function configMap(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'shop' } },
    data: { 'app.properties': 'color=blue\nsize=large\n' },
  });
}

async function fill(call: Call, path: string, body: (i: number) => string): Promise<void> {
  for (let i = 0; i < LISTED; i += CONNECTIONS) {
    const batch = Array.from({ length: Math.min(CONNECTIONS, LISTED - i) }, (_, j) => call('POST', path, body(i + j), 'application/json'));
    for (const r of await Promise.all(batch)) if (r.status !== 201) throw new Error(`fill ${path}: ${r.status} ${r.text.slice(0, 200)}`);
  }
}

async function createRows(call: Call): Promise<void> {
  for (const ns of ['bench-deploy', 'bench-deploy-cm']) {
    const r = await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: ns } }), 'application/json');
    if (r.status !== 201) throw new Error(`namespace ${ns}: ${r.status}`);
  }
  let n = 0;
  const made = () => n;
  const cm = () =>
    measuredRate(
      () =>
        rateLoop(
          'CREATE configmap',
          async () => (await call('POST', '/api/v1/namespaces/bench-deploy-cm/configmaps', configMap(`cm-${n++}`), 'application/json')).status === 201,
        ),
      made,
    );
  const deploy = () =>
    measuredRate(
      () =>
        rateLoop(
          'CREATE deployment',
          async () => (await call('POST', '/apis/apps/v1/namespaces/bench-deploy/deployments', deployment(`web-${n++}`), 'application/json')).status === 201,
        ),
      made,
    );
  const { base, other } = await mirrored(cm, deploy);
  console.log(`  ${'Deployment create / ConfigMap create (req/s)'.padEnd(48)} ${((100 * other.rate) / base.rate).toFixed(0).padStart(7)} %`);
  console.log(
    `  ${'CPU per create: ConfigMap, Deployment'.padEnd(48)} ${base.cpu.toFixed(3)} ms, ${other.cpu.toFixed(3)} ms, ${((100 * base.cpu) / other.cpu).toFixed(0)} %   (target ≥ 60%)`,
  );
  // Judged by CPU per create, the steadier figure on a shared machine (as the admission rows are).
  recordRow({
    name: 'Deployment create vs ConfigMap create, creates per CPU-second (in process)',
    value: 1000 / other.cpu,
    unit: 'creates/CPU-s',
    baseline: 1000 / base.cpu,
    target: '≥ 60%',
    atLeast: 0.6,
  });
}

/**
 * The floor of the LIST comparison: the same two bodies served by a bare
 * `node:https` server (the Gatehouse server's certificate, client certificates
 * asked as it asks them) to the same client over the same connections, mirrored
 * as the measured rounds are. Requests/s of each and the process's CPU per request.
 */
async function listFloor(server: ServerContext, bodies: { configmaps: Buffer; pods: Buffer }): Promise<{ base: Rate; other: Rate }> {
  const bare = createServer(
    { cert: server.serving.cert, key: server.serving.key, ca: server.tls.ca, requestCert: true, rejectUnauthorized: false, keepAliveTimeout: 65_000 },
    (req, res) => {
      const body = req.url === '/pods' ? bodies.pods : bodies.configmaps;
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length }).end(body);
    },
  );
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const client = new Admin((bare.address() as AddressInfo).port, server.tls, CONNECTIONS);
  let n = 0;
  const list = (what: 'configmaps' | 'pods') => () =>
    measuredRate(
      () =>
        rateLoop(`floor: LIST ${LISTED} ${what} (bare node:https)`, async () => {
          const r = await client.send('GET', `/${what}`);
          n++;
          return r.status === 200 && r.text.length === bodies[what].length;
        }),
      () => n,
    );
  try {
    return await mirrored(list('configmaps'), list('pods'));
  } finally {
    client.close();
    await new Promise((resolve) => bare.close(resolve));
  }
}

async function listRows(call: Call, server: ServerContext): Promise<void> {
  for (const ns of ['bench-pods', 'bench-pods-cm']) {
    const r = await call('POST', '/api/v1/namespaces', JSON.stringify({ metadata: { name: ns } }), 'application/json');
    if (r.status !== 201) throw new Error(`namespace ${ns}: ${r.status}`);
  }
  await fill(call, '/api/v1/namespaces/bench-pods/pods', pod);
  await fill(call, '/api/v1/namespaces/bench-pods-cm/configmaps', (i) => configMap(`cm-${i}`));
  const sizes: Record<string, number> = {};
  let n = 0;
  const made = () => n;
  const list = (what: string, path: string) => () =>
    measuredRate(
      () =>
        rateLoop(`LIST ${LISTED} ${what}`, async () => {
          const r = await call('GET', path, '', 'application/json');
          sizes[what] = r.text.length;
          n++;
          return r.status === 200;
        }),
      made,
    );
  const { base, other } = await mirrored(list('configmaps', '/api/v1/namespaces/bench-pods-cm/configmaps'), list('pods', '/api/v1/namespaces/bench-pods/pods'));
  const perObject = (what: string) => Math.round((sizes[what] ?? 0) / LISTED);
  console.log(
    `  ${`LIST ${LISTED} pods / ${LISTED} configmaps (objects/s)`.padEnd(48)} ${((100 * other.rate) / base.rate).toFixed(0).padStart(7)} %   (target ≥ 60%; ${(other.rate * LISTED).toFixed(0)} vs ${(base.rate * LISTED).toFixed(0)} objects/s; ~${perObject('pods')} vs ~${perObject('configmaps')} bytes an object)`,
  );
  console.log(`  ${'CPU per LIST: configmaps, pods'.padEnd(48)} ${base.cpu.toFixed(2)} ms, ${other.cpu.toFixed(2)} ms`);
  // A list's cost follows its bytes (TLS, socket writes, the client's reads): the same comparison per byte.
  const bytesRatio = (other.rate * (sizes['pods'] ?? 0)) / (base.rate * (sizes['configmaps'] ?? 1));
  console.log(`  ${'LIST pods / configmaps (bytes/s)'.padEnd(48)} ${(100 * bytesRatio).toFixed(0).padStart(7)} %   (reference)`);
  // The bytes' own cap: the same two answers from a server that does nothing but send them.
  const [cmBody, podBody] = await Promise.all(
    ['/api/v1/namespaces/bench-pods-cm/configmaps', '/api/v1/namespaces/bench-pods/pods'].map((p) => call('GET', p, '', 'application/json')),
  );
  const floor = await listFloor(server, { configmaps: Buffer.from(cmBody!.text), pods: Buffer.from(podBody!.text) });
  const floorRatio = floor.other.rate / floor.base.rate;
  const measured = other.rate / base.rate;
  console.log(
    `  ${'floor: LIST pods / configmaps (objects/s)'.padEnd(48)} ${(100 * floorRatio).toFixed(0).padStart(7)} %   (measured ${(100 * measured).toFixed(0)}%; measured / floor ${(100 * (measured / floorRatio)).toFixed(0)}%; ${(floor.other.rate * LISTED).toFixed(0)} vs ${(floor.base.rate * LISTED).toFixed(0)} objects/s; CPU per LIST ${floor.base.cpu.toFixed(2)} ms, ${floor.other.cpu.toFixed(2)} ms)`,
  );
  recordRow({
    name: `floor: LIST ${LISTED} Pods vs ${LISTED} ConfigMaps bytes from bare node:https, objects/s`,
    value: floor.other.rate * LISTED,
    unit: 'objects/s',
    baseline: floor.base.rate * LISTED,
    target: 'reference',
  });
  recordRow({
    name: `LIST ${LISTED} Pods vs ${LISTED} ConfigMaps, objects/s (in process)`,
    value: other.rate * LISTED,
    unit: 'objects/s',
    baseline: base.rate * LISTED,
    target: '≥ 60%',
    atLeast: 0.6,
  });
}

export async function runWorkloadsBench(): Promise<void> {
  await withInProcessServer('workloads', async (call, server) => {
    console.log(`\nWorkloads (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    await createRows(call);
    await listRows(call, server);
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runWorkloadsBench();
