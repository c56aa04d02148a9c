// Instructions per proxied GET (the aggregation proxy's sibling of
// cg-gets.mjs): a Gatehouse on the memory store in this process, the sample
// backend as a child process (not traced by callgrind without
// --trace-children, so only the gateway's and this client's instructions
// count), N GETs of one Widget through the gateway with 4 in flight over
// HTTP/1.1 keep-alive, then exit. Run under callgrind at two N and subtract,
// so start-up cancels out (the client's instructions are in both, the same
// per GET):
//   for n in 200 1000; do VG_DIR=/tmp/cgp N=$n valgrind --tool=callgrind \
//     --smc-check=all-non-file --callgrind-out-file=/dev/null node bench/cg-proxy.mjs; done
// Start-up (waiting for the APIService to become available) varies from run
// to run under valgrind; CG_SYNC=<dir> takes it out instead: the script
// writes <dir>/start before its measured GETs and <dir>/end after them, each
// time waiting for <name>.ok, so an outer script can run
// `callgrind_control -z <pid>` and `callgrind_control -d <pid>` there
// (bench/cg-proxy.sh does), and the dump holds the measured GETs alone. With CG_IDLE=1 it then writes
// <dir>/idle and <dir>/idle-end around a window of the same wall time without GETs.
// DIST: the gateway's build (default ../dist; an earlier copy for an A/B);
// the backend always runs from ../dist. VG_DIR: a data directory reused
// across runs (the dev PKI and the backend's certificate are made once).
// PROF=<file> (run without valgrind): a V8 CPU profile over the measured GETs; HEAPPROF=<file> a sampling heap
// profile of them (bench/heapsites.mjs sums it). It prints the main isolate's bytes allocated per GET and its
// scavenges (allocmeter.mjs; with CLIENT=worker the client's heap is its own, so they are the gateway's or hop's).
// HOP=undici: the GETs go to a bare undici hop in this process instead (below); HOP=h2 to the bare HTTP/2 hop.
// CLIENT=worker: the GETs (warm-up: WARM, 200) come from a worker thread, so the main thread is the hop's alone.
// THREADS=1: the main thread's user and system CPU per GET and the other threads'.
// FLOOR=1: the floors in one run, CPU per GET of the hop alone (the client in a worker thread, cpuclient.mjs):
// the bare undici hop, the bare HTTP/2 hop and the gateway (GODEBUG=http2client=0 for its HTTP/1.1 path);
// N GETs per round, ROUNDS rounds (4) in alternating order, INFLIGHT (4) in flight, WARM (1000) GETs per path first.
// WATCHFLOOR=1: CPU per proxied watch event of the hop alone, the bare undici hop against the gateway (watchFloor below).
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'node:https';
import { mkdtemp } from 'node:fs/promises';
import { startHeapProfile, startProfile } from './inspectprof.mjs';
import { perOperation, startAllocMeter } from './allocmeter.mjs';
import { startBareH2Hop, startBareUndiciHop } from './barehop.mjs';

const dist = process.env.DIST ?? '../dist';
const here = fileURLToPath(new URL('.', import.meta.url));
const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
const { startServer } = await import(`${dist}/gateway/server/app.js`);
const { devPkiPaths } = await import(`${dist}/certs/devpki.js`);
const { generateCa, generateServingCert } = await import('../dist/certs/pki.js');
(await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();
const dir = process.env.VG_DIR ?? (await mkdtemp(join(tmpdir(), 'vgp-')));
await mkdir(dir, { recursive: true });
// PORT: the gateway's port (the backend takes the next), for a helper given a range of ports; else a random one.
const port = process.env.PORT ? Number(process.env.PORT) : 20000 + Math.floor(Math.random() * 20000);
const bePort = port + 1;
const parsed = parseServeFlags([
  '--secure-port',
  String(port),
  '--data-dir',
  join(dir, 'gw'),
  '--storage-backend',
  'memory',
  '--authorization-mode',
  'AlwaysAllow',
]);
if ('error' in parsed) throw new Error(parsed.error);
const running = await startServer(parsed.options, { log: () => {} });
const pki = devPkiPaths(join(dir, 'gw'));
const [ca, cert, key] = await Promise.all([pki.caCert, pki.adminCert, pki.adminKey].map((f) => readFile(f, 'utf8')));

// The backend's serving certificate for sample-api.gatehouse-samples.svc, made once per VG_DIR.
const SVC = 'sample-api.gatehouse-samples.svc';
const files = { cert: join(dir, 'sample.crt'), key: join(dir, 'sample.key'), ca: join(dir, 'sample-ca.crt') };
if (!existsSync(files.ca)) {
  const bca = generateCa('sample-cg-ca');
  const leaf = generateServingCert(bca, { commonName: SVC, hosts: [SVC] });
  await Promise.all([writeFile(files.cert, leaf.certPem), writeFile(files.key, leaf.keyPem), writeFile(files.ca, bca.certPem)]);
}
const backendCa = await readFile(files.ca, 'utf8');
const backend = spawn(
  process.execPath,
  [
    join(here, '..', 'bin', 'gatehouse.js'),
    'sample-backend',
    `--secure-port=${bePort}`,
    `--data-dir=${join(dir, 'sample')}`,
    `--tls-cert-file=${files.cert}`,
    `--tls-private-key-file=${files.key}`,
    `--requestheader-client-ca-file=${join(dir, 'gw', 'pki', 'front-proxy-ca.crt')}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
  ],
  { stdio: ['ignore', 'ignore', 'inherit'] },
);

const agent = new Agent({ keepAlive: true, ca, cert, key, maxSockets: 4 });
const call = (method, path, body, to = port) =>
  new Promise((res, rej) => {
    const r = request(
      {
        host: '127.0.0.1',
        port: to,
        method,
        path,
        agent,
        headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
      },
      (resp) => {
        resp.resume();
        resp.on('end', () => res(resp.statusCode ?? 0));
      },
    );
    r.on('error', rej);
    r.end(body);
  });
while ((await call('GET', '/readyz').catch(() => 0)) !== 200) await new Promise((r) => setTimeout(r, 50));
const NS = 'gatehouse-samples';
await call('POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
await call(
  'POST',
  `/api/v1/namespaces/${NS}/services`,
  JSON.stringify({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'sample-api' }, spec: { ports: [{ name: 'https', port: 443, targetPort: bePort }] } }),
);
await call(
  'POST',
  `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`,
  JSON.stringify({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 'sample-api-1', labels: { 'kubernetes.io/service-name': 'sample-api' } },
    addressType: 'IPv4',
    ports: [{ name: 'https', port: bePort, protocol: 'TCP' }],
    endpoints: [{ addresses: ['127.0.0.1'], conditions: { ready: true } }],
  }),
);
await call(
  'POST',
  '/apis/apiregistration.k8s.io/v1/apiservices',
  JSON.stringify({
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: 'v1.samples.gatehouse.dev' },
    spec: {
      group: 'samples.gatehouse.dev',
      version: 'v1',
      service: { namespace: NS, name: 'sample-api', port: 443 },
      caBundle: Buffer.from(backendCa).toString('base64'),
      groupPriorityMinimum: 1000,
      versionPriority: 15,
    },
  }),
);
const WIDGETS = '/apis/samples.gatehouse.dev/v1/namespaces/default/widgets';
let got = 0;
for (let i = 0; i < 600 && got !== 201 && got !== 409; i++) {
  got = await call(
    'POST',
    WIDGETS,
    JSON.stringify({ apiVersion: 'samples.gatehouse.dev/v1', kind: 'Widget', metadata: { name: 'w0' }, spec: { color: 'red' } }),
  ).catch(() => 0);
  if (got !== 201 && got !== 409) await new Promise((r) => setTimeout(r, 100));
}
if (got !== 201 && got !== 409) throw new Error(`the backend never became reachable through the gateway (${got})`);
const N = Number(process.env.N ?? 1000);
if (process.env.FLOOR || process.env.WATCHFLOOR) {
  await (process.env.WATCHFLOOR ? watchFloor() : floor());
  agent.destroy();
  backend.kill('SIGTERM');
  await running.shutdown('done');
  process.exit(0);
}
let bad = 0;
// HOP=undici: the measured GETs go to a bare hop in this process instead (HTTPS in, an undici Agent out to the
// backend with the front-proxy certificate, the headers copied, nothing else: bench/aggregation.ts's floor), so
// a PROF profile of it sits beside the gateway's with the same client in the same process.
const target = process.env.HOP === 'undici' ? await bareUndiciHop() : process.env.HOP === 'h2' ? await bareH2Hop() : port;
const get = () =>
  call('GET', `${WIDGETS}/w0`, undefined, target).then(
    (s) => {
      if (s !== 200) bad++;
    },
    () => {
      bad++;
    },
  );
// Warm the pool's 4 connections, so both N open the same number.
await Promise.all([get(), get(), get(), get()]);
const SYNC = process.env.CG_SYNC;
const sync = async (name) => {
  if (!SYNC) return;
  await writeFile(join(SYNC, name), String(process.pid));
  while (!existsSync(join(SYNC, `${name}.ok`))) await new Promise((r) => setTimeout(r, 100));
};
// CLIENT=worker: the GETs come from a worker thread (cpuclient.mjs, 4 in flight), so with callgrind's
// --separate-threads (cg-proxy.sh) the main thread's instructions are the gateway's (or the hop's) alone.
const worker = process.env.CLIENT === 'worker' ? await clientWorker() : undefined;
const many = worker
  ? (n) => worker(target, `${WIDGETS}/w0`, n)
  : async (n) => {
      for (let i = 0; i < n; i += 4) await Promise.all([get(), get(), get(), get()]);
    };
// Past the first compilations of the path before anything is counted.
await many(Number(process.env.WARM ?? 200));
/** User and system CPU in µs of the main thread and of all other threads (/proc, 10 ms ticks): THREADS=1 prints them per GET. */
async function threadCpu() {
  const { readdir } = await import('node:fs/promises');
  const out = { mainUser: 0, mainSys: 0, others: 0 };
  for (const tid of await readdir('/proc/self/task')) {
    const stat = await readFile(`/proc/self/task/${tid}/stat`, 'utf8').catch(() => '');
    const close = stat.lastIndexOf(')');
    if (close < 0) continue;
    const f = stat.slice(close + 2).split(' ');
    const [user, sys] = [Number(f[11]) * 10_000, Number(f[12]) * 10_000];
    if (Number(tid) === process.pid) {
      out.mainUser += user;
      out.mainSys += sys;
    } else out.others += user + sys;
  }
  return out;
}
const t0 = process.env.THREADS ? await threadCpu() : undefined;
await sync('start');
const w0 = performance.now();
const profiling = await startProfile();
const heapProf = await startHeapProfile();
const alloc = startAllocMeter();
const c0 = process.cpuUsage();
await many(N);
const c = process.cpuUsage(c0);
const a = alloc.stop();
await heapProf.stop();
if (t0) {
  const t1 = await threadCpu();
  const per = (k) => ((t1[k] - t0[k]) / N).toFixed(1);
  console.log(`threads µs/GET: main user ${per('mainUser')} system ${per('mainSys')}, other threads ${per('others')}`);
}
await profiling.stop();
const measuredMs = performance.now() - w0;
await sync('end');
// CG_IDLE=1: a window of the measured one's wall time without GETs, counted apart (cg-proxy.sh subtracts it): the
// gateway's periodic work (APF's borrowing, timers, the store's sweeps) scales with wall time, not with GETs.
if (process.env.CG_IDLE) {
  await sync('idle');
  await new Promise((r) => setTimeout(r, measuredMs));
  await sync('idle-end');
}
// Without valgrind: this process's CPU per GET (gateway and client; the backend is another process).
console.log('bad', bad, ...perOperation(c, a, N));
agent.destroy();
backend.kill('SIGTERM');
await running.shutdown('done');
process.exit(0);

/** A cpuclient.mjs worker: (port, path, n) resolves once its n GETs are answered, counting the bad ones. */
async function clientWorker() {
  const { Worker } = await import('node:worker_threads');
  const w = new Worker(new URL('./cpuclient.mjs', import.meta.url), { workerData: { ca, cert, key, inflight: 4 } });
  const next = () => new Promise((r) => w.once('message', r));
  await next();
  w.unref();
  return async (to, path, n) => {
    w.postMessage({ port: to, path, n });
    bad += (await next()).bad;
  };
}

/** CPU nanoseconds of each thread of this process, by thread id (/proc schedstat: exact, not 10 ms ticks). */
async function threadNs() {
  const { readdir } = await import('node:fs/promises');
  const out = new Map();
  for (const tid of await readdir('/proc/self/task')) {
    const s = await readFile(`/proc/self/task/${tid}/schedstat`, 'utf8').catch(() => '');
    if (s) out.set(Number(tid), Number(s.split(' ')[0]));
  }
  return out;
}

/** User+system CPU seconds of another process (all its threads), from /proc (10 ms ticks). */
async function procSeconds(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

// FLOOR=1: the floors of the proxy targets in one run. The client runs in a worker thread (cpuclient.mjs), so
// the main thread's CPU per GET is the hop's alone: the bare undici hop (HTTP/1.1 out), the bare HTTP/2 hop
// (node:http2 out) and the gateway (HTTP/2 out unless GODEBUG=http2client=0), each N GETs a round, ROUNDS
// rounds in alternating order, the same client, backend and request. Also printed: this process's other
// threads (V8's GC and compiler threads, shared with the client's isolate) and the backend process, per GET.
/** CPU ns between two threadNs() readings: the main thread's, and the other threads' but the client's. */
function splitThreads(t0, t1, clientTid) {
  let main = 0;
  let others = 0;
  for (const [tid, ns] of t1) {
    if (tid === clientTid) continue;
    const d = ns - (t0.get(tid) ?? 0);
    if (tid === process.pid) main += d;
    else others += d;
  }
  return { main, others };
}

// A declaration, not a const: the module's top-level await (FLOOR, WATCHFLOOR) calls it before a const would exist.
function med(xs) {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
}

/** One line per path of the floor's rounds ({ main, others, backend, bad } each); the main thread's medians by name. */
function printRounds(names, acc, out, digits) {
  const m = {};
  for (const name of names) {
    const rs = acc[name];
    m[name] = med(rs.map((x) => x.main));
    const label = name === 'gateway' ? `gateway (${out})` : name;
    console.log(
      `  ${label.padEnd(22)} main thread ${m[name].toFixed(digits).padStart(5 + Math.sign(digits))} (${rs.map((x) => x.main.toFixed(digits)).join(' ')})` +
        `  other threads ${med(rs.map((x) => x.others)).toFixed(digits)}  backend ${med(rs.map((x) => x.backend)).toFixed(digits)}  bad ${rs.reduce((a, x) => a + x.bad, 0)}`,
    );
  }
  return m;
}

async function floor() {
  const { Worker } = await import('node:worker_threads');
  const rounds = Number(process.env.ROUNDS ?? 4);
  const inflight = Number(process.env.INFLIGHT ?? 4);
  const targets = { 'undici hop': await bareUndiciHop(), 'h2 hop': await bareH2Hop(), gateway: port };
  const w = new Worker(new URL('./cpuclient.mjs', import.meta.url), { workerData: { ca, cert, key, inflight } });
  const next = () => new Promise((r) => w.once('message', r));
  const { tid: clientTid } = await next();
  const path = `${WIDGETS}/w0`;
  const run = async (to, n) => {
    w.postMessage({ port: to, path, n });
    return (await next()).bad;
  };
  // Past the first compilations of every path before anything is counted.
  for (const p of Object.values(targets)) await run(p, Number(process.env.WARM ?? 1000));
  const acc = {};
  const names = Object.keys(targets);
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? [...names].reverse() : names) {
      const t0 = await threadNs();
      const b0 = await procSeconds(backend.pid);
      const bad = await run(targets[name], N);
      const t1 = await threadNs();
      const b1 = await procSeconds(backend.pid);
      const { main, others } = splitThreads(t0, t1, clientTid);
      (acc[name] ??= []).push({ main: main / 1e3 / N, others: others / 1e3 / N, backend: ((b1 - b0) * 1e6) / N, bad });
    }
  }
  const h2 = process.env.GODEBUG?.includes('http2client=0') ? 'HTTP/1.1 out' : 'HTTP/2 out';
  console.log(`node ${process.version}, N=${N} GETs × ${rounds} rounds, ${inflight} in flight; µs of CPU per GET (median of rounds; each round's)`);
  const m = printRounds(names, acc, h2, 0);
  const pc = (x) => `${(100 * x).toFixed(1)}%`;
  console.log(
    `  by CPU per GET: h2 hop ${pc(m['undici hop'] / m['h2 hop'])} of the undici hop; gateway ${pc(m['undici hop'] / m.gateway)} of the undici hop, ${pc(m['h2 hop'] / m.gateway)} of the h2 hop`,
  );
  await w.terminate();
}

// WATCHFLOOR=1: CPU per proxied watch event of the hop alone, the watch sibling of FLOOR. The client
// (watchclient.mjs, a worker thread) opens W watches (100) through the bare undici hop or the gateway (HTTP/1.1
// out under GODEBUG=http2client=0), then sends N creates (400) to the backend directly, 4 in flight, and waits
// until every watch has read every event; the main thread's CPU from the first create to the last event,
// per event (N × W), ROUNDS rounds (4) in alternating order after a warm-up round of each. The opening of the
// watches is not counted: what is measured is the relaying of events. PROF=<file>: a V8 profile of the first
// measured round of PROF_TARGET (gateway, or undici hop); under cg-proxy.sh (CG_SYNC) the counters cover it alone.
async function watchFloor() {
  const { Worker } = await import('node:worker_threads');
  const rounds = Number(process.env.ROUNDS ?? 4);
  const W = Number(process.env.W ?? 100);
  const n = Number(process.env.N ?? 400);
  const pki = (f) => readFile(join(dir, 'gw', 'pki', f), 'utf8');
  const [fpCert, fpKey] = await Promise.all(['front-proxy-client.crt', 'front-proxy-client.key'].map(pki));
  const targets = { 'undici hop': await bareUndiciHop(), gateway: port };
  const w = new Worker(new URL('./watchclient.mjs', import.meta.url), {
    workerData: {
      ca,
      cert,
      key,
      backend: {
        port: bePort,
        ca: backendCa,
        cert: fpCert,
        key: fpKey,
        servername: SVC,
        identity: { 'x-remote-user': 'admin', 'x-remote-group': 'system:masters' },
      },
    },
  });
  const next = () => new Promise((r) => w.once('message', r));
  const { tid: clientTid } = await next();
  let seq = 0;
  // Fresh namespaces in every run: the backend's store persists under VG_DIR.
  const RUN = Date.now().toString(36);
  const round = async (name, profile = false) => {
    w.postMessage({ port: targets[name], ns: `wf${RUN}-${seq++}`, w: W, n });
    await next();
    // The watches' heads are out; give their backend registrations a moment before the first create.
    await new Promise((r) => setTimeout(r, 200));
    const prof = profile ? await startProfile() : undefined;
    if (profile) await cgSync('start');
    const t0 = await threadNs();
    const b0 = await procSeconds(backend.pid);
    w.postMessage({ go: true });
    const { bad } = await next();
    if (profile) await cgSync('end');
    const t1 = await threadNs();
    await prof?.stop();
    const b1 = await procSeconds(backend.pid);
    w.postMessage({ close: true });
    await next();
    const { main, others } = splitThreads(t0, t1, clientTid);
    const ev = n * W;
    return { main: main / 1e3 / ev, others: others / 1e3 / ev, backend: ((b1 - b0) * 1e6) / ev, bad };
  };
  const names = Object.keys(targets);
  for (const name of names) await round(name);
  const acc = {};
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 ? [...names].reverse() : names) {
      // The first measured round of PROF_TARGET (default the gateway) alone.
      (acc[name] ??= []).push(await round(name, name === (process.env.PROF_TARGET ?? 'gateway') && r === 0));
    }
  }
  const out = process.env.GODEBUG?.includes('http2client=0') ? 'HTTP/1.1 out' : 'HTTP/2 out';
  console.log(`node ${process.version}, ${W} watches × ${n} creates × ${rounds} rounds; µs of CPU per event (median of rounds; each round's)`);
  const m = printRounds(names, acc, out, 2);
  console.log(`  by CPU per event: gateway ${((100 * m['undici hop']) / m.gateway).toFixed(1)}% of the undici hop`);
  await w.terminate();
}

/** CG_SYNC (bench/cg-proxy.sh) around WATCHFLOOR's profiled round: the counters zeroed before it, dumped after. */
async function cgSync(name) {
  const d = process.env.CG_SYNC;
  if (!d) return;
  await writeFile(join(d, name), String(process.pid));
  while (!existsSync(join(d, `${name}.ok`))) await new Promise((r) => setTimeout(r, 100));
}

async function bareH2Hop() {
  const pki = (f) => readFile(join(dir, 'gw', 'pki', f), 'utf8');
  const [fpCert, fpKey, gwCert, gwKey] = await Promise.all(['front-proxy-client.crt', 'front-proxy-client.key', 'apiserver.crt', 'apiserver.key'].map(pki));
  return startBareH2Hop({
    cert: gwCert,
    key: gwKey,
    backend: { port: bePort, ca: backendCa, cert: fpCert, key: fpKey, servername: SVC },
    addHeaders: ['x-remote-user', 'admin', 'x-remote-group', 'system:masters'],
  });
}

async function bareUndiciHop() {
  const pki = (f) => readFile(join(dir, 'gw', 'pki', f), 'utf8');
  const [fpCert, fpKey, gwCert, gwKey] = await Promise.all(['front-proxy-client.crt', 'front-proxy-client.key', 'apiserver.crt', 'apiserver.key'].map(pki));
  // The identity the gateway would send for the admin client.
  return startBareUndiciHop({
    port: process.env.PORT ? port + 2 : 0,
    cert: gwCert,
    key: gwKey,
    backend: { port: bePort, ca: backendCa, cert: fpCert, key: fpKey, servername: SVC },
    addHeaders: ['x-remote-user', 'admin', 'x-remote-group', 'system:masters'],
  });
}
