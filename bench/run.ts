// `npm run bench`: starts Gatehouse (memory and file store), the bare
// baseline server and the load generator as separate processes, loads the
// fixtures, runs each measurement beside its baseline and prints the figures.
//
// Environment knobs: BENCH_DURATION_MS (measured window, default 5000),
// BENCH_WARMUP_MS (default 1000), BENCH_ONLY (comma list of section names,
// bench/summary.ts: get, list, encodings, create, file-create, crd, watch, patch,
// redis-create, redis-read, redis-watch, authn, authz, proxy, http2, flowcontrol,
// micro, audit, tracing, monitoring, …), BENCH_JSON (a file: every summary row as JSON), BENCH_WATCHERS (default 100,1000), BENCH_CPU_PROF (a directory:
// a V8 CPU profile of the Gatehouse process is written there for each of its
// measurements, `<measurement>.cpuprofile`, readable in Chrome DevTools).
import { mkdir, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, placement, startChild, withCpu, type Child, type MemoryFigures, devPki, serverTlsArgs } from './procs.js';
import type { LoopResult, Target } from './rawclient.js';
import type { WatchRunResult } from './loadgen.js';
import * as report from './report.js';
import { Admin, metricValue } from './admin.js';
import { anySelected, recordRow, selected } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const WATCHERS = (process.env['BENCH_WATCHERS'] ?? '100,1000').split(',').map(Number);
const PROF = process.env['BENCH_CPU_PROF'] || undefined;
const CONNECTIONS = 50;
const LIST_SIZE = 500;
const MAX_REQUESTS = 5_000_000;
const SERVER_CPU = 0;
const LOAD_CPU = 1;

/** A small configmap; without a name the load generator names each POST uniquely. */
/** A CronTab-like custom resource of about a ConfigMap's size (the CRD below serves it). */
function widget(namespace: string): Record<string, unknown> {
  return {
    apiVersion: 'bench.example.com/v1',
    kind: 'Widget',
    metadata: { name: 'c', namespace, labels: { app: 'bench', tier: 'backend' } },
    spec: { cronSpec: '*/5 * * * *', image: 'registry.example/app:1.2.3', replicas: 3 },
  };
}

const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.bench.example.com' },
  spec: {
    group: 'bench.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { cronSpec: { type: 'string' }, image: { type: 'string' }, replicas: { type: 'integer', minimum: 0 } } },
              status: { type: 'object', properties: { replicas: { type: 'integer' } } },
            },
          },
        },
        additionalPrinterColumns: [{ name: 'Image', type: 'string', jsonPath: '.spec.image' }],
      },
    ],
  },
};

/**
 * The Widget CRD again as `ruledwidgets`, with three CEL rules on spec of the
 * kinds operators write (a bound, a prefix, a regex), each passing for the
 * bench's object: what rules add to a create is their evaluation.
 */
const RULED_WIDGET_CRD = (() => {
  const crd = structuredClone(WIDGET_CRD) as typeof WIDGET_CRD & {
    spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: Record<string, unknown> } } } }> };
  };
  crd.metadata.name = 'ruledwidgets.bench.example.com';
  crd.spec.names = { plural: 'ruledwidgets', singular: 'ruledwidget', kind: 'RuledWidget' };
  crd.spec.versions[0]!.schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'] = [
    { rule: 'self.replicas <= 100', message: 'at most 100 replicas' },
    { rule: "self.image.startsWith('registry.example/')", message: 'images come from registry.example' },
    { rule: "self.cronSpec.matches('^[0-9*/,-]+( [0-9*/,-]+){4}$')", message: 'cronSpec must have five fields' },
  ];
  return crd;
})();

/** Installs a CRD and returns the milliseconds from its create to the first 200 on its resource. */
async function installWidgetCrd(admin: Admin, namespace: string, crd: Record<string, unknown> = WIDGET_CRD, plural = 'widgets'): Promise<number> {
  const t0 = performance.now();
  await admin.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  for (let i = 0; i < 2000; i++) {
    if ((await admin.call('GET', `/apis/bench.example.com/v1/namespaces/${namespace}/${plural}`)).status === 200) return performance.now() - t0;
    await sleep(5);
  }
  throw new Error(`the ${plural} CRD was never served`);
}

function configMap(namespace: string, name?: string): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: name ?? 'c', namespace, labels: { app: 'bench', tier: 'backend' } },
    data: { 'app.properties': 'greeting=hello\nlog.level=info\nfeature.flags=a,b,c\n', mode: 'fast' },
  };
}

const WATCH_EVENTS = 1000;
const WATCH_REPEATS = 8;

/**
 * Server CPU and bytes of a watch that delivers WATCH_EVENTS events, per
 * encoding: WATCH_EVENTS configmaps are created in their own namespace, then
 * each encoding's watch replays them from the revision before the first
 * (`resourceVersion=<before>`, `timeoutSeconds=1`: the stream ends itself),
 * WATCH_REPEATS times in a row. An event is encoded once per stored object
 * and copied to every later watcher, so the first watch pays the encoding
 * and the later ones the writes; the figure is the average of the runs.
 */
async function watchEncodings(admin: Admin, server: Child, load: Child, formats: ReadonlyArray<readonly [string, string]>): Promise<report.WatchEncoding[]> {
  const ns = 'bench-watch-encodings';
  await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const before = (JSON.parse(await admin.must('GET', `/api/v1/namespaces/${ns}/configmaps`)) as { metadata: { resourceVersion: string } }).metadata
    .resourceVersion;
  for (let i = 0; i < WATCH_EVENTS; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, WATCH_EVENTS - i) }, (_, k) =>
        admin.must('POST', `/api/v1/namespaces/${ns}/configmaps`, configMap(ns, `w-${String(i + k).padStart(4, '0')}`)),
      ),
    );
  }
  const path = `/api/v1/namespaces/${ns}/configmaps?watch=1&resourceVersion=${before}&timeoutSeconds=1`;
  const out: report.WatchEncoding[] = [];
  for (const [format, accept] of formats) {
    if (PROF) await server.call('profStart');
    const t0 = performance.now();
    const r = await withCpu(server, load, async () => {
      let bytes = 0;
      for (let i = 0; i < WATCH_REPEATS; i++) bytes = await admin.bodyBytes(path, accept);
      return { bytes } as { bytes: number; cpu?: report.CpuShare };
    });
    const wall = (performance.now() - t0) / 1000;
    if (PROF) await server.call('profStop', { file: join(PROF, `WATCH-${WATCH_EVENTS}-events-${format}.cpuprofile`) });
    const row = { format, events: WATCH_EVENTS, watches: WATCH_REPEATS, cpuSeconds: r.cpu.server * wall, bytes: r.bytes };
    report.progress(
      `WATCH ${WATCH_EVENTS} events ${format}`,
      `${report.num((row.cpuSeconds / row.watches) * 1e3, 1)} ms server CPU per watch, ${report.num(row.bytes)} bytes`,
    );
    out.push(row);
  }
  return out;
}

/** The mean length of the lines in buf (the file store's log records). */
function meanLine(buf: Buffer): number {
  let lines = 0;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) lines++;
  return Math.round(buf.length / lines);
}

async function main(): Promise<void> {
  if (!anySelected(['get', 'list', 'encodings', 'create', 'crd', 'watch'])) return;
  if (PROF) await mkdir(PROF, { recursive: true });
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-'));
  const children: Child[] = [];
  const admins: Admin[] = [];
  const serverFlags = ['--expose-gc'];
  // The admin is in system:masters, which the authorizer chain allows before
  // any mode, so the mode does not change the measured path; naming one keeps
  // the bench independent of the default's progress.
  const authz = [
    '--authorization-mode',
    'AlwaysAllow',
    // The 1,000 watchers and the admin come from the load generator's one address: above the default
    // --max-connections-per-client-address (1000), which refused the last watchers of the WATCH ×1000 row.
    '--max-connections-per-client-address=0',
    // No ServiceAccount or kube-root-ca.crt written into the bench namespaces: the figures count exact objects (a list of 500).
    '--controllers=*,-serviceaccount,-root-ca-cert-publisher',
  ];
  try {
    report.header([
      placement(),
      `each figure: ${WARMUP} ms warm-up, then ${DURATION} ms measured; load generator: raw keep-alive TLS connections (bench/rawclient.ts)`,
      `data: ${root}`,
    ]);

    // Gatehouse, memory store: generates the dev PKI that every other process uses.
    const memPort = await freePort();
    const memDir = join(root, 'memory');
    // CBORServingAndStorage on: the encodings section answers in CBOR too (the gate only adds a negotiation branch).
    const mem = await startChild(
      'gatehouse-memory',
      './server.ts',
      ['--secure-port', String(memPort), '--data-dir', memDir, '--storage-backend', 'memory', '--feature-gates', 'CBORServingAndStorage=true', ...authz],
      SERVER_CPU,
      serverFlags,
    );
    children.push(mem);
    const { pki, tls, tlsFlags } = await devPki(memDir);

    const filePort = await freePort();
    const file = await startChild(
      'gatehouse-file',
      './server.ts',
      ['--secure-port', String(filePort), '--data-dir', join(root, 'file'), '--storage-backend', 'file', ...tlsFlags, ...authz],
      SERVER_CPU,
      serverFlags,
    );
    children.push(file);
    const barePort = await freePort();
    const bare = await startChild('bare-https', './bare.ts', [String(barePort), ...serverTlsArgs(pki)], SERVER_CPU, ['--expose-gc']);
    children.push(bare);
    // The GET and CREATE rows' floor (bench/kubefloor.ts): kube's answer with nothing else done.
    const floorPort = await freePort();
    const floor = await startChild('kube-floor', './kubefloor.ts', [String(floorPort), ...serverTlsArgs(pki)], SERVER_CPU);
    children.push(floor);
    const load = await startChild('loadgen', './loadgen.ts', [], LOAD_CPU);
    children.push(load);

    const target = (port: number): Target => ({ port, ...tls });
    const memAdmin = new Admin(memPort, tls);
    const fileAdmin = new Admin(filePort, tls);
    const floorAdmin = new Admin(floorPort, tls);
    admins.push(memAdmin, fileAdmin, floorAdmin);
    await Promise.all([memAdmin.ready(), fileAdmin.ready()]);

    // Fixtures.
    const watchNamespaces = WATCHERS.map((n) => `bench-watch-${n}`);
    for (const ns of ['bench', 'bench-create', ...watchNamespaces])
      await memAdmin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await fileAdmin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-create' } });
    const names = Array.from({ length: LIST_SIZE }, (_, i) => `cm-${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(names.slice(i, i + 20).map((n) => memAdmin.must('POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', n))));
    }
    const listed = JSON.parse(await memAdmin.must('GET', '/api/v1/namespaces/bench/configmaps')) as { items: unknown[] };
    if (listed.items.length !== LIST_SIZE) throw new Error(`fixture: expected ${LIST_SIZE} configmaps, listed ${listed.items.length}`);
    const sample = await memAdmin.must('GET', `/api/v1/namespaces/bench/configmaps/${names[0]}`);
    report.progress('fixtures', `${LIST_SIZE} configmaps in "bench"; one is ${sample.length} bytes of JSON, a list ${JSON.stringify(listed).length} bytes`);
    for (const ns of ['bench', 'bench-create'])
      await floorAdmin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await floorAdmin.must('POST', '/api/v1/namespaces/bench/configmaps', configMap('bench', names[0]));
    const floorSample = await floorAdmin.must('GET', `/api/v1/namespaces/bench/configmaps/${names[0]}`);
    // The same object but for its uid's and resourceVersion's digits.
    if (Math.abs(floorSample.length - sample.length) > 4)
      throw new Error(`fixture: the floor's GET answer is ${floorSample.length} bytes, Gatehouse's ${sample.length}`);

    /** Runs one measurement, noting the CPU share the server and the load generator used (and a profile, when asked). */
    const measured = async <T extends { cpu?: report.CpuShare }>(
      what: string,
      server: Child,
      run: () => Promise<T>,
      describe: (r: T) => string,
    ): Promise<T> => {
      const profile = PROF !== undefined && server !== bare;
      if (profile) await server.call('profStart');
      const r = await withCpu(server, load, run);
      if (profile) await server.call('profStop', { file: join(PROF, `${what.replace(/[^A-Za-z0-9]+/g, '-')}.cpuprofile`) });
      report.progress(what, `${describe(r)}; CPU server ${report.share(r.cpu.server)}, load ${report.share(r.cpu.load)}`);
      return r;
    };

    const loop = { connections: CONNECTIONS, warmupMs: WARMUP, durationMs: DURATION, maxRequests: MAX_REQUESTS };
    const servers = new Map<number, Child>([
      [memPort, mem],
      [filePort, file],
      [barePort, bare],
      [floorPort, floor],
    ]);
    const fixed = (what: string, port: number, method: string, path: string, body?: Record<string, unknown>): Promise<LoopResult> =>
      measured(
        what,
        servers.get(port)!,
        () =>
          load.call<LoopResult>('fixed', {
            ...loop,
            target: target(port),
            req: { method, path, ...(body ? { body: JSON.stringify(body) } : {}) },
            uniqueNames: method === 'POST',
          }),
        report.describe.loop,
      );
    const paged = (what: string, limit: number): Promise<LoopResult> =>
      measured(
        what,
        mem,
        () => load.call<LoopResult>('paged', { ...loop, target: target(memPort), path: '/api/v1/namespaces/bench/configmaps', limit, total: LIST_SIZE }),
        report.describe.loop,
      );

    const figures: report.Figures = { watch: [] };
    if (selected('get')) {
      // Mirrored (bare, floor, Gatehouse, Gatehouse, floor, bare) and pooled: the machine's drift lands on all three.
      const path = '/api/v1/namespaces/bench/configmaps/cm-0000';
      const b1 = await fixed('GET bare', barePort, 'GET', path);
      const f1 = await fixed('GET floor', floorPort, 'GET', path);
      const g1 = await fixed('GET gatehouse', memPort, 'GET', path);
      const g2 = await fixed('GET gatehouse', memPort, 'GET', path);
      const f2 = await fixed('GET floor', floorPort, 'GET', path);
      const b2 = await fixed('GET bare', barePort, 'GET', path);
      figures.get = { bare: [b1, b2], floor: [f1, f2], gatehouse: [g1, g2] };
    }
    if (selected('list')) {
      figures.list = {
        objects: LIST_SIZE,
        unpaged: await paged('LIST unpaged', 0),
        paged50: await paged('LIST limit=50', 50),
        paged500: await paged('LIST limit=500', 500),
      };
    }
    if (selected('encodings')) {
      // JSON, protobuf and CBOR answers of the same GET and unpaged LIST, in the
      // order A B C C B A so the machine's drift lands on all; figures are the two runs' sums.
      const PB = 'application/vnd.kubernetes.protobuf';
      const CBOR = 'application/cbor';
      figures.encodings = [];
      for (const [what, path] of [
        ['GET', '/api/v1/namespaces/bench/configmaps/cm-0000'],
        [`LIST ${LIST_SIZE}`, '/api/v1/namespaces/bench/configmaps'],
      ] as const) {
        const run = (accept: string, label: string) =>
          measured(
            `${what} ${label}`,
            mem,
            () => load.call<LoopResult>('fixed', { ...loop, target: target(memPort), req: { method: 'GET', path, accept } }),
            report.describe.loop,
          );
        const j1 = await run('application/json', 'JSON');
        const p1 = await run(PB, 'protobuf');
        const c1 = await run(CBOR, 'CBOR');
        const c2 = await run(CBOR, 'CBOR');
        const p2 = await run(PB, 'protobuf');
        const j2 = await run('application/json', 'JSON');
        figures.encodings.push({
          what,
          json: [j1, j2],
          protobuf: [p1, p2],
          cbor: [c1, c2],
          jsonBytes: await memAdmin.bodyBytes(path, 'application/json'),
          protobufBytes: await memAdmin.bodyBytes(path, PB),
          cborBytes: await memAdmin.bodyBytes(path, CBOR),
        });
      }
      figures.watchEncodings = await watchEncodings(memAdmin, mem, load, [
        ['JSON', 'application/json'],
        ['protobuf', PB],
        ['CBOR', CBOR],
      ]);
    }
    if (selected('create')) {
      // Mirrored (bare, floor, memory, file, file, memory, floor, bare), each server pooled over its two
      // windows: the file store measured once, last, read its first window alone (its JIT still warming)
      // against the memory store's two, and drifted apart from them. Then the durable create's floor and
      // its volatile twin (bench/file-floor.ts, FLOOR_DURABLE), mirrored among themselves (durable,
      // volatile, volatile, durable): their CPU per create apart is what the O_DSYNC append adds to a
      // create. They run after the Gatehouse windows, which stay as they were: with the floors first or
      // between the file windows, the memory store's second window read 117–138 µs a create against its
      // first's 91–99 (an idle gap before it; docs/decisions/2026-12-01-file-store-ratio-floor.md). Their
      // record is the file store's mean record, read off its log after a probe of 100 creates on one
      // connection (the memory store's fixtures were 500).
      const create = (what: string, port: number) => fixed(what, port, 'POST', '/api/v1/namespaces/bench-create/configmaps', configMap('bench-create'));
      const logFile = join(root, 'file', 'store', 'log');
      const logBefore = (await stat(logFile)).size;
      await load.call<LoopResult>('fixed', {
        ...loop,
        connections: 1,
        warmupMs: 0,
        durationMs: 2000,
        maxRequests: 100,
        target: target(filePort),
        req: { method: 'POST', path: '/api/v1/namespaces/bench-create/configmaps', body: JSON.stringify(configMap('bench-create')) },
        uniqueNames: true,
      });
      const recordBytes = meanLine((await readFile(logFile)).subarray(logBefore));
      const fileFloor = async (name: string, durable: boolean): Promise<[number, Child]> => {
        const port = await freePort();
        const child = await startChild(name, './file-floor.ts', [String(port), ...serverTlsArgs(pki), join(root, `${name}-log`)], SERVER_CPU, [], {
          RECORD_BYTES: String(recordBytes),
          FLOOR_DURABLE: durable ? '1' : '0',
        });
        children.push(child);
        servers.set(port, child);
        return [port, child];
      };
      const [durablePort, durable] = await fileFloor('file-floor-durable', true);
      const [volatilePort] = await fileFloor('file-floor-volatile', false);
      // Records per sync (the mean batch) of the file store's windows and the durable floor's: D is per create at the floor's batch.
      const batches = { file: { syncs: 0, records: 0 }, durable: { syncs: 0, records: 0 } };
      const fileWindow = async (): Promise<LoopResult> => {
        const before = await fileAdmin.must('GET', '/metrics');
        const r = await create('CREATE gatehouse file', filePort);
        const after = await fileAdmin.must('GET', '/metrics');
        batches.file.syncs += metricValue(after, 'gatehouse_file_store_syncs_total') - metricValue(before, 'gatehouse_file_store_syncs_total');
        batches.file.records += metricValue(after, 'gatehouse_file_store_writes_total') - metricValue(before, 'gatehouse_file_store_writes_total');
        return r;
      };
      const durableWindow = async (): Promise<LoopResult> => {
        await durable.call('syncs');
        const r = await create('CREATE durable floor (file-floor)', durablePort);
        const s = await durable.call<{ syncs: number; records: number }>('syncs');
        batches.durable.syncs += s.syncs;
        batches.durable.records += s.records;
        return r;
      };
      const b1 = await create('CREATE bare POST', barePort);
      const f1 = await create('CREATE floor', floorPort);
      const m1 = await create('CREATE gatehouse memory', memPort);
      const file1 = await fileWindow();
      const file2 = await fileWindow();
      const m2 = await create('CREATE gatehouse memory', memPort);
      const f2 = await create('CREATE floor', floorPort);
      const b2 = await create('CREATE bare POST', barePort);
      const d1 = await durableWindow();
      const v1 = await create('CREATE volatile floor (file-floor)', volatilePort);
      const v2 = await create('CREATE volatile floor (file-floor)', volatilePort);
      const d2 = await durableWindow();
      figures.create = {
        bare: [b1, b2],
        floor: [f1, f2],
        memory: [m1, m2],
        file: [file1, file2],
        fileFloor: {
          recordBytes,
          durable: [d1, d2],
          volatile: [v1, v2],
          batch: { file: batches.file.records / batches.file.syncs, durable: batches.durable.records / batches.durable.syncs },
        },
      };
    }
    if (selected('crd')) {
      // Custom resource creates beside ConfigMap creates in one namespace of one server, in the mirrored
      // order CM CR RULED RULED CR CM (drift lands on all three).
      await memAdmin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-crd' } });
      const installMs = await installWidgetCrd(memAdmin, 'bench-crd');
      report.progress('CRD install', `${installMs.toFixed(1)} ms from the CRD's create to the first served request`);
      await installWidgetCrd(memAdmin, 'bench-crd', RULED_WIDGET_CRD, 'ruledwidgets');
      const ruled = { ...widget('bench-crd'), kind: 'RuledWidget' };
      const cm1 = await fixed('CREATE configmap (crd section)', memPort, 'POST', '/api/v1/namespaces/bench-crd/configmaps', configMap('bench-crd'));
      const cr1 = await fixed('CREATE custom resource', memPort, 'POST', '/apis/bench.example.com/v1/namespaces/bench-crd/widgets', widget('bench-crd'));
      const rr1 = await fixed(
        'CREATE custom resource, three CEL rules',
        memPort,
        'POST',
        '/apis/bench.example.com/v1/namespaces/bench-crd/ruledwidgets',
        ruled,
      );
      const rr2 = await fixed(
        'CREATE custom resource, three CEL rules',
        memPort,
        'POST',
        '/apis/bench.example.com/v1/namespaces/bench-crd/ruledwidgets',
        ruled,
      );
      const cr2 = await fixed('CREATE custom resource', memPort, 'POST', '/apis/bench.example.com/v1/namespaces/bench-crd/widgets', widget('bench-crd'));
      const cm2 = await fixed('CREATE configmap (crd section)', memPort, 'POST', '/api/v1/namespaces/bench-crd/configmaps', configMap('bench-crd'));
      figures.crd = { installMs, configMap: [cm1, cm2], custom: [cr1, cr2], ruled: [rr1, rr2] };
    }
    if (selected('watch')) {
      for (const n of WATCHERS) {
        const ns = `bench-watch-${n}`;
        const body = configMap(ns, 'x');
        const run = { ...loop, connections: 4, drainMs: 3000 };
        const phase = async (
          what: string,
          server: Child,
          port: number,
          watchPath: string,
          writePath: string,
          writeBody: Record<string, unknown>,
        ): Promise<{ r: WatchRunResult; idle: report.IdleMemory }> => {
          const before = await server.call<MemoryFigures>('mem');
          const opened = await load.call<{ opened: number; ms: number }>('watchOpen', { target: target(port), n, path: watchPath });
          await sleep(1000);
          const after = await server.call<MemoryFigures>('mem');
          const r = await measured(
            what,
            server,
            () => load.call<WatchRunResult>('watchRun', { ...run, target: target(port), path: writePath, body: writeBody }),
            (x) => `${report.describe.watch(x)} (opened in ${Math.round(opened.ms)} ms)`,
          );
          await load.call('watchClose');
          await sleep(500);
          return { r, idle: { watchers: opened.opened, before, after } };
        };
        const raw = await phase(`WATCH ×${n} raw fan-out`, bare, barePort, '/watch', '/fire', {
          ...body,
          metadata: { ...(body['metadata'] as object), uid: '6f1c1a56-5a0e-4f7e-9a8e-2b7d7c3c9e11', creationTimestamp: new Date().toISOString() },
        });
        const gh = await phase(
          `WATCH ×${n} gatehouse`,
          mem,
          memPort,
          `/api/v1/namespaces/${ns}/configmaps?watch=1`,
          `/api/v1/namespaces/${ns}/configmaps`,
          body,
        );
        figures.watch.push({ watchers: n, gatehouse: gh.r, bare: raw.r, ...(n >= 1000 ? { idle: { gatehouse: gh.idle, bare: raw.idle } } : {}) });
      }
    }
    report.details(figures);
    report.summary(figures);
  } finally {
    for (const a of admins) a.close();
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

await main();

// ---------------------------------------------------------------------------
// PATCH section (owned with lib/patch and backends/core/handlers/patch.ts):
// strategic merge PATCH/s beside PUT of the same Pod and 100-key ConfigMap
// (bench/patch.ts). BENCH_PATCH=0 skips it.
if (selected('patch', 'BENCH_PATCH')) {
  const { runPatchBench } = await import('./patch.js');
  await runPatchBench();
}

// ---------------------------------------------------------------------------
// CertificateSigningRequest section (owned with lib/certificates and the csr
// controllers): approve → certificate latency and CSR creates beside ConfigMap
// creates (bench/csr.ts). BENCH_CSR=0 skips it.
if (selected('csr', 'BENCH_CSR')) {
  const { runCsrBench } = await import('./csr.js');
  await runCsrBench();
}

// ---------------------------------------------------------------------------
// Workloads section (owned with the built-in workload kinds): Deployment creates
// beside ConfigMap creates, LIST of 1,000 Pods beside 1,000 ConfigMaps
// (bench/workloads.ts, in process). BENCH_WORKLOADS=0 skips it.
if (selected('workloads', 'BENCH_WORKLOADS')) {
  const { runWorkloadsBench } = await import('./workloads.js');
  await runWorkloadsBench();
}

// ---------------------------------------------------------------------------
// Scale section: GET, LIST limit=500, memory and restart time with 1,000,
// 10,000 and 100,000 ConfigMaps on the memory and file stores (100,000 on
// Redis), and a watch from 0 (bench/scale.ts; `gatehouse serve` processes).
// BENCH_SCALE=0 skips it; BENCH_SCALE_MAX caps the largest size.
if (selected('scale', 'BENCH_SCALE')) {
  const { runScaleBench } = await import('./scale.js');
  await runScaleBench();
}

// ---------------------------------------------------------------------------
// Start time: `gatehouse serve` on an empty data dir to ready, and the CLIs to
// their first output (bench/startup.ts). BENCH_STARTUP=0 skips it.
if (selected('startup', 'BENCH_STARTUP')) {
  const { runStartupBench } = await import('./startup.js');
  await runStartupBench();
}

// ---------------------------------------------------------------------------
// Redis store section (owned with backends/core/store/redis*.ts): store-level
// figures (bench/redis.ts) and the full stack on Redis (bench/redis-stack.ts),
// each beside its baselines. Skipped, with the reason printed, when Redis
// (REDIS_URL, default 127.0.0.1:6379) is unreachable; BENCH_REDIS=0 skips it.
if (selected('redis-watch', 'BENCH_REDIS')) {
  const { printRedisSection } = await import('./redis-stack.js');
  await printRedisSection();
}
if (selected('redis-create', 'BENCH_REDIS')) {
  // The Redis rows, each against a floor measured beside it: creates against bench/floor.ts
  // (bench/redis-create.ts), consistent GET/LIST against the memory store (bench/redis-read.ts).
  const { runRedisCreateSection } = await import('./redis-create.js');
  await runRedisCreateSection();
}
if (selected('redis-read', 'BENCH_REDIS')) {
  const { runRedisReadSection } = await import('./redis-read.js');
  await runRedisReadSection();
}

// ---------------------------------------------------------------------------
// Authentication section (owned with gateway/authn): requests/s per method
// (client cert, static token, service-account JWT hit and all-miss, OIDC,
// webhook) beside the anonymous baseline, jose's raw RS256 rate and new mTLS
// connections beside raw handshakes (bench/authn.ts). BENCH_AUTHN=0 skips it.
if (selected('authn', 'BENCH_AUTHN')) {
  const { printAuthnSection } = await import('./authn.js');
  await printAuthnSection();
}

// ---------------------------------------------------------------------------
// Authorization section (owned with gateway/authz): decisions/s through the
// full stack with 10,000 RoleBindings and 1,000 ClusterRoles under RBAC beside
// AlwaysAllow, then the per-decision cost measured directly on the RBAC
// authorizer (bench/authz.ts, bench/authz-rbac.ts). BENCH_AUTHZ=0 skips it.
if (selected('authz', 'BENCH_AUTHZ')) {
  const { printAuthzSection } = await import('./authz.js');
  await printAuthzSection();
}

// ---------------------------------------------------------------------------
// Store paths (bench/store-paths.ts): file-store creates beside
// memory-store creates in interleaved rounds (group commit, fsync kept) and
// LIST limit=500 pages (stored pieces, streamed).
if (selected('file-create') || selected('list')) {
  const { run } = await import('./store-paths.js');
  await run(new Set((['file-create', 'list'] as const).filter((n) => selected(n))));
}

// File store open (bench/file-replay.ts, in process): FileStore.open of 100,000
// ConfigMaps from the log and from a snapshot beside reading and parsing the
// same file, and the heap per loaded object. BENCH_FILE_REPLAY=0 skips it.
if (selected('file-replay', 'BENCH_FILE_REPLAY')) {
  const { runFileReplayBench } = await import('./file-replay.js');
  await runFileReplayBench();
}

// ---------------------------------------------------------------------------
// Aggregation section (owned with gateway/aggregation): GET and watch of a
// sample-backend Widget through the gateway, beside the backend directly and a
// bare Node proxy hop (bench/aggregation.ts). BENCH_AGGREGATION=0 skips it.
if (selected('proxy', 'BENCH_AGGREGATION')) {
  const { runAggregationBench } = await import('./aggregation.js');
  await runAggregationBench();
}

// ---------------------------------------------------------------------------
// Sidecar section (owned with gateway/sidecar): GET through `gatehouse serve
// --upstream` in front of a plain HTTP upstream; with BENCH_SIDECAR_A=<root of
// an earlier build>, that build's sidecar in interleaved windows (bench/sidecar.ts).
// BENCH_SIDECAR=0 skips it.
if (selected('sidecar', 'BENCH_SIDECAR')) {
  const { runSidecarBench } = await import('./sidecar.js');
  await runSidecarBench();
}

// ---------------------------------------------------------------------------
// Forward-auth section (owned with gateway/forwardauth): decisions per second,
// cached and uncached, beside a bare node:https answer; the sidecar's added p99
// on a cached decision (bench/forwardauth.ts). BENCH_FORWARDAUTH=0 skips it.
if (selected('forwardauth', 'BENCH_FORWARDAUTH')) {
  const { runForwardAuthBench } = await import('./forwardauth.js');
  await runForwardAuthBench();
}

// ---------------------------------------------------------------------------
// HTTP/2 section (owned with gateway/server/serving.ts): GET over HTTP/2 through
// Gatehouse beside a bare node:http2 server (bench/http2.ts). BENCH_HTTP2=0 skips it.
if (selected('http2', 'BENCH_HTTP2')) {
  const { runHttp2Bench } = await import('./http2.js');
  await runHttp2Bench();
}

// ---------------------------------------------------------------------------
// API Priority and Fairness section (owned with gateway/flowcontrol): GET with
// --enable-priority-and-fairness on and off, and a second flow's p99 under a
// flood at 10× its level's seats (bench/flowcontrol.ts). BENCH_FLOWCONTROL=0 skips it.
if (selected('flowcontrol', 'BENCH_FLOWCONTROL')) {
  const { runFlowcontrolBench } = await import('./flowcontrol.js');
  await runFlowcontrolBench();
}

// ---------------------------------------------------------------------------
// Micro-benchmarks (bench/micro.ts): the figures the small optimizations cite
// in their comments (field manager ASCII path, SortedKeys, the Redis write's
// JSON, direct EVALSHA, service-account signature schedules), in a process of
// their own pinned to the servers' CPU when taskset exists. BENCH_MICRO=0 skips it.
if (selected('micro', 'BENCH_MICRO')) {
  const { spawnSync } = await import('node:child_process');
  const micro = new URL('./micro.ts', import.meta.url).pathname;
  const pinned = spawnSync('taskset', ['-c', String(SERVER_CPU), process.execPath, '--import', 'tsx', micro], { stdio: 'inherit' });
  if (pinned.error) spawnSync(process.execPath, ['--import', 'tsx', micro], { stdio: 'inherit' });
}

// ---------------------------------------------------------------------------
// Audit section (owned with gateway/audit): GET and create with auditing off,
// at Metadata and at RequestResponse to a file (bench/audit.ts). BENCH_AUDIT=0 skips it.
if (selected('audit', 'BENCH_AUDIT')) {
  const { runAuditBench } = await import('./audit.js');
  await runAuditBench();
}

// ---------------------------------------------------------------------------
// Tracing section (owned with gateway/tracing): GET and create with tracing
// off, at 0.1% and at 100% sampling (bench/tracing.ts). BENCH_TRACING=0 skips it.
if (selected('tracing', 'BENCH_TRACING')) {
  const { runTracingBench } = await import('./tracing.js');
  await runTracingBench();
}

// ---------------------------------------------------------------------------
// Admission section (owned with backends/core/admission): ConfigMap create
// without admission, with one validating webhook, and unmatched by 100
// configurations (bench/admission.ts). BENCH_ADMISSION=0 skips it.
if (selected('admission', 'BENCH_ADMISSION')) {
  const { runAdmissionBench } = await import('./admission.js');
  await runAdmissionBench();
}

// ---------------------------------------------------------------------------
// Monitoring section (owned with gateway/metrics and k8s/monitoring): a
// /metrics scrape with 2,000 request label sets, and GET while a real
// Prometheus scrapes every second beside none (bench/monitoring.ts).
// BENCH_MONITORING=0 skips it.
if (selected('monitoring', 'BENCH_MONITORING')) {
  const { runMonitoringBench } = await import('./monitoring.js');
  await runMonitoringBench();
}

// ---------------------------------------------------------------------------
// Access insight section (owned with gateway/authz explanations): explanations
// and who-can beside SubjectAccessReview on one chain with 10,000 bindings
// (bench/access.ts). BENCH_ACCESS=0 skips it.
if (selected('access', 'BENCH_ACCESS')) {
  const { runAccessBench, accessRows } = await import('./access.js');
  const f = await runAccessBench();
  process.stdout.write(`\n=== Access insight (bench/access.ts, in process) ===\n`);
  for (const [what, figure, target] of accessRows(f)) process.stdout.write(`  ${what}: ${figure} (target ${target})\n`);
  recordRow({
    name: 'SubjectAccessExplanation vs SubjectAccessReview (denied, in process)',
    value: f.explainPerS.denied,
    unit: 'per s',
    baseline: f.reviewPerS.denied,
    target: '≥ 25%',
    atLeast: 0.25,
  });
  recordRow({ name: 'SubjectsReview (who can) p99, 10,000 bindings (in process)', value: f.whoCanMs.p99, unit: 'ms', target: 'p99 ≤ 50 ms', atMost: 50 });
}

// ---------------------------------------------------------------------------
// Custom-resource schema section (owned with lib/crdschema): the project's
// validator beside ajv on the same schema (bench/crdschema.ts, in process;
// the decision it supports is in lib/crdschema/README.md). BENCH_CRDSCHEMA=0 skips it.
if (selected('crdschema', 'BENCH_CRDSCHEMA')) {
  process.stdout.write(`\n=== Custom-resource schema validation (bench/crdschema.ts, in process) ===\n`);
  await import('./crdschema.js');
}

// ---------------------------------------------------------------------------
// Leader election section (owned with backends/core/controllers/leaderelection):
// three `gatehouse serve` processes on Redis with the default timings; failover
// after SIGKILL of the leader, and the election's own write load
// (bench/leaderelection.ts). Skipped with the reason printed when Redis is
// unreachable; BENCH_LEADERELECTION=0 skips it.
if (selected('leaderelection', 'BENCH_LEADERELECTION')) {
  process.stdout.write(`\n=== Leader election (bench/leaderelection.ts, three processes on Redis) ===\n`);
  const { redisUnreachable } = await import('./redis-stack.js');
  const why = await redisUnreachable(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
  if (why) process.stdout.write(`  skipped: ${why}\n`);
  else await (await import('./leaderelection.js')).runLeaderElectionBench();
}

// ---------------------------------------------------------------------------
// kubectl's OIDC exec plugin (owned with gateway/cli/oidclogin): `kubectl
// gatehouse oidc-login get-token` from spawn to ExecCredential on a warm
// cache, beside Node starting an empty module, and where the start goes
// (bench/oidclogin.ts). BENCH_NODES adds other Node binaries; BENCH_OIDCLOGIN=0 skips it.
if (selected('oidclogin', 'BENCH_OIDCLOGIN')) {
  const { runOidcLoginBench } = await import('./oidclogin.js');
  await runOidcLoginBench();
}

// ---------------------------------------------------------------------------
// CRD changes with 300 CRDs installed (owned with lib/crd and the CRD check
// worker, bench/crds.ts, in process): install and delete one more CRD, the
// worst latency of another client's GETs meanwhile, GET and LIST of a custom
// resource, beside the same with 1 CRD. BENCH_CRDS=0 skips it.
if (selected('crds', 'BENCH_CRDS')) {
  const { runCrdsBench, INSTALLED } = await import('./crds.js');
  process.stdout.write(`\n=== CRD changes with ${INSTALLED} CRDs beside 1 (bench/crds.ts, in process) ===\n`);
  const { one, many } = await runCrdsBench();
  for (const [label, f] of [
    ['1 CRD', one],
    [`${INSTALLED} CRDs`, many],
  ] as const) {
    process.stdout.write(
      `  ${label}: install ${f.installMs.toFixed(0)} ms, delete ${f.deleteMs.toFixed(0)} ms, worst concurrent GET ${f.worstGetMs.toFixed(1)} ms, ` +
        `GET CR ${f.getPerS.toFixed(0)}/s, LIST CR ${f.listPerS.toFixed(0)}/s\n`,
    );
  }
  recordRow({ name: `CRD install with ${INSTALLED} CRDs vs 1`, value: many.installMs, unit: 'ms', baseline: one.installMs, target: '≤ 2×', atMost: 2 });
  recordRow({ name: `CRD delete with ${INSTALLED} CRDs vs 1`, value: many.deleteMs, unit: 'ms', baseline: one.deleteMs, target: '≤ 2×', atMost: 2 });
  recordRow({
    name: `worst concurrent GET during CRD changes, ${INSTALLED} CRDs`,
    value: many.worstGetMs,
    unit: 'ms',
    target: '≤ 50 ms',
    atMost: 50,
  });
  recordRow({
    name: `GET custom resource with ${INSTALLED} CRDs vs 1`,
    value: many.getPerS,
    unit: 'per s',
    baseline: one.getPerS,
    target: '≥ 95%',
    atLeast: 0.95,
  });
  recordRow({
    name: `LIST custom resource with ${INSTALLED} CRDs vs 1`,
    value: many.listPerS,
    unit: 'per s',
    baseline: one.listPerS,
    target: '≥ 95%',
    atLeast: 0.95,
  });
}

// ---------------------------------------------------------------------------
// Custom resources read through a webhook-converted version (owned with
// backends/core/conversion.ts, bench/crdconversion.ts, in process): first reads
// (each a ConversionReview), repeated reads of one converted state, and reads
// through the storage version. BENCH_CRDCONVERSION=0 skips it.
if (selected('crdconversion', 'BENCH_CRDCONVERSION')) {
  const { runConversionBench } = await import('./crdconversion.js');
  process.stdout.write(`\n=== Custom resource reads through a webhook-converted version (bench/crdconversion.ts, in process) ===\n`);
  const f = await runConversionBench();
  process.stdout.write(
    `  GET through v1, first read of each object: ${f.firstPerS.toFixed(0)}/s; repeated: ${f.repeatedPerS.toFixed(0)}/s ` +
      `(${f.repeatedReviews} ConversionReviews); through the storage version v2: ${f.storagePerS.toFixed(0)}/s\n`,
  );
  recordRow({
    name: 'GET custom resource through a webhook-converted version, repeated, vs storage version',
    value: f.repeatedPerS,
    unit: 'per s',
    baseline: f.storagePerS,
    target: '≥ 80%',
    atLeast: 0.8,
  });
  recordRow({
    name: 'GET custom resource through a webhook-converted version, first read, vs storage version',
    value: f.firstPerS,
    unit: 'per s',
    baseline: f.storagePerS,
    target: 'reference',
  });
}
