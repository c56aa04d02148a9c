// Forward-auth and sidecar-latency figures (`BENCH_ONLY=forwardauth`):
//
// - forward-auth decisions per second (nginx's contract: X-Original-Method,
//   X-Original-URI, a bearer token; the proxy trusted by its address) on a
//   sidecar whose TokenReview and SubjectAccessReview answers are cached,
//   and on one with both caches off — kube-rbac-proxy's published behaviour
//   for an uncached request: one TokenReview and one SubjectAccessReview
//   each — beside a bare `node:https` server answering the same 200 with the
//   same headers (same certificate, `requestCert` against the same CA);
//   mirrored windows (bare, cached, uncached, uncached, cached, bare).
// - the p99 latency the sidecar adds to a GET on a cached decision: one
//   connection through the sidecar to a plain HTTP upstream, beside one
//   connection to the bare server answering the same body over TLS.
//
// Targets: cached forward auth ≥ 60% of the bare answer; p99 added ≤ 1 ms.
// The reviews are answered by a child process (an HTTPS server that allows
// every TokenReview as bench-user and every SubjectAccessReview); the
// sidecars are `bin/gatehouse.js serve --upstream=…` processes from dist/.
// Knobs: FA_MS (measured window, 2000), FA_CONNECTIONS (50).
import { fileURLToPath } from 'node:url';
import { closedLoop, type LoopResult, type Request, type Target } from './rawclient.js';
import { cpuSecondsOf } from './procs.js';
import { startSidecarRig } from './sidecarrig.js';
import { recordRow } from './summary.js';

const windowMs = Number(process.env['FA_MS'] ?? 2000);
const connections = Number(process.env['FA_CONNECTIONS'] ?? 50);
const TOKEN = 'bench-token-0123456789abcdef';
const FA: Request = {
  method: 'GET',
  path: '/gatehouse/forward-auth',
  headers: { 'X-Original-Method': 'GET', 'X-Original-URI': '/api/v1/items?limit=10', Authorization: `Bearer ${TOKEN}` },
};
const ITEMS: Request = { method: 'GET', path: '/api/v1/items', headers: { Authorization: `Bearer ${TOKEN}` } };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runForwardAuthBench(): Promise<void> {
  console.log(`\nForward auth (bench/forwardauth.ts): nginx's contract, ${connections} connections; the sidecar's added p99 on a cached decision`);
  const rig = await startSidecarRig({ user: 'bench-proxy' });
  const sidecar = (name: string, extra: string[]) => rig.sidecar(name, ['--forward-auth-trusted-addresses=127.0.0.1', ...extra]);

  const run = async (t: Target, req: Request, conns: number, ms: number, pid?: number): Promise<{ rps: number; cpuUs: number; r: LoopResult }> => {
    const c0 = pid ? cpuSecondsOf(pid) : 0;
    const r = await closedLoop({ target: t, connections: conns, warmupMs: 300, durationMs: ms, maxRequests: 10_000_000 }, { next: () => req });
    const cpu = pid ? cpuSecondsOf(pid) - c0 : 0;
    if (r.errors > 0 || Object.keys(r.statuses).some((k) => k !== '200'))
      throw new Error(`${req.path} on ${t.port}: ${JSON.stringify(r.statuses)}, ${r.errors} errors`);
    return { rps: r.requests / r.seconds, cpuUs: (cpu * 1e6) / (r.requests * (1 + 300 / ms)), r };
  };

  try {
    const cached = await sidecar('cached', []);
    const withUncached = process.env['FA_UNCACHED'] !== '0';
    const uncached = withUncached
      ? await sidecar('uncached', ['--authentication-token-webhook-cache-ttl=0s', '--authorization-webhook-cache-authorized-ttl=0s'])
      : undefined;
    // The floors (bench/fafloor.mjs), each in its own process so its CPU per request is read too.
    const bare = { ...(await rig.floor('https')), name: 'bare' };
    const floors = [await rig.floor('h2compat'), await rig.floor('h2compat-async')];
    const order = [bare, ...floors, cached, ...(uncached ? [uncached] : [])];
    for (const s of order) await run(s.target, FA, connections, 1000, s.pid || undefined);
    const got = new Map<string, number[]>(order.map((s) => [s.name, []]));
    const cpu = new Map<string, number[]>(order.map((s) => [s.name, []]));
    for (const round of [order, [...order].reverse()]) {
      const line: string[] = [];
      for (const s of round) {
        const m = await run(s.target, FA, connections, windowMs, s.pid || undefined);
        got.get(s.name)!.push(m.rps);
        cpu.get(s.name)!.push(m.cpuUs);
        line.push(`${s.name} ${Math.round(m.rps)} req/s${s.pid ? ` ${m.cpuUs.toFixed(0)} µs CPU/req` : ''} p99 ${m.r.latency.p99.toFixed(2)} ms`);
      }
      console.log(`forward auth: ${line.join(' | ')}`);
    }
    const [b, c] = [median(got.get('bare')!), median(got.get('cached')!)];
    recordRow({ name: 'forward auth, cached decision', value: c, unit: 'req/s', baseline: b, target: '≥ 60% of bare node:https', atLeast: 0.6 });
    if (uncached)
      recordRow({ name: 'forward auth, uncached (TokenReview + SAR each)', value: median(got.get('uncached')!), unit: 'req/s', baseline: b, target: '-' });
    for (const f of floors) {
      const r = median(got.get(f.name)!);
      recordRow({ name: `forward auth floor: ${f.name} (bench/fafloor.mjs)`, value: r, unit: 'req/s', baseline: b, target: 'reference' });
    }
    const cpuLine = order.map((s) => `${s.name} ${median(cpu.get(s.name)!).toFixed(1)}`).join(' | ');
    console.log(`server CPU µs per request (medians): ${cpuLine}`);
    if (process.env['FA_RATES_ONLY']) return;

    // One connection, so latency is the request's own: the sidecar in front of plain HTTP, beside the bare TLS answer.
    await run(cached.target, ITEMS, 1, 1000);
    const p99 = { sidecar: [] as number[], bare: [] as number[] };
    const p50 = { sidecar: [] as number[], bare: [] as number[] };
    for (const [first, second] of [
      ['sidecar', 'bare'],
      ['bare', 'sidecar'],
    ] as const) {
      for (const which of [first, second]) {
        const m = await run(which === 'sidecar' ? cached.target : bare.target, ITEMS, 1, windowMs);
        p99[which].push(m.r.latency.p99);
        p50[which].push(m.r.latency.p50);
      }
    }
    const added = median(p99.sidecar) - median(p99.bare);
    console.log(
      `GET, 1 connection: sidecar p50 ${median(p50.sidecar).toFixed(3)} / p99 ${median(p99.sidecar).toFixed(3)} ms, bare node:https p50 ${median(p50.bare).toFixed(3)} / p99 ${median(p99.bare).toFixed(3)} ms, p99 added ${added.toFixed(3)} ms`,
    );
    recordRow({ name: 'sidecar p99 added, cached decision', value: added, unit: 'ms', target: '≤ 1 ms', atMost: 1 });
  } finally {
    await rig.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runForwardAuthBench();
