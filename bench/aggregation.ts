// Aggregation figures: GET and watch of a sample-backend Widget
// through the gateway (authentication, authorization, APIService routing, the
// aggregation proxy), beside the same request sent to the backend directly
// and beside a bare Node proxy hop (HTTPS in, keep-alive node:https agent out
// to the backend, nothing else) and a bare undici hop (the same with the
// gateway's own client: the floor of the "≥ 150% of a bare node:https hop"
// target), all in one run.
//
// Processes (bench/procs.ts): the gateway (bench/server.ts, memory store), the
// sample backend and the bare hop (this file, by mode) pinned to CPU 0, the
// load generator (this file, `loadgen` mode) to CPU 1. The backend trusts the
// front-proxy client certificate, so the direct and bare-hop requests carry it
// (and X-Remote-User/-Group) — what the gateway sends.
//
// GET: 50 keep-alive connections, closed loop (req/s), then 1 connection
// (latency without queueing: the added-latency figures), each path run twice
// in mirrored order (direct, hop, gateway, gateway, hop, direct) so drift
// lands on all three; rates are pooled, percentiles averaged over the two
// runs. Targets: proxied GET ≥ 50% of direct and ≥ 150% of the
// bare hop at 50 connections; at 1 connection, ≤ 0.3 ms p50 and ≤ 1 ms p99
// added over direct. `run()` prints the section and returns its summary
// rows ({ name, value, unit, baseline, ratio, target, met }). Watch: 100 watches opened
// through each path; a writer creates widgets at the backend directly (4
// connections); latency from the write's acknowledgement to the event's
// arrival, per path. Knobs: BENCH_DURATION_MS, BENCH_WARMUP_MS,
// BENCH_AGG_WATCHERS (default 100). BENCH_AGGREGATION=0 skips the section in run.ts.
// No round can hang the section: a connection (or watch writer) still waiting
// for an answer 15 s after its window ends the round for itself and is printed
// as STALLED; a connection the far side closed counts as an error.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent as HttpsAgent, createServer, request as httpsRequest } from 'node:https';
import { Admin } from './admin.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect, type TLSSocket } from 'node:tls';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort, placement, serveCommands, startChild, type Child } from './procs.js';
import { Samples, type Percentiles } from './stats.js';
import { addRows, type SummaryRow } from './summary.js';
import { startBareH2Hop, startBareUndiciHop } from './barehop.mjs';

const DURATION = Number(process.env['BENCH_DURATION_MS'] ?? 5000);
const WARMUP = Number(process.env['BENCH_WARMUP_MS'] ?? 1000);
const WATCHERS = Number(process.env['BENCH_AGG_WATCHERS'] ?? 100);
/** BENCH_AGG_ONLY=watch: the watch rounds of the undici hop and both gateways alone, BENCH_AGG_WATCH_ROUNDS (1) times each. */
const WATCH_ONLY = process.env['BENCH_AGG_ONLY'] === 'watch';
const WATCH_ROUNDS = Number(process.env['BENCH_AGG_WATCH_ROUNDS'] ?? 1);
const CONNECTIONS = 50;
/** How long past its window a round waits for its last answers before it ends as stalled. */
const STALL_MS = 15_000;
const NS = 'bench';
const SVC_HOST = 'sample-api.gatehouse-samples.svc';
const WIDGETS = `/apis/samples.gatehouse.dev/v1/namespaces/${NS}/widgets`;

interface Tls {
  ca: string;
  cert: string;
  key: string;
  servername: string;
}
interface Target extends Tls {
  port: number;
  headers: Record<string, string>;
}
interface GetResult {
  requests: number;
  errors: number;
  /** Connections still waiting for an answer STALL_MS after the window closed. */
  stalled: number;
  seconds: number;
  latency: Percentiles;
  statuses: Record<string, number>;
}
interface WatchResult {
  /** Writers still waiting for an acknowledgement STALL_MS after the window closed. */
  stalledWriters: number;
  events: number;
  expected: number;
  latency: Percentiles;
  seconds: number;
}

// ---------------------------------------------------------------- load generator

function openTls(t: Target): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: t.port, ca: t.ca, cert: t.cert, key: t.key, servername: t.servername });
    s.once('secureConnect', () => {
      s.off('error', reject);
      s.setNoDelay(true);
      resolve(s);
    });
    s.once('error', reject);
  });
}

function encode(t: Target, method: string, path: string, body?: string): Buffer {
  let head = `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${t.port}\r\nAccept: application/json\r\nUser-Agent: gatehouse-bench\r\n`;
  for (const [k, v] of Object.entries(t.headers)) head += `${k}: ${v}\r\n`;
  if (body !== undefined) head += `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n`;
  return Buffer.from(`${head}\r\n${body ?? ''}`);
}

/** Reads responses off one socket: Content-Length or chunked bodies; calls back with the status. */
function responses(socket: TLSSocket, done: (status: number) => void): void {
  let buf: Buffer = Buffer.alloc(0);
  socket.on('data', (c: Buffer) => {
    buf = buf.length === 0 ? c : Buffer.concat([buf, c]);
    for (;;) {
      const he = buf.indexOf('\r\n\r\n');
      if (he < 0) return;
      const head = buf.toString('latin1', 0, he);
      const cl = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      let end: number;
      if (cl) end = he + 4 + Number(cl[1]);
      else {
        const z = buf.indexOf('\r\n0\r\n\r\n', he);
        if (z < 0) return;
        end = z + 7;
      }
      if (buf.length < end) return;
      buf = buf.subarray(end);
      done(Number(head.slice(9, 12)));
    }
  });
}

async function getLoop(a: { target: Target; path: string; connections: number }): Promise<GetResult> {
  const sockets = await Promise.all(Array.from({ length: a.connections }, () => openTls(a.target)));
  const req = encode(a.target, 'GET', a.path);
  const lat = new Samples();
  const statuses: Record<string, number> = {};
  let requests = 0,
    errors = 0,
    stalled = 0;
  const from = performance.now() + WARMUP;
  const until = from + DURATION;
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise<void>((resolve) => {
          let sentAt = 0;
          let over = false;
          const end = (): void => {
            if (over) return;
            over = true;
            clearTimeout(deadline);
            resolve();
          };
          // A connection whose answer never comes (or that the far side closed without an error) ends the round
          // for itself instead of holding it for ever: counted as stalled, or as an error.
          const deadline = setTimeout(
            () => {
              stalled++;
              end();
            },
            until + STALL_MS - performance.now(),
          );
          const send = () => {
            if (performance.now() > until) {
              end();
              return;
            }
            sentAt = performance.now();
            s.write(req);
          };
          responses(s, (status) => {
            const now = performance.now();
            if (now >= from && now <= until) {
              requests++;
              lat.add(now - sentAt);
              statuses[status] = (statuses[status] ?? 0) + 1;
              if (status >= 400) errors++;
            }
            send();
          });
          s.on('error', () => {
            if (!over) errors++;
            end();
          });
          s.on('close', () => {
            if (!over) errors++;
            end();
          });
          send();
        }),
    ),
  );
  for (const s of sockets) s.destroy();
  return { requests, errors, stalled, seconds: DURATION / 1000, latency: lat.summary(), statuses };
}

let watchRun = 0;
/** Opens `n` watches through `watchTarget`, then creates widgets at `writer` (4 connections) and times ack → arrival at every watcher. */
async function watchLoop(a: { watchTarget: Target; writer: Target; n: number }): Promise<WatchResult> {
  const run = ++watchRun;
  const marker = `"name":"a${run}-`;
  const ackAt = new Map<number, number>();
  const arrivals: Array<[number, number]> = [];
  const start = await (async () => {
    // The collection's resourceVersion, so each watch starts now.
    const s = await openTls(a.writer);
    const rv = await new Promise<string>((resolve) => {
      let text = '';
      s.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        const m = /"resourceVersion":"(\d+)"/.exec(text);
        if (m && text.includes('\r\n\r\n')) resolve(m[1]!);
      });
      s.write(encode(a.writer, 'GET', `${WIDGETS}?limit=1`));
    });
    s.destroy();
    return rv;
  })();
  const watches = await Promise.all(
    Array.from({ length: a.n }, async () => {
      const s = await openTls(a.watchTarget);
      let rest = '';
      s.on('data', (c: Buffer) => {
        const at = performance.now();
        // Without the chunked framing: a path relaying an HTTP/2 backend writes each DATA frame as a chunk, and a
        // frame need not end where an event does, so a chunk's size line can fall inside a name (JSON has no raw CR).
        const text = (rest + c.toString('latin1')).replace(/\r\n[0-9a-f]+\r\n/g, '');
        let pos = 0;
        for (;;) {
          const i = text.indexOf(marker, pos);
          if (i < 0) break;
          const j = text.indexOf('"', i + marker.length);
          if (j < 0) break;
          arrivals.push([Number(text.slice(i + marker.length, j)), at]);
          pos = j;
        }
        rest = text.slice(Math.max(pos, text.length - 64));
      });
      s.write(encode(a.watchTarget, 'GET', `${WIDGETS}?watch=1&resourceVersion=${start}`));
      return s;
    }),
  );
  await sleep(500);
  const writers = await Promise.all(Array.from({ length: 4 }, () => openTls(a.writer)));
  let seq = 0,
    stalledWriters = 0;
  const t0 = performance.now();
  const until = t0 + Math.min(DURATION, 3000);
  await Promise.all(
    writers.map(
      (s) =>
        new Promise<void>((resolve) => {
          let mine = 0;
          // A write never acknowledged ends this writer STALL_MS after the window rather than holding the round.
          const deadline = setTimeout(
            () => {
              stalledWriters++;
              resolve();
            },
            until + STALL_MS - performance.now(),
          );
          const send = () => {
            if (performance.now() > until) {
              clearTimeout(deadline);
              resolve();
              return;
            }
            mine = seq++;
            s.write(
              encode(
                a.writer,
                'POST',
                WIDGETS,
                JSON.stringify({ apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: `a${run}-${mine}` }, spec: { color: 'red' } }),
              ),
            );
          };
          responses(s, () => {
            ackAt.set(mine, performance.now());
            send();
          });
          s.on('error', () => resolve());
          s.on('close', () => {
            clearTimeout(deadline);
            resolve();
          });
          send();
        }),
    ),
  );
  const windowEnd = performance.now();
  // Drain: every acknowledged write's event at every watcher, or 1.5 s with no new arrival (STALL_MS at most), so
  // "missing" counts events that never came, not events still queued behind a saturated path when a fixed wait ended.
  const expected = ackAt.size * a.n;
  const drainUntil = performance.now() + STALL_MS;
  for (let seen = -1; arrivals.length < expected && arrivals.length !== seen && performance.now() < drainUntil;) {
    seen = arrivals.length;
    await sleep(1500);
  }
  for (const s of [...watches, ...writers]) s.destroy();
  // Events per second of the time they took to arrive: a path that queues them is not credited with the window's rate.
  const seconds = (Math.max(windowEnd, arrivals.length > 0 ? arrivals[arrivals.length - 1]![1] : 0) - t0) / 1000;
  const lat = new Samples();
  for (const [n, at] of arrivals) {
    const ack = ackAt.get(n);
    if (ack !== undefined) lat.add(Math.max(0, at - ack));
  }
  return { events: arrivals.length, expected, latency: lat.summary(), seconds, stalledWriters };
}

// ---------------------------------------------------------------- child modes

async function sampleBackendMode(args: string[]): Promise<void> {
  const { parseServeFlags } = await import('../gateway/config/flags.js');
  const { startBackendProcess } = await import('../gateway/backendprocess/start.js');
  const parsed = parseServeFlags(args);
  if ('error' in parsed) throw new Error(parsed.error);
  await startBackendProcess('sample-backend', parsed.options, (m) => {
    if (process.env['BENCH_SERVER_LOG']) process.stderr.write(`[sample] ${m}\n`);
  });
  serveCommands({});
}

/** The bare hop: HTTPS in, node:https keep-alive agent out (front-proxy client cert, backend CA), headers and body piped as they are. */
async function bareProxyMode([port, backendPort, certFile, keyFile, backendCaFile, clientCertFile, clientKeyFile]: string[]): Promise<void> {
  const [cert, key, ca, ccert, ckey] = await Promise.all(
    [certFile!, keyFile!, backendCaFile!, clientCertFile!, clientKeyFile!].map((f) => readFile(f, 'utf8')),
  );
  const agent = new HttpsAgent({ keepAlive: true, maxSockets: 256, ca, cert: ccert, key: ckey, servername: SVC_HOST });
  const server = createServer({ cert, key, keepAliveTimeout: 65_000 }, (req, res) => {
    const out = httpsRequest({ host: '127.0.0.1', port: Number(backendPort), method: req.method, path: req.url, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (req.url?.includes('watch=')) res.flushHeaders();
      up.pipe(res);
    });
    out.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    // A client gone before the answer's end (a closed watch) cuts the backend request, as the gateway does: else
    // the backend keeps serving the abandoned watch, and every later watch round pays for its events.
    res.on('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    req.pipe(out);
  });
  await new Promise<void>((r) => server.listen(Number(port), '127.0.0.1', r));
  serveCommands({});
}

/**
 * The floor of the "≥ 150% of a bare node:https hop" target: a hop that only
 * proxies, with the gateway's own client (an undici Agent, one pool per
 * origin, the legacy dispatch handler the gateway's proxy uses), nothing else:
 * headers passed as they are, the answer's raw headers and body relayed.
 */
async function bareUndiciMode([port, backendPort, certFile, keyFile, backendCaFile, clientCertFile, clientKeyFile]: string[]): Promise<void> {
  const [cert, key, ca, ccert, ckey] = await Promise.all(
    [certFile!, keyFile!, backendCaFile!, clientCertFile!, clientKeyFile!].map((f) => readFile(f, 'utf8')),
  );
  await startBareUndiciHop({ port: Number(port), cert, key, backend: { port: backendPort!, ca, cert: ccert, key: ckey, servername: SVC_HOST } });
  serveCommands({});
}

/** The floor of proxying to an HTTP/2 backend: HTTPS in, one node:http2 session out (barehop.mjs). */
async function bareH2Mode([port, backendPort, certFile, keyFile, backendCaFile, clientCertFile, clientKeyFile]: string[]): Promise<void> {
  const [cert, key, ca, ccert, ckey] = await Promise.all(
    [certFile!, keyFile!, backendCaFile!, clientCertFile!, clientKeyFile!].map((f) => readFile(f, 'utf8')),
  );
  await startBareH2Hop({ port: Number(port), cert, key, backend: { port: backendPort!, ca, cert: ccert, key: ckey, servername: SVC_HOST } });
  serveCommands({});
}

// ---------------------------------------------------------------- orchestrator

const ms = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)} ms` : '-');
const rate = (r: GetResult) => r.requests / r.seconds;
const pct = (x: number) => `${Math.round(100 * x)}%`;

/**
 * The load generator's answer for one round, or a clear error once it is overdue: its own deadlines end a stalled
 * round, so this fires only when the load generator itself is stuck (the section then ends with this message).
 */
function within<T>(p: Promise<T>, what: string): Promise<T> {
  const ms = WARMUP + DURATION + 2 * STALL_MS + 30_000;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`aggregation bench: ${what} gave no result within ${ms / 1000} s; the load generator is stuck`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/** Two runs of one path as one: requests and seconds added, percentiles averaged. */
function pool(rs: readonly GetResult[]): GetResult {
  const statuses: Record<string, number> = {};
  for (const r of rs) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const avg = (f: (r: GetResult) => number) => rs.reduce((a, r) => a + f(r), 0) / rs.length;
  return {
    requests: rs.reduce((a, r) => a + r.requests, 0),
    errors: rs.reduce((a, r) => a + r.errors, 0),
    stalled: rs.reduce((a, r) => a + r.stalled, 0),
    seconds: rs.reduce((a, r) => a + r.seconds, 0),
    latency: { p50: avg((r) => r.latency.p50), p99: avg((r) => r.latency.p99), max: Math.max(...rs.map((r) => r.latency.max)) },
    statuses,
  };
}

/** The `proxy` section of `npm run bench`. */
export function run(): Promise<SummaryRow[]> {
  return runAggregationBench();
}

export async function runAggregationBench(): Promise<SummaryRow[]> {
  const rows: SummaryRow[] = [];
  const self = fileURLToPath(import.meta.url);
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-bench-agg-'));
  const children: Child[] = [];
  const admins: Admin[] = [];
  try {
    process.stdout.write(
      `\n== Aggregation: GET and watch through the gateway to the sample backend, beside direct and a bare Node proxy hop ==\n${placement()}\n`,
    );
    const { generateCa, generateServingCert } = await import('../certs/pki.js');
    const ghPort = await freePort();
    const ghDir = join(root, 'gateway');
    const gateway = await startChild(
      'agg-gateway',
      './server.ts',
      ['--secure-port', String(ghPort), '--data-dir', ghDir, '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow'],
      0,
    );
    children.push(gateway);
    const pki = join(ghDir, 'pki');
    const rd = (f: string) => readFile(join(pki, f), 'utf8');
    const [ca, adminCert, adminKey, fpCert, fpKey] = await Promise.all(
      ['ca.crt', 'admin.crt', 'admin.key', 'front-proxy-client.crt', 'front-proxy-client.key'].map(rd),
    );
    // The same gateway kept on HTTP/1.1 to its backends (Go's switch, GODEBUG=http2client=0), presenting the first one's
    // front-proxy client certificate, which the backend trusts.
    const gh1Port = await freePort();
    const gh1Dir = join(root, 'gateway-h1');
    const gateway1 = await startChild(
      'agg-gateway-h1',
      './server.ts',
      [
        ...['--secure-port', String(gh1Port), '--data-dir', gh1Dir, '--storage-backend', 'memory', '--authorization-mode', 'AlwaysAllow'],
        ...['--proxy-client-cert-file', join(pki, 'front-proxy-client.crt'), '--proxy-client-key-file', join(pki, 'front-proxy-client.key')],
      ],
      0,
      [],
      { GODEBUG: 'http2client=0' },
    );
    children.push(gateway1);
    const rd1 = (f: string) => readFile(join(gh1Dir, 'pki', f), 'utf8');
    const [ca1, adminCert1, adminKey1] = await Promise.all(['ca.crt', 'admin.crt', 'admin.key'].map(rd1));
    const backendCa = generateCa('sample-bench-ca');
    const leaf = generateServingCert(backendCa, { commonName: SVC_HOST, hosts: [SVC_HOST] });
    const files = { cert: join(root, 'sample.crt'), key: join(root, 'sample.key'), ca: join(root, 'sample-ca.crt') };
    await Promise.all([writeFile(files.cert, leaf.certPem), writeFile(files.key, leaf.keyPem), writeFile(files.ca, backendCa.certPem)]);
    const bePort = await freePort();
    const backend = await startChild(
      'agg-sample',
      self,
      [
        'sample-backend',
        '--secure-port',
        String(bePort),
        '--data-dir',
        join(root, 'sample'),
        '--storage-backend',
        'memory',
        '--tls-cert-file',
        files.cert,
        '--tls-private-key-file',
        files.key,
        '--requestheader-client-ca-file',
        join(pki, 'front-proxy-ca.crt'),
        '--requestheader-allowed-names',
        'front-proxy-client',
        '--requestheader-username-headers',
        'X-Remote-User',
        '--requestheader-group-headers',
        'X-Remote-Group',
        '--requestheader-extra-headers-prefix',
        'X-Remote-Extra-',
      ],
      0,
    );
    children.push(backend);
    /** A bare hop of `mode` (bare-proxy, bare-undici, bare-h2) on CPU 0 in front of the backend, with the gateway's serving and front-proxy certificates. */
    const startHop = async (name: string, mode: string): Promise<[Child, number]> => {
      const port = await freePort();
      const certs = ['apiserver.crt', 'apiserver.key'].map((f) => join(pki, f));
      const client = ['front-proxy-client.crt', 'front-proxy-client.key'].map((f) => join(pki, f));
      const child = await startChild(name, self, [mode, String(port), String(bePort), ...certs, files.ca, ...client], 0);
      children.push(child);
      return [child, port];
    };
    const [hop, hopPort] = await startHop('agg-bare-hop', 'bare-proxy');
    const [undiciHop, undiciPort] = await startHop('agg-undici-hop', 'bare-undici');
    const [h2Hop, h2HopPort] = await startHop('agg-h2-hop', 'bare-h2');
    const load = await startChild('agg-loadgen', self, ['loadgen'], 1);
    children.push(load);

    const identity = { 'X-Remote-User': 'admin', 'X-Remote-Group': 'system:masters' };
    const viaGateway: Target = { port: ghPort, ca: ca!, cert: adminCert!, key: adminKey!, servername: 'localhost', headers: {} };
    const direct: Target = { port: bePort, ca: backendCa.certPem, cert: fpCert!, key: fpKey!, servername: SVC_HOST, headers: identity };
    const viaHop: Target = { port: hopPort, ca: ca!, cert: adminCert!, key: adminKey!, servername: 'localhost', headers: identity };
    const viaUndici: Target = { port: undiciPort, ca: ca!, cert: adminCert!, key: adminKey!, servername: 'localhost', headers: identity };
    const viaH2Hop: Target = { port: h2HopPort, ca: ca!, cert: adminCert!, key: adminKey!, servername: 'localhost', headers: identity };
    const viaGateway1: Target = { port: gh1Port, ca: ca1!, cert: adminCert1!, key: adminKey1!, servername: 'localhost', headers: {} };

    // Registration in each gateway: Service + EndpointSlice + APIService; wait until a create passes through.
    for (const [port, via] of [
      [ghPort, viaGateway],
      [gh1Port, viaGateway1],
    ] as const) {
      const admin = new Admin(port, via);
      admins.push(admin);
      await admin.ready();
      const sns = 'gatehouse-samples';
      await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: sns } });
      await admin.must('POST', `/api/v1/namespaces/${sns}/services`, {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'sample-api', namespace: sns },
        spec: { ports: [{ name: 'https', port: 443, targetPort: bePort }] },
      });
      await admin.must('POST', `/apis/discovery.k8s.io/v1/namespaces/${sns}/endpointslices`, {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'sample-api-1', namespace: sns, labels: { 'kubernetes.io/service-name': 'sample-api' } },
        addressType: 'IPv4',
        ports: [{ name: 'https', port: bePort, protocol: 'TCP' }],
        endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
      });
      await admin.must('POST', '/apis/apiregistration.k8s.io/v1/apiservices', {
        apiVersion: 'apiregistration.k8s.io/v1',
        kind: 'APIService',
        metadata: { name: 'v1.samples.gatehouse.dev' },
        spec: {
          group: 'samples.gatehouse.dev',
          version: 'v1',
          service: { namespace: sns, name: 'sample-api', port: 443 },
          caBundle: backendCa.certPem && Buffer.from(backendCa.certPem).toString('base64'),
          groupPriorityMinimum: 1000,
          versionPriority: 15,
        },
      });
      let got = 0;
      for (let i = 0; i < 300 && got !== 201 && got !== 409; i++) {
        got = (await admin.call('POST', WIDGETS, { apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'w0' }, spec: { color: 'red' } }))
          .status;
        if (got !== 201 && got !== 409) await sleep(100);
      }
      if (got !== 201 && got !== 409) throw new Error(`the sample backend never became reachable through the gateway (last status ${got})`);
    }

    const path = `${WIDGETS}/w0`;
    const paths = [
      ['direct', direct],
      ['bare hop', viaHop],
      ['undici hop', viaUndici],
      ['h2 hop', viaH2Hop],
      ['gateway h1', viaGateway1],
      ['gateway', viaGateway],
    ] as const;
    const mirrored = [...paths, ...[...paths].reverse()];
    // CPU seconds of the processes on CPU 0 per request, by path: steadier than req/s on a shared machine.
    const procOf: Record<string, Child[]> = {
      direct: [backend],
      'bare hop': [hop, backend],
      'undici hop': [undiciHop, backend],
      'h2 hop': [h2Hop, backend],
      'gateway h1': [gateway1, backend],
      gateway: [gateway, backend],
    };
    const cpuPerRequest: Record<string, { cpu: number; own: number; requests: number }> = {};
    const measure = async (connections: number): Promise<Record<string, GetResult>> => {
      const runs: Record<string, GetResult[]> = {};
      for (const [what, t] of mirrored) {
        const c0 = procOf[what]!.map((c) => c.cpuSeconds());
        const r = await within(load.call<GetResult>('get', { target: t, path, connections }), `GET ${what}, ${connections} connection(s)`);
        if (connections === CONNECTIONS) {
          // The warm-up's requests are not counted: its share of the CPU is taken off in proportion.
          const scale = DURATION / (DURATION + WARMUP);
          const cpu = procOf[what]!.reduce((a, c, i) => a + c.cpuSeconds() - c0[i]!, 0) * scale;
          const acc = (cpuPerRequest[what] ??= { cpu: 0, own: 0, requests: 0 });
          acc.cpu += cpu;
          // The hop's (or gateway's) process alone, without the backend: the floors compare protocols the backend weighs differently.
          acc.own += (procOf[what]![0]!.cpuSeconds() - c0[0]!) * scale;
          acc.requests += r.requests;
        }
        (runs[what] ??= []).push(r);
        process.stdout.write(
          `  GET ${what.padEnd(10)} ${String(connections).padStart(2)} conn${connections === 1 ? ' ' : 's'} ${rate(r).toFixed(0).padStart(7)} req/s  p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}  errors ${r.errors}${r.stalled > 0 ? `  STALLED ${r.stalled} connection(s): no answer ${STALL_MS / 1000} s after the window` : ''}\n`,
        );
      }
      const pooled: Record<string, GetResult> = {};
      for (const [what, rs] of Object.entries(runs)) pooled[what] = pool(rs);
      return pooled;
    };
    /**
     * One watch round through `what`, printed with the CPU per event on CPU 0 (the path's process, and the backend):
     * a figure the machine's load moves less than events/s. It counts the opening of the watches too.
     */
    const watchRound = async (what: string, t: Target): Promise<WatchResult> => {
      const c0 = procOf[what]!.map((c) => c.cpuSeconds());
      const r = await within(load.call<WatchResult>('watch', { watchTarget: t, writer: direct, n: WATCHERS }), `WATCH ${what}`);
      const us = procOf[what]!.map((c, i) => ((c.cpuSeconds() - c0[i]!) * 1e6) / Math.max(1, r.events));
      const cpu = what === 'direct' ? `backend ${us[0]!.toFixed(0)} µs/event` : `${us[0]!.toFixed(0)} + backend ${us[1]!.toFixed(0)} µs/event`;
      process.stdout.write(
        `  WATCH ${what.padEnd(10)} ×${WATCHERS}: ${(r.events / r.seconds).toFixed(0).padStart(7)} events/s  ack→client p50 ${ms(r.latency.p50)}  p99 ${ms(r.latency.p99)}  missing ${r.expected - r.events}  CPU ${cpu}${r.stalledWriters > 0 ? `  STALLED ${r.stalledWriters} writer(s)` : ''}\n`,
      );
      return r;
    };
    const watchRow = (what: 'gateway' | 'gateway h1', w: Record<string, WatchResult>): SummaryRow => {
      const evRate = (p: string) => w[p]!.events / w[p]!.seconds;
      return {
        name: `proxied watch events (${what === 'gateway' ? 'HTTP/2' : 'HTTP/1.1'} to the backend) vs the bare undici hop's, ×${WATCHERS} watches`,
        value: evRate(what),
        unit: 'events/s',
        baseline: evRate('undici hop'),
        ratio: evRate(what) / evRate('undici hop'),
        target: '>= 90%',
        met: evRate(what) / evRate('undici hop') >= 0.9,
      };
    };
    if (WATCH_ONLY) {
      // The watch rounds alone: the undici hop and both gateways, WATCH_ROUNDS times in mirrored order, pooled.
      const order = ['undici hop', 'gateway h1', 'gateway'] as const;
      const runs: Record<string, WatchResult[]> = {};
      for (let i = 0; i < WATCH_ROUNDS; i++)
        for (const what of i % 2 ? [...order].reverse() : order) (runs[what] ??= []).push(await watchRound(what, paths.find((p) => p[0] === what)![1]));
      const w: Record<string, WatchResult> = {};
      for (const [what, rs] of Object.entries(runs))
        w[what] = { ...rs[0]!, events: rs.reduce((a, r) => a + r.events, 0), seconds: rs.reduce((a, r) => a + r.seconds, 0) };
      const h2 = watchRow('gateway', w),
        h1 = watchRow('gateway h1', w);
      rows.push(h2, h1);
      process.stdout.write(
        `  watch events (${WATCH_ROUNDS} round(s) pooled): gateway over HTTP/2 ${pct(h2.ratio ?? NaN)}, over HTTP/1.1 ${pct(h1.ratio ?? NaN)} of the undici hop's (target ≥ 90%)\n`,
      );
      addRows(rows);
      return rows;
    }
    const g = await measure(CONNECTIONS);
    // Latency without queueing: one connection, one request at a time.
    const one = await measure(1);
    const w: Record<string, WatchResult> = {};
    for (const [what, t] of paths) w[what] = await watchRound(what, t);
    const gw = g['gateway']!,
      bh = g['bare hop']!,
      dr = g['direct']!,
      uh = g['undici hop']!,
      g1 = g['gateway h1']!;
    const evRate = (what: string) => w[what]!.events / w[what]!.seconds;
    const h1VsUndici = rate(g1) / rate(uh);
    const vsDirect = rate(gw) / rate(dr),
      vsHop = rate(gw) / rate(bh);
    // The floor: what the gateway's client alone makes of a hop, against node:https; and the gateway against it.
    const floorVsHop = rate(uh) / rate(bh),
      vsUndici = rate(gw) / rate(uh),
      floorVsDirect = rate(uh) / rate(dr);
    const o = { gw: one['gateway']!.latency, dr: one['direct']!.latency, bh: one['bare hop']!.latency };
    const d50 = o.gw.p50 - o.dr.p50,
      d99 = o.gw.p99 - o.dr.p99;
    const h50 = o.gw.p50 - o.bh.p50,
      h99 = o.gw.p99 - o.bh.p99;
    const wd50 = w['gateway']!.latency.p50 - w['bare hop']!.latency.p50,
      wd99 = w['gateway']!.latency.p99 - w['bare hop']!.latency.p99;
    const us = (what: string) => (1e6 * cpuPerRequest[what]!.cpu) / cpuPerRequest[what]!.requests;
    const own = (what: string) => (1e6 * cpuPerRequest[what]!.own) / cpuPerRequest[what]!.requests;
    // Requests per second one idle core would serve along each path: the inverse of its CPU per request.
    const cpuVsDirect = us('direct') / us('gateway'),
      cpuVsHop = us('bare hop') / us('gateway');
    const cpuFloorVsHop = us('bare hop') / us('undici hop'),
      cpuVsUndici = us('undici hop') / us('gateway'),
      cpuFloorVsDirect = us('direct') / us('undici hop'),
      cpuH1VsUndici = us('undici hop') / us('gateway h1');
    process.stdout.write(
      `  CPU per GET on CPU 0 (${CONNECTIONS} conns, gateway/hop + backend): direct ${us('direct').toFixed(0)} µs, bare hop ${us('bare hop').toFixed(0)} µs, undici hop ${us('undici hop').toFixed(0)} µs, h2 hop ${us('h2 hop').toFixed(0)} µs, gateway over HTTP/1.1 ${us('gateway h1').toFixed(0)} µs, gateway over HTTP/2 ${us('gateway').toFixed(0)} µs\n` +
        `  the hop's process alone: undici hop ${own('undici hop').toFixed(0)} µs, h2 hop ${own('h2 hop').toFixed(0)} µs (${pct(own('undici hop') / own('h2 hop'))} of the undici hop), gateway over HTTP/1.1 ${own('gateway h1').toFixed(0)} µs, over HTTP/2 ${own('gateway').toFixed(0)} µs (${pct(own('h2 hop') / own('gateway'))} of the h2 hop)\n`,
    );
    rows.push(
      {
        name: `proxied GET, ${CONNECTIONS} connections, vs the backend directly, from CPU per request`,
        value: 1e6 / us('gateway'),
        unit: 'req/s per core',
        baseline: 1e6 / us('direct'),
        ratio: cpuVsDirect,
        target: '>= 50%',
        met: cpuVsDirect >= 0.5,
      },
      {
        name: `proxied GET, ${CONNECTIONS} connections, vs a bare node:https hop, from CPU per request`,
        value: 1e6 / us('gateway'),
        unit: 'req/s per core',
        baseline: 1e6 / us('bare hop'),
        ratio: cpuVsHop,
        target: '>= 150%',
        met: cpuVsHop >= 1.5,
      },
      // Floor rows (no target of their own): the 150% target is reachable only where the first is above 150%.
      {
        name: `floor: a bare undici hop vs a bare node:https hop, ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('undici hop'),
        unit: 'req/s per core',
        baseline: 1e6 / us('bare hop'),
        ratio: cpuFloorVsHop,
        target: 'floor (no target)',
        met: null,
      },
      {
        name: `floor: a bare undici hop vs the backend directly, ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('undici hop'),
        unit: 'req/s per core',
        baseline: 1e6 / us('direct'),
        ratio: cpuFloorVsDirect,
        target: 'floor (no target)',
        met: null,
      },
      {
        name: `proxied GET over HTTP/1.1 (GODEBUG=http2client=0) vs a bare undici hop, ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('gateway h1'),
        unit: 'req/s per core',
        baseline: 1e6 / us('undici hop'),
        ratio: cpuH1VsUndici,
        target: '>= 90%',
        met: cpuH1VsUndici >= 0.9,
      },
      {
        name: `proxied GET to an HTTP/2 backend vs a bare undici hop (HTTP/1.1), ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('gateway'),
        unit: 'req/s per core',
        baseline: 1e6 / us('undici hop'),
        ratio: cpuVsUndici,
        target: '>= 100%',
        met: cpuVsUndici >= 1,
      },
      {
        name: `floor: a bare HTTP/2 hop vs a bare undici hop, ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('h2 hop'),
        unit: 'req/s per core',
        baseline: 1e6 / us('undici hop'),
        ratio: us('undici hop') / us('h2 hop'),
        target: 'floor (no target)',
        met: null,
      },
      {
        name: `floor: a bare HTTP/2 hop vs a bare undici hop, ${CONNECTIONS} connections, from the hop's own CPU per request`,
        value: 1e6 / own('h2 hop'),
        unit: 'req/s per core',
        baseline: 1e6 / own('undici hop'),
        ratio: own('undici hop') / own('h2 hop'),
        target: 'floor (no target)',
        met: null,
      },
      {
        name: `proxied GET to an HTTP/2 backend vs a bare HTTP/2 hop, ${CONNECTIONS} connections, from the process's own CPU per request`,
        value: 1e6 / own('gateway'),
        unit: 'req/s per core',
        baseline: 1e6 / own('h2 hop'),
        ratio: own('h2 hop') / own('gateway'),
        target: 'floor (no target)',
        met: null,
      },
      {
        name: `proxied GET to an HTTP/2 backend vs a bare HTTP/2 hop, ${CONNECTIONS} connections, from CPU per request`,
        value: 1e6 / us('gateway'),
        unit: 'req/s per core',
        baseline: 1e6 / us('h2 hop'),
        ratio: us('h2 hop') / us('gateway'),
        target: 'floor (no target)',
        met: null,
      },
    );
    rows.push(
      {
        name: `proxied GET over HTTP/1.1 (GODEBUG=http2client=0) vs a bare undici hop, ${CONNECTIONS} connections`,
        value: rate(g1),
        unit: 'req/s',
        baseline: rate(uh),
        ratio: h1VsUndici,
        target: '>= 90%',
        met: h1VsUndici >= 0.9,
      },
      {
        name: `proxied GET to an HTTP/2 backend vs a bare undici hop (HTTP/1.1), ${CONNECTIONS} connections`,
        value: rate(gw),
        unit: 'req/s',
        baseline: rate(uh),
        ratio: vsUndici,
        target: '>= 100%',
        met: vsUndici >= 1,
      },
      {
        name: `floor: a bare HTTP/2 hop vs a bare undici hop, ${CONNECTIONS} connections`,
        value: rate(g['h2 hop']!),
        unit: 'req/s',
        baseline: rate(uh),
        ratio: rate(g['h2 hop']!) / rate(uh),
        target: 'floor (no target)',
        met: null,
      },
      watchRow('gateway', w),
      watchRow('gateway h1', w),
    );
    rows.push(
      {
        name: `proxied GET, ${CONNECTIONS} connections, vs the backend directly`,
        value: rate(gw),
        unit: 'req/s',
        baseline: rate(dr),
        ratio: vsDirect,
        target: '>= 50%',
        met: vsDirect >= 0.5,
      },
      {
        name: `proxied GET, ${CONNECTIONS} connections, vs a bare node:https hop`,
        value: rate(gw),
        unit: 'req/s',
        baseline: rate(bh),
        ratio: vsHop,
        target: '>= 150%',
        met: vsHop >= 1.5,
      },
      {
        name: 'proxied GET, 1 connection, added latency p50 over direct',
        value: d50,
        unit: 'ms',
        baseline: o.dr.p50,
        ratio: o.gw.p50 / o.dr.p50,
        target: '<= 0.3 ms',
        met: d50 <= 0.3,
      },
      {
        name: 'proxied GET, 1 connection, added latency p99 over direct',
        value: d99,
        unit: 'ms',
        baseline: o.dr.p99,
        ratio: o.gw.p99 / o.dr.p99,
        target: '<= 1 ms',
        met: d99 <= 1,
      },
    );
    process.stdout.write(
      [
        '  summary                                          figure     target',
        `  proxied GET vs direct (req/s, ${CONNECTIONS} conns)          ${pct(vsDirect).padStart(6)}     ≥ 50%     ${vsDirect >= 0.5 ? 'met' : 'NOT met'}`,
        `  proxied GET vs bare node:https hop (req/s)       ${pct(vsHop).padStart(6)}     ≥ 150%    ${vsHop >= 1.5 ? 'met' : 'NOT met'}`,
        `  added GET latency p50 over direct (1 conn)    ${ms(d50).padStart(9)}     ≤ 0.3 ms  ${d50 <= 0.3 ? 'met' : 'NOT met'}`,
        `  added GET latency p99 over direct (1 conn)    ${ms(d99).padStart(9)}     ≤ 1 ms    ${d99 <= 1 ? 'met' : 'NOT met'}`,
        `  from CPU per request (a figure that contention moves less): ${pct(cpuVsDirect)} of direct, ${pct(cpuVsHop)} of the bare hop`,
        `  floors: a bare undici hop is ${pct(floorVsHop)} of the bare node:https hop by req/s (${pct(cpuFloorVsHop)} by CPU per request; the 150% target),`,
        `  and ${pct(floorVsDirect)} of the backend asked directly (${pct(cpuFloorVsDirect)} by CPU per request; the 50% target);`,
        `  the gateway over HTTP/2 is ${pct(vsUndici)} of the bare undici hop by req/s (${pct(cpuVsUndici)} by CPU per request; target ≥ 100%),`,
        `  over HTTP/1.1 ${pct(h1VsUndici)} (${pct(cpuH1VsUndici)} by CPU; target ≥ 90%); a bare HTTP/2 hop is ${pct(rate(g['h2 hop']!) / rate(uh))} of the undici hop`,
        `  watch events: gateway over HTTP/2 ${pct(evRate('gateway') / evRate('undici hop'))}, over HTTP/1.1 ${pct(evRate('gateway h1') / evRate('undici hop'))} of the undici hop's (target ≥ 90%)`,
        `  (over the bare hop, 1 conn: ${h50 >= 0 ? '+' : ''}${ms(h50)} p50, ${h99 >= 0 ? '+' : ''}${ms(h99)} p99; under ${CONNECTIONS} connections, queueing included, over direct: ${ms(gw.latency.p50 - dr.latency.p50)} p50, ${ms(gw.latency.p99 - dr.latency.p99)} p99)`,
        `  added watch latency p50 / p99 over the hop ${ms(wd50)} / ${ms(wd99)}`,
        '  (the gateway, the backend and the hop share CPU 0; the load generator has CPU 1)',
        '',
      ].join('\n'),
    );
  } finally {
    for (const a of admins) a.close();
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
  addRows(rows);
  return rows;
}

// Child modes when run as a script by startChild; the orchestrator when run directly.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [mode, ...rest] = process.argv.slice(2);
  if (mode === 'sample-backend') await sampleBackendMode(rest);
  else if (mode === 'bare-proxy') await bareProxyMode(rest);
  else if (mode === 'bare-undici') await bareUndiciMode(rest);
  else if (mode === 'bare-h2') await bareH2Mode(rest);
  else if (mode === 'loadgen') serveCommands({ get: getLoop, watch: watchLoop });
  else await runAggregationBench();
}
