// CRD changes with many CRDs installed (owned with lib/crd and the CRD check
// worker): one in-process server holding 1 CRD beside one holding 300 CRDs of
// a realistic size (a schema of a dozen fields with descriptions, patterns and
// ten CEL rules: over the size a CRD is checked in place, so the check worker
// runs). On each: the time to install one more CRD (POST until its resource
// answers 200) and to delete it (DELETE until its resource answers 404), the
// worst latency of a GET loop of another client meanwhile (same process, so a
// stall of the event loop shows), then GET and LIST of a custom resource.
// Targets: a CRD change with 300 CRDs ≤ 2× with 1; no concurrent request waits
// more than 50 ms on a CRD change; serving with 300 CRDs ≥ 95% of serving with 1.
// `BENCH_ONLY=crds npm run bench`; `node --import tsx bench/crds.ts` alone.
import { pathToFileURL } from 'node:url';
import { startTestServer, type TestServer } from '../test/helpers/server.js';

const INSTALLED = 300;
const CHANGES = Number(process.env['BENCH_CRD_CHANGES'] ?? 5);
const SERVE_MS = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

type Json = Record<string, unknown>;

/** An operator-sized CRD: a dozen described fields, three patterns, ten rules, status and scale, columns. */
export function realisticCrd(i: number): Json {
  const group = `g${i}.bench.example.com`;
  const str = (description: string, extra: Json = {}) => ({ type: 'string', description, maxLength: 253, ...extra });
  const spec = {
    type: 'object',
    description: 'The desired state of the thing, as its operator reads it.',
    properties: {
      image: str('The container image to run, with its registry and tag.', { pattern: '^[a-z0-9./:@_-]+$' }),
      schedule: str('A cron schedule, five fields.', { pattern: '^(\\S+\\s+){4}\\S+$' }),
      host: str('The host name clients use.', { pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' }),
      replicas: { type: 'integer', minimum: 0, maximum: 1000, description: 'How many copies run.' },
      paused: { type: 'boolean', description: 'Whether reconciling is paused.' },
      mode: { type: 'string', enum: ['Active', 'Standby', 'Drain'], description: 'How the thing serves.' },
      ports: {
        type: 'array',
        maxItems: 16,
        description: 'The ports it listens on.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: {
          type: 'object',
          required: ['name', 'port'],
          properties: { name: str('The port name.', { maxLength: 15 }), port: { type: 'integer', minimum: 1, maximum: 65535 } },
        },
      },
      labels: { type: 'object', maxProperties: 32, additionalProperties: { type: 'string', maxLength: 63 }, description: 'Labels it adds.' },
      resources: {
        type: 'object',
        description: 'Requests and limits.',
        properties: { cpu: { 'x-kubernetes-int-or-string': true }, memory: { 'x-kubernetes-int-or-string': true } },
      },
    },
    'x-kubernetes-validations': [
      { rule: 'self.replicas <= 100 || self.mode == "Active"', message: 'only active things scale past 100' },
      { rule: '!has(self.ports) || self.ports.all(p, p.port != 22)', message: 'port 22 is reserved' },
      { rule: '!has(self.ports) || size(self.ports) <= 16' },
      { rule: '!has(self.labels) || self.labels.all(k, size(k) <= 63)' },
      { rule: '!has(self.image) || !self.image.endsWith(":latest")', message: 'pin the image' },
      { rule: '!has(self.host) || size(self.host) <= 253' },
      { rule: '!has(self.paused) || !self.paused || self.replicas == 0 || true' },
      { rule: 'self.mode != "Drain" || self.replicas == 0', message: 'a draining thing runs nothing' },
      { rule: '!has(self.schedule) || self.schedule != ""' },
      { rule: 'has(self.mode)', message: 'mode is required' },
    ],
    required: ['mode'],
  };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `things.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: 'things', singular: 'thing', kind: 'Thing' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec,
                status: { type: 'object', properties: { replicas: { type: 'integer' }, selector: { type: 'string' }, phase: { type: 'string' } } },
              },
            },
          },
          subresources: {
            status: {},
            scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
          },
          additionalPrinterColumns: [
            { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
            { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          ],
        },
      ],
    },
  };
}

const thing = (i: number, name: string) => ({
  apiVersion: `g${i}.bench.example.com/v1`,
  kind: 'Thing',
  metadata: { name },
  spec: { mode: 'Active', replicas: 2, image: 'registry.example/app:1.2.3', ports: [{ name: 'http', port: 80 }] },
});
const things = (i: number) => `/apis/g${i}.bench.example.com/v1/namespaces/default/things`;

async function until(what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`bench: ${what} did not happen`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Another client's GET loop: its worst round trip in ms while `during` runs. */
async function worstGetDuring<T>(s: TestServer, during: () => Promise<T>): Promise<{ result: T; worstMs: number }> {
  let running = true;
  let worstMs = 0;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await s.admin.request('GET', '/api/v1/namespaces/default/configmaps');
      worstMs = Math.max(worstMs, performance.now() - t);
    }
  })();
  const result = await during();
  running = false;
  await loop;
  return { result, worstMs };
}

export interface CrdChangeFigures {
  /** Median ms from POST to the new resource answering 200. */
  installMs: number;
  /** Median ms from DELETE to the resource answering 404. */
  deleteMs: number;
  /** The worst GET round trip of another client during all installs and deletes. */
  worstGetMs: number;
  /** GET and LIST of one custom resource, per second (8 concurrent loops). */
  getPerS: number;
  listPerS: number;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function rate(s: TestServer, path: string, ms = SERVE_MS): Promise<number> {
  let n = 0;
  const end = performance.now() + ms;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < end) {
        const r = await s.admin.request('GET', path);
        if (r.status !== 200) throw new Error(`bench: GET ${path}: ${r.status}`);
        n++;
      }
    }),
  );
  return n / (ms / 1000);
}

async function measure(installed: number): Promise<CrdChangeFigures> {
  const s = await startTestServer();
  try {
    for (let i = 0; i < installed; i += 20) {
      const batch = Array.from({ length: Math.min(20, installed - i) }, (_, k) => s.admin.request('POST', CRD_PATH, realisticCrd(i + k)));
      for (const r of await Promise.all(batch)) if (r.status !== 201) throw new Error(`bench: CRD install: ${r.status} ${r.text.slice(0, 200)}`);
    }
    await until('the installed CRDs served', async () => (await s.admin.request('GET', things(installed - 1))).status === 200);
    for (let i = 0; i < 10; i++) await s.admin.request('POST', things(0), thing(0, `t${i}`));
    const installs: number[] = [];
    const deletes: number[] = [];
    let worstGetMs = 0;
    for (let c = 0; c < CHANGES; c++) {
      const n = 10_000 + c;
      const { worstMs } = await worstGetDuring(s, async () => {
        let t = performance.now();
        const r = await s.admin.request('POST', CRD_PATH, realisticCrd(n));
        if (r.status !== 201) throw new Error(`bench: CRD create: ${r.status} ${r.text.slice(0, 200)}`);
        await until('the new CRD served', async () => (await s.admin.request('GET', things(n))).status === 200);
        installs.push(performance.now() - t);
        t = performance.now();
        await s.admin.request('DELETE', `${CRD_PATH}/things.g${n}.bench.example.com`);
        await until('the CRD gone', async () => (await s.admin.request('GET', things(n))).status === 404);
        deletes.push(performance.now() - t);
      });
      worstGetMs = Math.max(worstGetMs, worstMs);
    }
    // Warmed first: the server measured first would otherwise pay the JIT's warm-up alone.
    await rate(s, `${things(0)}/t0`, 1000);
    await rate(s, things(0), 1000);
    const getPerS = await rate(s, `${things(0)}/t0`);
    const listPerS = await rate(s, things(0));
    return { installMs: median(installs), deleteMs: median(deletes), worstGetMs, getPerS, listPerS };
  } finally {
    await s.close();
  }
}

/** Both servers, one after the other: with 1 CRD (plus the changed one), with 300. */
export async function runCrdsBench(): Promise<{ one: CrdChangeFigures; many: CrdChangeFigures }> {
  const one = await measure(1);
  const many = await measure(INSTALLED);
  return { one, many };
}

export { INSTALLED };

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const f = await runCrdsBench();
  console.log(JSON.stringify(f, null, 2));
}
