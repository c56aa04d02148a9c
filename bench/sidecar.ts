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
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCa, generateClientCert, generateServingCert } from '../certs/pki.js';
import { closedLoop, type LoopResult, type Target } from './rawclient.js';
import { cpuSecondsOf, freePort } from './procs.js';
import { addRows, type SummaryRow } from './summary.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env['SIDECAR_ROUNDS'] ?? 4);
const windowMs = Number(process.env['SIDECAR_MS'] ?? 2000);
const connections = Number(process.env['SIDECAR_CONNECTIONS'] ?? 50);
const PATH = '/api/v1/items';

/** The child: a plain HTTP upstream answering a small JSON body, and an HTTPS SubjectAccessReview answerer that allows. */
const CHILD = `
const http = require('node:http'), https = require('node:https');
const [upPort, sarPort, cert, key] = [process.argv[1], process.argv[2], process.env.SAR_CERT, process.env.SAR_KEY];
const body = JSON.stringify({ kind: 'ItemList', items: [{ name: 'a', value: 'x'.repeat(200) }] });
http.createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }).listen(Number(upPort), '127.0.0.1');
https.createServer({ cert, key }, (req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c));
  req.on('end', () => { const r = JSON.parse(Buffer.concat(chunks).toString()); r.status = { allowed: true }; res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(r)); });
}).listen(Number(sarPort), '127.0.0.1', () => process.send && process.send('up'));
`;

function started(p: ChildProcess, what: string, pattern: RegExp): Promise<void> {
  return new Promise((res, rej) => {
    let out = '';
    const on = (c: Buffer) => {
      out += c.toString();
      if (pattern.test(out)) res();
    };
    p.stdout?.on('data', on);
    p.stderr?.on('data', (c: Buffer) => (out += c.toString()));
    p.once('exit', (code) => rej(new Error(`${what} exited (${code}): ${out}`)));
  });
}

export async function runSidecarBench(rootArg = process.env['BENCH_SIDECAR_A']): Promise<SummaryRow[]> {
  const rootA = rootArg ? resolve(rootArg) : undefined;
  const rows: SummaryRow[] = [];
  console.log(
    `\nSidecar (bench/sidecar.ts): GET through gatehouse serve --upstream, ${connections} connections${rootA ? `, A = ${rootA}, B = this build` : ''}`,
  );
  const dir = await mkdtemp(join(tmpdir(), 'gh-bench-sidecar-'));
  const ca = generateCa('bench-sidecar-ca');
  const serving = generateServingCert(ca, { commonName: 'localhost' });
  const client = generateClientCert(ca, { user: 'bench-user', groups: ['bench'] });
  const files = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), kubeconfig: join(dir, 'sar.kubeconfig') };
  const [upPort, sarPort] = [await freePort(), await freePort()];
  await Promise.all([writeFile(files.ca, ca.certPem), writeFile(files.cert, serving.certPem), writeFile(files.key, serving.keyPem)]);
  await writeFile(
    files.kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${sarPort}/`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
      users: [{ name: 'u', user: {} }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  const children: ChildProcess[] = [];
  const child = spawn(process.execPath, ['-e', CHILD, String(upPort), String(sarPort)], {
    env: { ...process.env, SAR_CERT: serving.certPem, SAR_KEY: serving.keyPem },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  await new Promise((r) => child.once('message', r));

  const sidecar = async (root: string, name: string): Promise<{ name: string; proc: ChildProcess; target: Target }> => {
    const port = await freePort();
    const proc = spawn(
      process.execPath,
      [
        join(root, 'bin', 'gatehouse.js'),
        'serve',
        `--upstream=http://127.0.0.1:${upPort}/`,
        `--secure-port=${port}`,
        `--data-dir=${join(dir, name)}`,
        `--tls-cert-file=${files.cert}`,
        `--tls-private-key-file=${files.key}`,
        `--client-ca-file=${files.ca}`,
        `--authentication-token-webhook-config-file=${files.kubeconfig}`,
        `--authorization-webhook-config-file=${files.kubeconfig}`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
    );
    children.push(proc);
    await started(proc, `sidecar ${name}`, /sidecar is serving/);
    return { name, proc, target: { port, ca: ca.certPem, cert: client.certPem, key: client.keyPem } };
  };
  try {
    const sidecars = [...(rootA ? [await sidecar(rootA, 'A')] : []), await sidecar(ROOT, 'B')];
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
    for (const c of children) c.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
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
