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
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCa, generateClientCert, generateServingCert } from '../certs/pki.js';
import { closedLoop, type LoopResult, type Request, type Target } from './rawclient.js';
import { cpuSecondsOf, freePort } from './procs.js';
import { recordRow } from './summary.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const windowMs = Number(process.env['FA_MS'] ?? 2000);
const connections = Number(process.env['FA_CONNECTIONS'] ?? 50);
const TOKEN = 'bench-token-0123456789abcdef';
const FA: Request = {
  method: 'GET',
  path: '/gatehouse/forward-auth',
  headers: { 'X-Original-Method': 'GET', 'X-Original-URI': '/api/v1/items?limit=10', Authorization: `Bearer ${TOKEN}` },
};
const ITEMS: Request = { method: 'GET', path: '/api/v1/items', headers: { Authorization: `Bearer ${TOKEN}` } };

/**
 * The child: the plain HTTP upstream; the review answerer (TokenReview: bench-user in bench; SubjectAccessReview:
 * allowed); the bare HTTPS server answering forward auth's allowed headers, and the upstream's body.
 */
const CHILD = `
const http = require('node:http'), https = require('node:https');
const [upPort, sarPort, barePort] = process.argv.slice(1).map(Number);
const { SAR_CERT: cert, SAR_KEY: key, CA: ca } = process.env;
const body = JSON.stringify({ kind: 'ItemList', items: [{ name: 'a', value: 'x'.repeat(200) }] });
const items = (req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); };
http.createServer(items).listen(upPort, '127.0.0.1');
https.createServer({ cert, key }, (req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const r = JSON.parse(Buffer.concat(chunks).toString());
    r.status = r.kind === 'TokenReview' ? { authenticated: true, user: { username: 'bench-user', groups: ['bench'] } } : { allowed: true };
    res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(r));
  });
}).listen(sarPort, '127.0.0.1');
const allowed = ['X-Remote-User', 'bench-user', 'X-Remote-Group', 'bench', 'X-Remote-Group', 'system:authenticated',
  'X-Auth-Request-User', 'bench-user', 'X-Auth-Request-Groups', 'bench,system:authenticated', 'Cache-Control', 'no-cache, private', 'Content-Length', '0'];
https.createServer({ cert, key, ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
  if (req.url.startsWith('/gatehouse/forward-auth')) { req.resume(); res.writeHead(200, allowed); res.end(); } else items(req, res);
}).listen(barePort, '127.0.0.1', () => process.send && process.send('up'));
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runForwardAuthBench(): Promise<void> {
  console.log(`\nForward auth (bench/forwardauth.ts): nginx's contract, ${connections} connections; the sidecar's added p99 on a cached decision`);
  const dir = await mkdtemp(join(tmpdir(), 'gh-bench-fa-'));
  const ca = generateCa('bench-fa-ca');
  const serving = generateServingCert(ca, { commonName: 'localhost' });
  const client = generateClientCert(ca, { user: 'bench-proxy' });
  const files = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), kubeconfig: join(dir, 'reviews.kubeconfig') };
  const [upPort, sarPort, barePort] = [await freePort(), await freePort(), await freePort()];
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
  const child = spawn(process.execPath, ['-e', CHILD, String(upPort), String(sarPort), String(barePort)], {
    env: { ...process.env, SAR_CERT: serving.certPem, SAR_KEY: serving.keyPem, CA: ca.certPem },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  await new Promise((r) => child.once('message', r));
  const target = (port: number): Target => ({ port, ca: ca.certPem, cert: client.certPem, key: client.keyPem });

  const sidecar = async (name: string, extra: string[]): Promise<{ name: string; pid: number; target: Target }> => {
    const port = await freePort();
    const proc = spawn(
      process.execPath,
      [
        join(ROOT, 'bin', 'gatehouse.js'),
        'serve',
        `--upstream=http://127.0.0.1:${upPort}/`,
        `--secure-port=${port}`,
        `--data-dir=${join(dir, name)}`,
        `--tls-cert-file=${files.cert}`,
        `--tls-private-key-file=${files.key}`,
        `--client-ca-file=${files.ca}`,
        `--authentication-token-webhook-config-file=${files.kubeconfig}`,
        `--authorization-webhook-config-file=${files.kubeconfig}`,
        '--forward-auth-trusted-addresses=127.0.0.1',
        ...extra,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'production' } },
    );
    children.push(proc);
    await started(proc, `sidecar ${name}`, /sidecar is serving/);
    return { name, pid: proc.pid!, target: target(port) };
  };

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
    const uncached = await sidecar('uncached', ['--authentication-token-webhook-cache-ttl=0s', '--authorization-webhook-cache-authorized-ttl=0s']);
    const bare = { name: 'bare', pid: 0, target: target(barePort) };
    const order = [bare, cached, uncached];
    for (const s of order) await run(s.target, FA, connections, 1000, s.pid || undefined);
    const got = new Map<string, number[]>(order.map((s) => [s.name, []]));
    for (const round of [order, [...order].reverse()]) {
      const line: string[] = [];
      for (const s of round) {
        const m = await run(s.target, FA, connections, windowMs, s.pid || undefined);
        got.get(s.name)!.push(m.rps);
        line.push(`${s.name} ${Math.round(m.rps)} req/s${s.pid ? ` ${m.cpuUs.toFixed(0)} µs CPU/req` : ''} p99 ${m.r.latency.p99.toFixed(2)} ms`);
      }
      console.log(`forward auth: ${line.join(' | ')}`);
    }
    const [b, c, u] = [median(got.get('bare')!), median(got.get('cached')!), median(got.get('uncached')!)];
    recordRow({ name: 'forward auth, cached decision', value: c, unit: 'req/s', baseline: b, target: '≥ 60% of bare node:https', atLeast: 0.6 });
    recordRow({ name: 'forward auth, uncached (TokenReview + SAR each)', value: u, unit: 'req/s', baseline: b, target: '-' });

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
    for (const ch of children) ch.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runForwardAuthBench();
