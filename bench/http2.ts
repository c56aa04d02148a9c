// HTTP/2 figures: GET of one ConfigMap over HTTP/2 through
// Gatehouse beside a bare node:http2 server with the same certificate and
// client-certificate request that answers a fixed JSON body: the gap is what
// Gatehouse adds per request on HTTP/2 (target: Gatehouse ≥ 60% of the bare
// server's rate, as HTTP/1.1 is compared with bare node:https).
//
// Processes (bench/procs.ts): Gatehouse (bench/server.ts, memory store) and the
// bare server (this file, `bare` mode) on CPU 0, the load generator (this file,
// `load` mode) on CPU 1: H2_SESSIONS connections, each keeping H2_STREAMS
// requests in flight (closed loop), measured in the order bare, Gatehouse,
// Gatehouse, bare so the machine's drift lands on both. BENCH_HTTP2=0 skips the
// section in run.ts; knobs BENCH_DURATION_MS, BENCH_WARMUP_MS, BENCH_CPU_PROF.
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, createSecureServer, type ClientHttp2Session } from 'node:http2';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Admin } from './admin.js';
import { cpuSecondsOf, freePort, placement, serveCommands, startChild, type Child, serverTlsArgs } from './procs.js';
import { recordRow } from './summary.js';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const PROF = process.env['BENCH_CPU_PROF'] || undefined;
const SESSIONS = 4;
const STREAMS = 16;
const PATH = '/api/v1/namespaces/bench/configmaps/c1';

interface Tls {
  ca: string;
  cert: string;
  key: string;
}
interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
}

// ---------------------------------------------------------------- bare server

function bareMode([port, cert, key, ca]: string[]): void {
  const body = Buffer.from(JSON.stringify({ kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'c1', namespace: 'bench' }, data: { a: 'b' } }));
  const server = createSecureServer(
    {
      cert: readFileSync(cert!),
      key: readFileSync(key!),
      ca: readFileSync(ca!),
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
      settings: { maxConcurrentStreams: 1000 },
    },
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    },
  );
  server.listen(Number(port), '127.0.0.1', () => serveCommands({}));
}

// ---------------------------------------------------------------- load generator

function open(port: number, tls: Tls): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const s = connect(`https://127.0.0.1:${port}`, { ...tls, servername: 'localhost' });
    s.once('remoteSettings', () => resolve(s));
    s.once('error', reject);
  });
}

/** Closed loop: every session keeps STREAMS requests in flight; counts answers completed within the window. */
async function loadRun(a: { port: number; tls: Tls; warmupMs: number; durationMs: number }): Promise<LoadResult> {
  const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => open(a.port, a.tls)));
  const start = performance.now();
  const from = start + a.warmupMs;
  const until = from + a.durationMs;
  let requests = 0;
  let errors = 0;
  const one = (s: ClientHttp2Session): Promise<void> =>
    new Promise((resolve) => {
      const st = s.request({ ':path': PATH, accept: 'application/json' });
      let status = 0;
      st.on('response', (h) => {
        status = Number(h[':status']);
      });
      st.on('data', () => undefined);
      st.on('end', () => {
        const now = performance.now();
        if (now >= from && now < until) {
          if (status === 200) requests++;
          else errors++;
        }
        resolve();
      });
      st.on('error', () => {
        errors++;
        resolve();
      });
      st.end();
    });
  const lane = async (s: ClientHttp2Session): Promise<void> => {
    while (performance.now() < until) await one(s);
  };
  await Promise.all(sessions.flatMap((s) => Array.from({ length: STREAMS }, () => lane(s))));
  for (const s of sessions) s.close();
  return { requests, errors, seconds: a.durationMs / 1000 };
}

// ---------------------------------------------------------------- orchestrator

export async function runHttp2Bench(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-h2-'));
  const children: Child[] = [];
  const self = fileURLToPath(import.meta.url);
  try {
    const ghPort = await freePort();
    const ghDir = join(root, 'gatehouse');
    const gh = await startChild(
      'h2-gatehouse',
      './server.ts',
      ['--secure-port', String(ghPort), '--data-dir', ghDir, '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow'],
      0,
    );
    children.push(gh);
    const pki = join(ghDir, 'pki');
    const [ca, cert, key] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map((f) => readFile(join(pki, f), 'utf8')));
    const tls: Tls = { ca: ca!, cert: cert!, key: key! };
    const admin = new Admin(ghPort, { ...tls });
    await admin.ready();
    await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    await admin.must('POST', '/api/v1/namespaces/bench/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c1', namespace: 'bench' },
      data: { a: 'b' },
    });
    admin.close();
    const barePort = await freePort();
    const bare = await startChild('h2-bare', self, ['bare', String(barePort), ...serverTlsArgs(pki)], 0);
    children.push(bare);
    const load = await startChild('h2-load', self, ['load'], 1);
    children.push(load);

    const measure = async (server: Child, port: number): Promise<{ rps: number; cpuUs: number; errors: number }> => {
      const t0 = performance.now();
      const c0 = cpuSecondsOf(server.pid);
      const r = await load.call<LoadResult>('run', { port, tls, warmupMs: WARMUP, durationMs: DURATION });
      const wall = (performance.now() - t0) / 1000;
      // CPU over the whole call (warm-up included) spread over the requests of the whole call, estimated from the window's rate.
      const rps = r.requests / r.seconds;
      const cpu = (cpuSecondsOf(server.pid) - c0) / wall;
      return { rps, cpuUs: (cpu * 1e6) / rps, errors: r.errors };
    };
    const b1 = await measure(bare, barePort);
    // BENCH_CPU_PROF=<dir>: a V8 CPU profile of Gatehouse over its two measurements (http2-get.cpuprofile).
    if (PROF) {
      await mkdir(PROF, { recursive: true });
      await gh.call('profStart');
    }
    const g1 = await measure(gh, ghPort);
    const g2 = await measure(gh, ghPort);
    if (PROF) await gh.call('profStop', { file: join(PROF, 'http2-get.cpuprofile') });
    const b2 = await measure(bare, barePort);
    const bare2 = (b1.rps + b2.rps) / 2;
    const gate2 = (g1.rps + g2.rps) / 2;
    const f = (n: number) => Math.round(n).toLocaleString('en-US');
    recordRow({ name: 'HTTP/2 GET vs bare node:http2', value: gate2, unit: 'req/s', baseline: bare2, target: '≥ 60% of bare', atLeast: 0.6 });
    process.stdout.write(
      [
        '',
        `=== HTTP/2 (bench/http2.ts; ${placement()}) ===`,
        `GET one object over HTTP/2, ${SESSIONS} connections × ${STREAMS} streams in flight`,
        `  bare node:http2 (fixed JSON)   ${f(b1.rps)} / ${f(b2.rps)} req/s, server CPU ${b1.cpuUs.toFixed(0)} / ${b2.cpuUs.toFixed(0)} µs per request, errors ${b1.errors + b2.errors}`,
        `  gatehouse GET configmap        ${f(g1.rps)} / ${f(g2.rps)} req/s, server CPU ${g1.cpuUs.toFixed(0)} / ${g2.cpuUs.toFixed(0)} µs per request, errors ${g1.errors + g2.errors}`,
        `  gatehouse / bare               ${((100 * gate2) / bare2).toFixed(1)}%   (target ≥ 60%)`,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

// Child modes when run as a script by startChild; the orchestrator when run directly.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === 'bare') bareMode(rest);
  else if (mode === 'load') serveCommands({ run: loadRun });
  else await runHttp2Bench();
}
