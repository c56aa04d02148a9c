// Sidecar figures: GET through `gatehouse serve --upstream` (client-certificate
// authentication, the cluster's SubjectAccessReview — cached after the first —,
// the chain, the pooled forwarder to a plain HTTP upstream), beside the same
// GET sent to the upstream directly, and, given the root of an earlier build,
// that build's sidecar in the same run: two sidecars side by side, measured in
// interleaved windows (A B, B A, …) so the machine's drift lands on both.
// Each window prints req/s and the sidecar's CPU per request (from /proc, the
// steadier figure on a shared machine); the end prints the medians and B/A.
//
//   node --import tsx bench/sidecar.ts [<root of build A, e.g. a worktree of an earlier commit>]
//   BENCH_ONLY=sidecar npm run bench   (BENCH_SIDECAR_A=<root of build A> for the A/B)
//
// `runSidecarBench()` (the `sidecar` section of run.ts) returns the summary
// rows: the sidecar's GET rate and CPU per request, and B/A when A is given
// (reference rows, no target). The upstream and the SubjectAccessReview answerer are one child process;
// the sidecars are `bin/gatehouse.js serve --upstream=…` processes (A's from
// its own root, B from this one's dist/, which must be built). Knobs:
// SIDECAR_ROUNDS (4), SIDECAR_MS (measured window, 2000), SIDECAR_CONNECTIONS (50).
import { request } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { closedLoop, type LoopResult } from './rawclient.js';
import { cpuSecondsOf } from './procs.js';
import { ROOT, startSidecarRig, type Sidecar } from './sidecarrig.js';
import { addRows, type SummaryRow } from './summary.js';

const rounds = Number(process.env['SIDECAR_ROUNDS'] ?? 4);
const windowMs = Number(process.env['SIDECAR_MS'] ?? 2000);
const connections = Number(process.env['SIDECAR_CONNECTIONS'] ?? 50);
const PATH = '/api/v1/items';

export async function runSidecarBench(rootArg = process.env['BENCH_SIDECAR_A']): Promise<SummaryRow[]> {
  const rootA = rootArg ? resolve(rootArg) : undefined;
  const rows: SummaryRow[] = [];
  console.log(
    `\nSidecar (bench/sidecar.ts): GET through gatehouse serve --upstream, ${connections} connections${rootA ? `, A = ${rootA}, B = this build` : ''}`,
  );
  const rig = await startSidecarRig({ user: 'bench-user', groups: ['bench'] });
  const upPort = rig.upPort;
  try {
    const sidecars: Sidecar[] = [...(rootA ? [await rig.sidecar('A', [], rootA)] : []), await rig.sidecar('B', [], ROOT)];
    const run = async (s: (typeof sidecars)[number], ms: number): Promise<{ rps: number; cpuUs: number; r: LoopResult }> => {
      const pid = s.proc.pid!;
      const c0 = cpuSecondsOf(pid);
      const r = await closedLoop(
        { target: s.target, connections, warmupMs: 300, durationMs: ms, maxRequests: 10_000_000 },
        { next: () => ({ method: 'GET', path: PATH }) },
      );
      const cpu = cpuSecondsOf(pid) - c0;
      if (r.errors > 0 || Object.keys(r.statuses).some((k) => k !== '200')) throw new Error(`${s.name}: ${JSON.stringify(r.statuses)}, ${r.errors} errors`);
      // The CPU counted includes the warm-up's requests: per request over all of them.
      return { rps: r.requests / r.seconds, cpuUs: (cpu * 1e6) / (r.requests * (1 + 300 / ms)), r };
    };
    // Warm both (JIT, the cached SubjectAccessReview, the pools).
    for (const s of sidecars) await run(s, 1000);
    const got = new Map<string, { rps: number[]; cpu: number[] }>(sidecars.map((s) => [s.name, { rps: [], cpu: [] }]));
    for (let i = 0; i < rounds; i++) {
      const order = i % 2 === 0 ? sidecars : [...sidecars].reverse();
      const line: string[] = [];
      for (const s of order) {
        const m = await run(s, windowMs);
        got.get(s.name)!.rps.push(m.rps);
        got.get(s.name)!.cpu.push(m.cpuUs);
        line.push(`${s.name} ${Math.round(m.rps)} req/s ${m.cpuUs.toFixed(0)} µs CPU/req p50 ${m.r.latency.p50.toFixed(2)} ms`);
      }
      console.log(`round ${i + 1}: ${line.join(' | ')}`);
    }
    // Direct to the upstream: the floor (plain HTTP, no TLS, so the ratio shows what the sidecar adds, TLS included).
    const direct = await directRate(upPort, windowMs);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [name, v] of got) console.log(`${name}: median ${Math.round(median(v.rps))} req/s, ${median(v.cpu).toFixed(0)} µs sidecar CPU per request`);
    console.log(`upstream direct (plain HTTP, ${connections} connections, node:http client): ${Math.round(direct)} req/s`);
    const b = got.get('B')!;
    const a = got.get('A');
    const row = (name: string, value: number, unit: string, base: number | undefined): SummaryRow => ({
      name,
      value,
      unit,
      baseline: base ?? null,
      ratio: base ? value / base : null,
      target: '-',
      met: null,
    });
    rows.push(
      row(`sidecar GET (req/s, ${connections} conns)`, median(b.rps), 'req/s', a && median(a.rps)),
      row('sidecar CPU per GET', median(b.cpu), 'µs', a && median(a.cpu)),
    );
    if (a) console.log(`B/A: req/s ${(median(b.rps) / median(a.rps)).toFixed(3)}, CPU per request ${(median(b.cpu) / median(a.cpu)).toFixed(3)}`);
  } finally {
    await rig.close();
  }
  addRows(rows);
  return rows;
}

/** The upstream alone, over keep-alive node:http connections. */
async function directRate(port: number, ms: number): Promise<number> {
  const { Agent } = await import('node:http');
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let n = 0;
  const until = Date.now() + ms;
  const loop = async (): Promise<void> => {
    while (Date.now() < until) {
      await new Promise<void>((res, rej) => {
        const r = request({ host: '127.0.0.1', port, path: PATH, agent }, (resp) => {
          resp.resume();
          resp.on('end', () => {
            n++;
            res();
          });
        });
        r.on('error', rej);
        r.end();
      });
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: connections }, loop));
  agent.destroy();
  return n / ((Date.now() - t0) / 1000);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runSidecarBench(process.argv[2] ?? process.env['BENCH_SIDECAR_A']);
