// Monitoring figures: what a /metrics scrape costs with 2,000 label sets (its
// time and bytes; a histogram's label set counted once), and GET throughput
// while a real Prometheus scrapes the server every second, beside no
// scraping. One memory server (CPU 0) and the load generator (CPU 1); the
// label sets are made first as a busy cluster makes them: 20 CRDs installed,
// then every served resource listed, read and written by each of its verbs
// (answers of any code). Runs ordered without, with, with, without. Targets: a scrape ≤ 50 ms, GET
// with scraping ≥ 98% of without. Prometheus is Debian's (`prometheus` on
// PATH); without it the throughput row is not measured. BENCH_ONLY=monitoring.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { scrapeJob } from '../k8s/monitoring/source/scrape.js';
import { Admin } from './admin.js';
import { freePort, placement, startChild, withCpu, type Child, serverTlsArgs } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants } from './variants.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
/** Label sets of the whole exposition the scrape target is held at (a histogram's label set counted once). */
const LABEL_SETS = 2000;
const SCRAPES = 30;
/** How long the server's idle CPU is read, with and without Prometheus. */
const IDLE_WINDOW_MS = 10_000;

interface Exposition {
  bytes: number;
  samples: number;
  labelSets: number;
  /** Label sets of apiserver_request_total without the code label. */
  requestSets: number;
  p50: number;
  p99: number;
  /** Server CPU per scrape (/proc's 10 ms ticks, summed over the scrapes); 0 without the server. */
  cpuMs: number;
}

/**
 * `n` scrapes: the last one's size and label sets, the time percentiles, and (given the server) its CPU per scrape.
 * Before each, untimed, a GET and a LIST move a few label sets, as traffic between two scrapes does.
 */
async function scrape(admin: Admin, n: number, server?: Child): Promise<Exposition> {
  const times: number[] = [];
  let text = '';
  let cpu = 0;
  for (let i = 0; i < n; i++) {
    if (server) {
      await admin.call('GET', '/api/v1/namespaces/default/configmaps?limit=1');
      await admin.call('GET', '/api/v1/namespaces/default/configmaps/absent');
    }
    const c0 = server?.cpuSeconds() ?? 0;
    const t0 = performance.now();
    const r = await admin.call('GET', '/metrics');
    times.push(performance.now() - t0);
    cpu += (server?.cpuSeconds() ?? 0) - c0;
    if (r.status !== 200) throw new Error(`/metrics: ${r.status}`);
    text = r.text;
  }
  const samples = text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
  const requestSets = new Set(samples.filter((l) => l.startsWith('apiserver_request_total{')).map((l) => l.replace(/,?code="[^"]*"/, '').split(' ')[0]));
  return {
    bytes: Buffer.byteLength(text),
    samples: samples.length,
    labelSets: samples.filter((l) => !/^[a-z_:]+_(bucket|sum)\{/.test(l) && !/^[a-z_:]+_sum /.test(l)).length,
    requestSets: requestSets.size,
    p50: percentile(times, 0.5),
    p99: percentile(times, 0.99),
    cpuMs: (cpu / n) * 1000,
  };
}

/** What Prometheus sends: its Accept (OpenMetrics first) and gzip. */
const PROMETHEUS_HEADERS = {
  accept: 'application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2',
  'accept-encoding': 'gzip',
};

/**
 * The server's CPU per scrape as Prometheus asks for it (gzip), each after a GET and a LIST that move a few label
 * sets, and the gzip bytes: what one scrape a second takes from the server's core, apart from Prometheus's own CPU.
 */
async function gzipScrapeCpu(admin: Admin, n: number, server: Child): Promise<{ cpuMs: number; bytes: number }> {
  let cpu = 0;
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    await admin.call('GET', '/api/v1/namespaces/default/configmaps?limit=1');
    await admin.call('GET', '/api/v1/namespaces/default/configmaps/absent');
    const c0 = server.cpuSeconds();
    const r = await admin.getBytes('/metrics', PROMETHEUS_HEADERS);
    cpu += server.cpuSeconds() - c0;
    if (r.status !== 200) throw new Error(`/metrics (gzip): ${r.status}`);
    bytes = r.bytes;
  }
  return { cpuMs: (cpu / n) * 1000, bytes };
}

interface Figure {
  rate: number;
  cpuUs: number;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

type Call = [method: string, path: string, body?: unknown];

/** Custom resource types the bench cluster holds, as clusters with operators do: each adds its own request label sets. */
const CRDS = 20;

async function installCrds(admin: Admin, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const group = `bench${i}.example.com`;
    await admin.must('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
      },
    });
  }
  for (let i = 0; i < n; i++)
    for (let tries = 0; (await admin.call('GET', `/apis/bench${i}.example.com/v1`)).status !== 200; tries++) {
      if (tries > 200) throw new Error(`CRD widgets.bench${i}.example.com never served`);
      await new Promise((r) => setTimeout(r, 50));
    }
}

/** Every served resource's verbs as requests (discovery read first), in every served version: list in the cluster and a namespace, get of one object, and create, update, patch, delete of one, each with and without dryRun. */
async function resourceCalls(admin: Admin): Promise<Call[]> {
  const groupVersions = ['/api/v1'];
  const groups = JSON.parse((await admin.call('GET', '/apis')).text) as { groups: Array<{ versions: Array<{ groupVersion: string }> }> };
  for (const g of groups.groups) for (const v of g.versions) groupVersions.push(`/apis/${v.groupVersion}`);
  const calls: Call[] = [];
  for (const gv of groupVersions) {
    const list = JSON.parse((await admin.call('GET', gv)).text) as { resources: Array<{ name: string; namespaced: boolean; verbs: string[] }> };
    for (const r of list.resources) {
      if (r.name.includes('/')) continue;
      const base = r.namespaced ? `${gv}/namespaces/bench/${r.name}` : `${gv}/${r.name}`;
      const has = (v: string) => r.verbs.includes(v);
      if (has('list')) calls.push(['GET', `${gv}/${r.name}?limit=1`]);
      if (has('list') && r.namespaced) calls.push(['GET', `${base}?limit=1`]);
      if (has('get')) calls.push(['GET', `${base}/absent`]);
      // Writes with and without dryRun: kube's dry_run label makes each its own set.
      for (const dry of ['', '?dryRun=All']) {
        if (has('create')) calls.push(['POST', `${base}${dry}`, {}]);
        if (has('update')) calls.push(['PUT', `${base}/absent${dry}`, {}]);
        if (has('patch')) calls.push(['PATCH', `${base}/absent${dry}`, {}]);
        if (has('delete')) calls.push(['DELETE', `${base}/absent${dry}`]);
      }
    }
  }
  return calls;
}

async function startPrometheus(dir: string, port: number, pkiDir: string): Promise<{ proc: ChildProcess; url: string } | undefined> {
  if (spawnSync('prometheus', ['--version'], { stdio: 'ignore' }).status !== 0) return undefined;
  const job = scrapeJob({
    target: `127.0.0.1:${port}`,
    caFile: join(pkiDir, 'ca.crt'),
    certFile: join(pkiDir, 'admin.crt'),
    keyFile: join(pkiDir, 'admin.key'),
    interval: '1s',
  });
  await writeFile(join(dir, 'prometheus.yml'), stringify({ global: { scrape_interval: '1s' }, scrape_configs: [job] }));
  const web = await freePort();
  const proc = spawn(
    'prometheus',
    [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${web}`, '--log.level=warn'],
    { stdio: 'ignore' },
  );
  const url = `http://127.0.0.1:${web}`;
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${url}/api/v1/query?query=up`)
      .then(async (r) => ((await r.json()) as { data?: { result?: Array<{ value: [number, string] }> } }).data?.result?.[0]?.value[1])
      .catch(() => undefined);
    if (up === '1') return { proc, url };
    await new Promise((r) => setTimeout(r, 100));
  }
  const targets = await fetch(`${url}/api/v1/targets`)
    .then((r) => r.text())
    .catch((err: Error) => err.message);
  proc.kill('SIGTERM');
  throw new Error(`Prometheus never scraped the bench server: ${targets}`);
}

export async function runMonitoringBench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-monitoring-'));
  const children: Child[] = [];
  let prom: ChildProcess | undefined;
  try {
    const v = await startVariants(root, 'monitoring', ['--storage-backend', 'memory', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'], children);
    const load = await startChild('monitoring-load', './loadgen.ts', [], 1);
    children.push(load);
    await seedConfigmaps([v.baseline.port], v.tls);
    const admin = new Admin(v.baseline.port, v.tls);
    // Request label sets as a busy cluster makes them: every served resource read and written by every verb it has
    // (answers of any code), until the exposition holds LABEL_SETS label sets.
    await installCrds(admin, CRDS);
    const calls = await resourceCalls(admin);
    let made = 0;
    let typical = await scrape(admin, 1);
    while (typical.labelSets < LABEL_SETS && made < calls.length) {
      await Promise.all(calls.slice(made, made + 20).map(([method, path, body]) => admin.call(method, path, body)));
      made += 20;
      typical = await scrape(admin, 1);
    }
    if (typical.labelSets < LABEL_SETS) throw new Error(`only ${typical.labelSets} label sets from ${calls.length} kinds of request`);
    const typicalScrapes = await scrape(admin, SCRAPES, v.baseline.child);
    // /proc counts in 10 ms ticks: enough scrapes that the tick is under a tenth of a millisecond per scrape.
    const gzipScrapes = await gzipScrapeCpu(admin, 10 * SCRAPES, v.baseline.child);
    const run = async (): Promise<Figure> => {
      const r = await withCpu(v.baseline.child, load, () => configmapRun(load, v.tls, v.baseline.port, 'GET', { warmupMs: WARMUP, durationMs: DURATION }));
      const rate = r.requests / r.seconds;
      return { rate, cpuUs: (r.cpu.server / rate) * 1e6 };
    };
    await run(); // unmeasured: compiled and warm
    const off1 = await run();
    // The server's own CPU per second with no traffic, without and then with Prometheus scraping every second: what a
    // scrape costs the server, apart from the CPU Prometheus itself takes from this two-core machine.
    const idleCpuMs = async (): Promise<number> => {
      const c0 = v.baseline.child.cpuSeconds();
      const t0 = performance.now();
      await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS));
      return ((v.baseline.child.cpuSeconds() - c0) * 1e6) / (performance.now() - t0);
    };
    const idleOff = await idleCpuMs();
    const started = await startPrometheus(root, v.baseline.port, join(root, 'off', 'pki'));
    prom = started?.proc;
    const idleOn = started ? await idleCpuMs() : undefined;
    const on1 = started ? await run() : undefined;
    const on2 = started ? await run() : undefined;
    prom?.kill('SIGTERM');
    prom = undefined;
    // The floor: the same Prometheus scraping the same exposition from a static process on the server's CPU, so what
    // it takes from this machine is taken without the server's own scrape work.
    let floor: Figure | undefined;
    if (started) {
      const copy = join(root, 'exposition.txt');
      await writeFile(copy, (await admin.call('GET', '/metrics')).text);
      const staticPort = await freePort();
      const pki = join(root, 'off', 'pki');
      const fixed = await startChild('monitoring-static', './staticmetrics.ts', [String(staticPort), ...serverTlsArgs(pki), copy], 0);
      children.push(fixed);
      await mkdir(join(root, 'floor'));
      const other = await startPrometheus(join(root, 'floor'), staticPort, pki);
      prom = other?.proc;
      floor = other ? await run() : undefined;
      prom?.kill('SIGTERM');
      prom = undefined;
      await fixed.stop();
    }
    const off2 = await run();
    admin.close();

    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const lines = ['', `=== Monitoring (bench/monitoring.ts; ${placement()}) ===`];
    const describe = (e: Exposition, requestSets: number) =>
      `${f(e.labelSets)} label sets (${f(requestSets)} of the request metrics), ${f(e.bytes)} bytes, ${f(e.samples)} samples; p50 ${e.p50.toFixed(1)} ms, p99 ${e.p99.toFixed(1)} ms, server CPU ${e.cpuMs.toFixed(1)} ms per scrape, over ${SCRAPES} scrapes`;
    lines.push(`  /metrics with ${describe(typicalScrapes, typical.requestSets)} (target ≤ 50 ms)`);
    recordRow({ name: `/metrics scrape with ${f(LABEL_SETS)} label sets (p50)`, value: typicalScrapes.p50, unit: 'ms', target: '≤ 50 ms', atMost: 50 });
    // At one scrape a second, a scrape's CPU in ms is that share of the server's core in tenths of a percent: the
    // GET throughput a CPU-bound server gives up to it.
    const share = gzipScrapes.cpuMs / 10;
    lines.push(
      `  as Prometheus scrapes (gzip): ${f(gzipScrapes.bytes)} bytes, server CPU ${gzipScrapes.cpuMs.toFixed(1)} ms per scrape over ${10 * SCRAPES} scrapes = ` +
        `${share.toFixed(2)}% of the server's core at one scrape a second (target: scraping costs ≤ 2% of GET throughput)`,
    );
    recordRow({ name: "a Prometheus scrape's share of the server's core, one a second", value: share, unit: '%', target: '≤ 2%', atMost: 2 });
    const off = { rate: (off1.rate + off2.rate) / 2, cpuUs: (off1.cpuUs + off2.cpuUs) / 2 };
    lines.push(`  GET configmap without scraping: ${f(off1.rate)} / ${f(off2.rate)} req/s, ${off.cpuUs.toFixed(0)} µs CPU/request`);
    if (idleOn !== undefined)
      lines.push(
        `  server CPU with no traffic: ${idleOff.toFixed(1)} ms/s not scraped, ${idleOn.toFixed(1)} ms/s while Prometheus scrapes every second (${(idleOn - idleOff).toFixed(1)} ms per scrape)`,
      );
    if (on1 && on2) {
      const on = { rate: (on1.rate + on2.rate) / 2, cpuUs: (on1.cpuUs + on2.cpuUs) / 2 };
      lines.push(
        `  GET configmap while Prometheus scrapes every second: ${f(on1.rate)} / ${f(on2.rate)} req/s, ${on.cpuUs.toFixed(0)} µs CPU/request; ` +
          `${((100 * on.rate) / off.rate).toFixed(1)}% of without (target ≥ 98%)`,
      );
      if (floor)
        lines.push(
          `  floor, Prometheus scraping a static copy of the exposition instead: ${f(floor.rate)} req/s, ${floor.cpuUs.toFixed(0)} µs CPU/request; ` +
            `${((100 * floor.rate) / off.rate).toFixed(1)}% of without (the scrape's own share: ${((100 * on.rate) / floor.rate).toFixed(1)}% of the floor)`,
        );
      recordRow({
        name: 'GET configmap while Prometheus scrapes every second, vs without',
        value: on.rate,
        unit: 'req/s',
        baseline: off.rate,
        target: '≥ 98% of without',
        atLeast: 0.98,
      });
    } else lines.push('  GET while Prometheus scrapes: not measured (prometheus is not on PATH)');
    process.stdout.write(lines.join('\n') + '\n\n');
  } finally {
    prom?.kill('SIGTERM');
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

// Run directly: this section alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runMonitoringBench();
