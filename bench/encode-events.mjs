// CPU µs per watch event of a ConfigMap and a Pod in CBOR (encodeCborEvent)
// and protobuf (encodeWatchFrame): the one-walk writers into their reused
// buffers (lib/cbor/writer.ts, lib/protobuf/writer.ts), on objects that are
// not frozen, so every event is encoded (none is remembered). Best of ROUNDS
// rounds of N events (process.cpuUsage), builds taken in turn within one run:
//   node bench/encode-events.mjs [dist ...]     (default: this tree's dist/)
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const N = Number(process.env.N ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const dists = (process.argv.length > 2 ? process.argv.slice(2) : [new URL('../dist', import.meta.url).pathname]).map((d) => resolve(d));

const configMap = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'c1',
    namespace: 'bench',
    uid: '6b1e2f7a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
    resourceVersion: '12345',
    creationTimestamp: '2026-11-29T12:00:00Z',
    labels: { app: 'x', tier: 'y' },
  },
  data: { a: 'x'.repeat(100), b: 'y', c: 'z' },
};
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'p1',
    namespace: 'bench',
    uid: '6b1e2f7a-1c2d-4e5f-8a9b-0c1d2e3f4a5c',
    resourceVersion: '12346',
    creationTimestamp: '2026-11-29T12:00:00Z',
    labels: { app: 'web' },
  },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'registry.example/app:1.2.3',
        ports: [{ containerPort: 8080, protocol: 'TCP' }],
        resources: { limits: { cpu: '500m', memory: '256Mi' } },
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'IfNotPresent',
      },
    ],
    restartPolicy: 'Always',
    terminationGracePeriodSeconds: 30,
    dnsPolicy: 'ClusterFirst',
    schedulerName: 'default-scheduler',
    securityContext: {},
  },
  status: { phase: 'Pending', qosClass: 'Burstable' },
};

async function load(dist) {
  const url = (p) => pathToFileURL(`${dist}/${p}`).href;
  const { encodeCborEvent } = await import(url('lib/cbor/encode.js'));
  const { encodeWatchFrame } = await import(url('lib/protobuf/codec.js'));
  return [
    ['ConfigMap CBOR event', () => encodeCborEvent('ADDED', configMap)],
    ['ConfigMap protobuf frame', () => encodeWatchFrame('ADDED', configMap)],
    ['Pod CBOR event', () => encodeCborEvent('MODIFIED', pod)],
    ['Pod protobuf frame', () => encodeWatchFrame('MODIFIED', pod)],
  ];
}

function cpuMicros(fn) {
  const t0 = process.cpuUsage();
  for (let i = 0; i < N; i++) fn();
  const t = process.cpuUsage(t0);
  return (t.user + t.system) / N;
}

const builds = [];
for (const d of dists) builds.push(await load(d));
const best = builds.map((cases) => cases.map(() => Infinity));
for (let r = 0; r < ROUNDS; r++)
  for (let b = 0; b < builds.length; b++)
    builds[b].forEach(([, fn], i) => {
      best[b][i] = Math.min(best[b][i], cpuMicros(fn));
    });
console.log(['case', ...dists.map((d, i) => `build ${i + 1} µs`), ...(dists.length > 1 ? ['2/1'] : [])].join('\t'));
builds[0].forEach(([name], i) => {
  const row = [name, ...best.map((b) => b[i].toFixed(3))];
  if (dists.length > 1) row.push((best[1][i] / best[0][i]).toFixed(3));
  console.log(row.join('\t'));
});
console.log(dists.map((d, i) => `build ${i + 1}: ${d}`).join('\n'));
