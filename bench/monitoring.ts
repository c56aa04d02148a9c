// Monitoring figures: what a /metrics scrape costs with 2,000 label sets of
// the request metrics (its time and bytes), and GET throughput while a real
// Prometheus scrapes the server every second, beside no scraping. One memory
// server (CPU 0) and the load generator (CPU 1); 2,000 distinct request label
// sets are made first (GETs of 2,000 resources the server does not serve,
// each a label set of the request counter, latency, SLI and size
// histograms: the bound past which further ones are counted as `other`).
// Runs ordered without, with, with, without. Targets: a scrape ≤ 50 ms, GET
// with scraping ≥ 98% of without. Prometheus is Debian's (`prometheus` on
// PATH); without it the throughput row is not measured. BENCH_ONLY=monitoring.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { scrapeJob } from '../k8s/monitoring/source/scrape.js';
import { Admin } from './admin.js';
import { freePort, placement, startChild, withCpu, type Child } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants } from './variants.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
/** Label sets of the whole exposition the scrape target is held at (a histogram's label set counted once). */
const LABEL_SETS = 2000;
/** The request metrics' own bound (gateway/metrics/requests.ts). */
const REQUEST_LABEL_SETS = 2000;
const SCRAPES = 30;

interface Exposition {
  bytes: number;
  samples: number;
  labelSets: number;
  /** Label sets of apiserver_request_total without the code label. */
  requestSets: number;
  p50: number;
  p99: number;
}

/** `n` scrapes: the last one's size and label sets, and the time percentiles. */
async function scrape(admin: Admin, n: number): Promise<Exposition> {
  const times: number[] = [];
  let text = '';
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await admin.call('GET', '/metrics');
    times.push(performance.now() - t0);
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
  };
}

interface Figure {
  rate: number;
  cpuUs: number;
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

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
    // Request label sets, one per resource the server does not serve (each answered 404), until the exposition holds `want` label sets.
    let made = 0;
    const grow = async (want: (e: Exposition) => boolean): Promise<Exposition> => {
      for (;;) {
        const e = await scrape(admin, 1);
        if (want(e) || made >= REQUEST_LABEL_SETS) return e;
        await Promise.all(Array.from({ length: 10 }, () => admin.call('GET', `/api/v1/namespaces/bench/unserved${made++}`)));
      }
    };
    const typical = await grow((e) => e.labelSets >= LABEL_SETS);
    if (typical.labelSets < LABEL_SETS) throw new Error(`only ${typical.labelSets} label sets`);
    const typicalScrapes = await scrape(admin, SCRAPES);
    const run = async (): Promise<Figure> => {
      const r = await withCpu(v.baseline.child, load, () => configmapRun(load, v.tls, v.baseline.port, 'GET', { warmupMs: WARMUP, durationMs: DURATION }));
      const rate = r.requests / r.seconds;
      return { rate, cpuUs: (r.cpu.server / rate) * 1e6 };
    };
    await run(); // unmeasured: compiled and warm
    const off1 = await run();
    const started = await startPrometheus(root, v.baseline.port, join(root, 'off', 'pki'));
    prom = started?.proc;
    const on1 = started ? await run() : undefined;
    const on2 = started ? await run() : undefined;
    prom?.kill('SIGTERM');
    prom = undefined;
    const off2 = await run();
    // The bound: as many request label sets as a client can make (then they are counted as `other`).
    while (made < REQUEST_LABEL_SETS) await Promise.all(Array.from({ length: 50 }, () => admin.call('GET', `/api/v1/namespaces/bench/unserved${made++}`)));
    const bound = await scrape(admin, SCRAPES);
    admin.close();

    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const lines = ['', `=== Monitoring (bench/monitoring.ts; ${placement()}) ===`];
    const describe = (e: Exposition, requestSets: number) =>
      `${f(e.labelSets)} label sets (${f(requestSets)} of the request metrics), ${f(e.bytes)} bytes, ${f(e.samples)} samples; p50 ${e.p50.toFixed(1)} ms, p99 ${e.p99.toFixed(1)} ms over ${SCRAPES} scrapes`;
    lines.push(`  /metrics with ${describe(typicalScrapes, typical.requestSets)} (target ≤ 50 ms)`);
    lines.push(`  /metrics at the bound, ${describe(bound, bound.requestSets)} (reference: what clients' unknown paths can make it)`);
    recordRow({ name: `/metrics scrape with ${f(LABEL_SETS)} label sets (p50)`, value: typicalScrapes.p50, unit: 'ms', target: '≤ 50 ms', atMost: 50 });
    recordRow({ name: `/metrics scrape at the bound of ${f(bound.requestSets)} request label sets (p50)`, value: bound.p50, unit: 'ms', target: 'reference' });
    const off = { rate: (off1.rate + off2.rate) / 2, cpuUs: (off1.cpuUs + off2.cpuUs) / 2 };
    lines.push(`  GET configmap without scraping: ${f(off1.rate)} / ${f(off2.rate)} req/s, ${off.cpuUs.toFixed(0)} µs CPU/request`);
    if (on1 && on2) {
      const on = { rate: (on1.rate + on2.rate) / 2, cpuUs: (on1.cpuUs + on2.cpuUs) / 2 };
      lines.push(
        `  GET configmap while Prometheus scrapes every second: ${f(on1.rate)} / ${f(on2.rate)} req/s, ${on.cpuUs.toFixed(0)} µs CPU/request; ` +
          `${((100 * on.rate) / off.rate).toFixed(1)}% of without (target ≥ 98%)`,
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
