// Audit figures: GET and create throughput of one Gatehouse with
// auditing off, at Metadata to a file, and at RequestResponse to a file,
// beside two servers with auditing off that write a log their own way: the
// reference (kube's way: each request's whole Event marshalled when the
// answer is done) and the floor (a fixed line of a Metadata GET's size per
// request: the log's I/O with no event made at all; bench/server.ts). In
// rounds of off, Metadata, reference, floor, RequestResponse ×2, floor,
// reference, Metadata, off so the machine's drift lands on all, each rate the
// median of its windows (target: Metadata ≥ 90% of off). Knobs:
// BENCH_AUDIT_ROUNDS (3), BENCH_AUDIT_WINDOW_MS (2000), BENCH_WARMUP_MS (500).
// Metrics are always collected (the prom-client registry), so every row has
// them. Five servers with the same PKI on CPU 0, the raw load generator
// (bench/loadgen.ts) on CPU 1. BENCH_AUDIT=0 skips the section in run.ts.
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { placement, startChild, type Child } from './procs.js';
import { configmapRun, seedConfigmaps, startVariants } from './variants.js';
import { recordRow } from './summary.js';

// Shorter windows than other sections, in more rounds: a rate is the median of its windows, so one
// window the machine's other load dips (a 30% drop in one of two 5 s windows was common) does not decide the row.
const DURATION = Number(process.env['BENCH_AUDIT_WINDOW_MS'] ?? 2000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 500);
const ROUNDS = Number(process.env['BENCH_AUDIT_ROUNDS'] ?? 3);
/** About a Metadata GET's line (825 bytes in bench/micro.ts's audit section). */
const FLOOR_LINE_BYTES = 850;
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

const policy = (level: string) => `apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: ${level}\n`;

export async function runAuditBench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-audit-'));
  const children: Child[] = [];
  try {
    const base = ['--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow', '--controllers=*,-serviceaccount,-root-ca-cert-publisher'];
    const v = await startVariants(root, 'audit', base, children);
    const offPort = v.baseline.port;
    const audited = async (level: string): Promise<{ port: number; log: string }> => {
      const log = join(root, `${level}.log`);
      await writeFile(join(root, `${level}.yaml`), policy(level));
      const { port } = await v.start(level, [`--audit-policy-file=${join(root, `${level}.yaml`)}`, `--audit-log-path=${log}`]);
      return { port, log };
    };
    const meta = await audited('Metadata');
    const rr = await audited('RequestResponse');
    // A reference beside Metadata: auditing off, and per request only kube's way of logging an event (bench/server.ts).
    const refLog = join(root, 'reference.log');
    const ref = await v.start('reference', [], { BENCH_AUDIT_REFERENCE: refLog });
    // A floor under both: the same server writing a fixed line of a Metadata GET's size per request
    // (at 'finish', gathered every 5 ms): what the log's I/O costs with no event made at all.
    const floorLog = join(root, 'floor.log');
    const floor = await v.start('floor', [], { BENCH_AUDIT_REFERENCE: floorLog, BENCH_AUDIT_REFERENCE_FIXED: String(FLOOR_LINE_BYTES) });
    const load = await startChild('audit-load', './loadgen.ts', [], 1);
    children.push(load);
    await seedConfigmaps([offPort, meta.port, rr.port, ref.port, floor.port], v.tls);
    const run = async (port: number, method: 'GET' | 'POST'): Promise<number> => {
      const r = await configmapRun(load, v.tls, port, method, { warmupMs: WARMUP, durationMs: DURATION });
      return r.requests / r.seconds;
    };
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    const lines = [
      '',
      `=== Audit (bench/audit.ts; ${placement()}) ===`,
      `requests/s in ${ROUNDS} rounds of (off, Metadata, reference, floor, RequestResponse, RequestResponse, floor, reference, Metadata, off), ${DURATION / 1000} s windows; each rate the median of its ${2 * ROUNDS} windows; audit events to a file, RequestReceived omitted`,
    ];
    for (const method of ['GET', 'POST'] as const) {
      const offRates: number[] = [];
      const metaRates: number[] = [];
      const rrRates: number[] = [];
      const refRates: number[] = [];
      const floorRates: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        offRates.push(await run(offPort, method));
        metaRates.push(await run(meta.port, method));
        refRates.push(await run(ref.port, method));
        floorRates.push(await run(floor.port, method));
        rrRates.push(await run(rr.port, method));
        rrRates.push(await run(rr.port, method));
        floorRates.push(await run(floor.port, method));
        refRates.push(await run(ref.port, method));
        metaRates.push(await run(meta.port, method));
        offRates.push(await run(offPort, method));
      }
      const o = median(offRates);
      const m = median(metaRates);
      const q = median(rrRates);
      const x = median(refRates);
      const y = median(floorRates);
      const what = method === 'GET' ? 'GET one configmap' : 'CREATE configmap';
      recordRow({ name: `${what}, metrics + Metadata audit vs audit off`, value: m, unit: 'req/s', baseline: o, target: '≥ 90% of off', atLeast: 0.9 });
      const all = (xs: number[]) => xs.map(f).join(' / ');
      lines.push(
        `${what}`,
        `  audit off                  ${f(o)}   (${all(offRates)})`,
        `  Metadata to a file         ${f(m)}   ${((100 * m) / o).toFixed(1)}% of off (target ≥ 90%)   (${all(metaRates)})`,
        `  RequestResponse to a file  ${f(q)}   ${((100 * q) / o).toFixed(1)}% of off   (${all(rrRates)})`,
        `  reference (kube's way)     ${f(x)}   ${((100 * x) / o).toFixed(1)}% of off; Metadata at ${((100 * m) / x).toFixed(1)}% of it   (${all(refRates)})`,
        `  floor (fixed ${FLOOR_LINE_BYTES}-byte line) ${f(y)}   ${((100 * y) / o).toFixed(1)}% of off   (${all(floorRates)})`,
      );
      recordRow({
        name: `${what}, audit reference (each Event marshalled whole, lines written every 5 ms, no policy or stages) vs audit off`,
        value: x,
        unit: 'req/s',
        baseline: o,
        target: 'reference (no target)',
      });
      recordRow({
        name: `${what}, audit floor (a fixed ${FLOOR_LINE_BYTES}-byte line per request, written every 5 ms, no event) vs audit off`,
        value: y,
        unit: 'req/s',
        baseline: o,
        target: 'floor (no target)',
      });
    }
    lines.push(
      `  log sizes: Metadata ${f((await stat(meta.log)).size / 1e6)} MB, RequestResponse ${f((await stat(rr.log)).size / 1e6)} MB, reference ${f((await stat(refLog)).size / 1e6)} MB, floor ${f((await stat(floorLog)).size / 1e6)} MB`,
      '',
    );
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

// Run directly: this section alone.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runAuditBench();
