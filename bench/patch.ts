// PATCH figures: strategic merge PATCH/s on a realistic Pod and a
// ConfigMap of 100 keys, beside PUT of the same objects in the same run.
// Self-contained: an in-process Gatehouse on the memory store, driven by 16
// keep-alive connections from the same process (both sides share the CPU, so
// compare the ratio, not the absolute rates).
import { CONNECTIONS, DURATION, rateLoop, withInProcessServer, type Call } from './inprocess.js';
import { recordRow } from './summary.js';

export function pod(name: string): Record<string, unknown> {
  const container = (n: string, image: string) => ({
    name: n,
    image,
    imagePullPolicy: 'IfNotPresent',
    args: ['--port=8080', '--log-level=info'],
    ports: [
      { name: 'http', containerPort: 8080, protocol: 'TCP' },
      { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
    ],
    env: [
      { name: 'MODE', value: 'prod' },
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'REGION', value: 'eu-west-1' },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
    volumeMounts: [
      { name: 'config', mountPath: '/etc/app' },
      { name: 'data', mountPath: '/var/lib/app' },
    ],
    livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
    readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 5 },
    securityContext: { runAsNonRoot: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: 'web', tier: 'frontend', release: 'stable' }, annotations: { 'prometheus.io/scrape': 'true' } },
    spec: {
      containers: [container('app', 'registry.example/app:1.2.3'), container('sidecar', 'registry.example/proxy:0.9')],
      volumes: [
        { name: 'config', configMap: { name: 'app-config' } },
        { name: 'data', emptyDir: {} },
      ],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
      nodeSelector: { 'kubernetes.io/os': 'linux' },
      serviceAccountName: 'default',
      terminationGracePeriodSeconds: 30,
    },
  };
}

export function configMap(name: string): Record<string, unknown> {
  const data: Record<string, string> = {};
  for (let i = 0; i < 100; i++) data[`key-${String(i).padStart(3, '0')}`] = `value ${i} `.repeat(4);
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'bench' } }, data };
}

async function pair(call: Call, label: string, path: string, obj: Record<string, unknown>, patchOf: (i: number) => unknown): Promise<void> {
  const created = await call('POST', path, JSON.stringify(obj), 'application/json');
  if (created.status !== 201) throw new Error(`create ${label}: ${created.status} ${created.text.slice(0, 200)}`);
  const item = `${path}/${(obj['metadata'] as { name: string }).name}`;
  // PUT without resourceVersion (unconditional), each with a changed label so every PUT writes.
  const put = await rateLoop(`PUT ${label}`, async (i) => {
    const body = { ...obj, metadata: { ...(obj['metadata'] as object), labels: { app: 'bench', n: String(i) } } };
    return (await call('PUT', item, JSON.stringify(body), 'application/json')).status === 200;
  });
  const smp = await rateLoop(
    `PATCH strategic ${label}`,
    async (i) => (await call('PATCH', item, JSON.stringify(patchOf(i)), 'application/strategic-merge-patch+json')).status === 200,
  );
  recordRow({ name: `PATCH strategic merge vs PUT (${label})`, value: smp, unit: 'req/s', baseline: put, target: '≥ 60% of PUT', atLeast: 0.6 });
  console.log(`  ${`strategic merge / PUT (${label})`.padEnd(48)} ${((100 * smp) / put).toFixed(0).padStart(7)} %   (target ≥ 60%)`);
}

export async function runPatchBench(): Promise<void> {
  await withInProcessServer('patch', async (call) => {
    console.log(`\nPATCH (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    const ns = '/api/v1/namespaces/default';
    await pair(call, 'Pod', `${ns}/pods`, pod('bench-pod'), (i) => ({
      metadata: { labels: { n: String(i) } },
      spec: { containers: [{ name: 'app', env: [{ name: 'MODE', value: `m${i}` }] }] },
    }));
    await pair(call, 'ConfigMap 100 keys', `${ns}/configmaps`, configMap('bench-cm'), (i) => ({ data: { 'key-050': `changed ${i}` } }));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runPatchBench();
