// Instructions per create, for changes too small for this machine's drift:
// a Gatehouse on the memory store (STORE=file, STORE=redis: see below) in
// this process (the compiled dist/), N creates over 4 keep-alive connections,
// then exit. Run it under callgrind at two N and subtract, so start-up
// cancels out; instruction counts repeat where timings do not (the other core
// busy or not):
//   for n in 200 600; do VG_DIR=/tmp/cgdir H=1 N=$n valgrind --tool=callgrind \
//     --smc-check=all-non-file --callgrind-out-file=/dev/null node bench/cg-creates.mjs; done
// VG_DIR: a data directory reused across runs (its dev PKI is generated once,
// RSA key generation is random work); H=1 hardens the intrinsics first, as
// `gatehouse serve` does (gateway/cli/harden.ts). STORE=redis runs it on the
// Redis store (REDIS_URL, default 127.0.0.1:6379) under a fresh prefix,
// dropped at exit; the callgrind figure is then Gatehouse's side only.
// STORE=file: the file store (its store directory under VG_DIR; remove it
// between runs), e.g. under `strace -f -c` for the system calls per create.
// WARM=<n> (memory store): the creates come from this file forked as a child
// that valgrind does not follow; after n warm-up creates callgrind's counters
// are zeroed, N creates run and the counters are dumped, so one run under
// bench/cg-main.sh gives the server's main-thread instructions per create:
//   bench/cg-main.sh main cg-creates.mjs WARM=1000 N=1000 [DIST=<another build's dist>]
// DIST: the build (default ../dist; an earlier build for an A/B).
// C=<n> (KIND=create, with WARM): n creates in flight instead of 4, each
// connection sending its next one when the previous is answered (the file
// store's group commit then carries batches as under the bench's 50).
// KIND=csr (with WARM): the forked client creates CertificateSigningRequests
// instead, each with a P-256 key of its own (made in the client, outside
// valgrind), so the signature check runs on every create.
// KIND=put|merge|apply (with WARM): the forked client creates 4 ConfigMaps
// first, then each of its 4 in-flight slots writes its own one again and again,
// a new value each time: an unconditional PUT of the whole object, a JSON merge
// patch of one key, or a server-side apply (fieldManager=bench) of the whole
// object; so one run gives the update path's instructions per write.
// MEASURE=cpu (with WARM, without valgrind): prints the process's CPU (user +
// system, every thread; and the main thread's alone) per measured write instead; alternate builds (DIST=)
// run by run when the machine is too busy for callgrind.
// MEASURE=alloc (with WARM, without valgrind): the V8 heap bytes the whole process allocated per measured
// write (bench/allocmeter.mjs: the collections' before minus the previous after), and its collections.
// PROF=<file> (with WARM, without valgrind): a V8 CPU profile of the server
// over the measured writes alone; `node bench/profstages.mjs <file>` splits it
// by stage (the write-path table in bench/README.md).
import { execFile, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:https';
const cm = (i) =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `c${i}`, labels: { app: 'x', tier: 'y' } },
    data: { a: 'x'.repeat(100), b: 'y', c: 'z' },
  });
/** A CertificateSigningRequest body for CN=r<i>, with a P-256 key of its own. */
async function csr(i) {
  const { generateKeyPairSync, sign } = await import('node:crypto');
  const { oid, seq, tlv, bitString, TAG } = await import(`${process.env.DIST ?? '../dist'}/lib/certificates/der.js`);
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const subject = seq(tlv(TAG.SET, seq(oid('2.5.4.3'), tlv(TAG.UTF8_STRING, Buffer.from(`r${i}`)))));
  const info = seq(tlv(TAG.INTEGER, Buffer.from([0])), subject, publicKey.export({ format: 'der', type: 'spki' }), Buffer.from([0xa0, 0]));
  const der = seq(info, seq(oid('1.2.840.10045.4.3.2')), bitString(sign('sha256', info, privateKey)));
  const pem = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
  const spec = {
    request: Buffer.from(pem).toString('base64'),
    signerName: 'kubernetes.io/kube-apiserver-client',
    usages: ['digital signature', 'client auth'],
  };
  return JSON.stringify({ apiVersion: 'certificates.k8s.io/v1', kind: 'CertificateSigningRequest', metadata: { name: `r${i}` }, spec });
}
const CSRS = '/apis/certificates.k8s.io/v1/certificatesigningrequests';
const CMS = '/api/v1/namespaces/default/configmaps';
/** The 4 ConfigMaps the update kinds write, one per in-flight slot. */
const slot = (i) => `u${i % 4}`;
/** The write of KIND for the i-th operation and the status it answers with. */
const WRITES = {
  csr: async (call, i) => [await call('POST', CSRS, await csr(i)), 201],
  create: async (call, i) => [await call('POST', CMS, cm(i)), 201],
  put: async (call, i) => [await call('PUT', `${CMS}/${slot(i)}`, cmNamed(slot(i), i)), 200],
  merge: async (call, i) => [await call('PATCH', `${CMS}/${slot(i)}`, JSON.stringify({ data: { c: `z${i}` } }), 'application/merge-patch+json'), 200],
  apply: async (call, i) => [await call('PATCH', `${CMS}/${slot(i)}?fieldManager=bench`, cmNamed(slot(i), i), 'application/apply-patch+yaml'), 200],
};
const kind = process.env.KIND ?? 'create';
if (!WRITES[kind]) throw new Error(`KIND=${kind}: one of ${Object.keys(WRITES).join(', ')}`);
/** A ConfigMap named `name` like cm(i): the same size, a value changed by i. */
function cmNamed(name, i) {
  const o = JSON.parse(cm(i));
  o.metadata.name = name;
  o.data.c = `z${i}`;
  return JSON.stringify(o);
}
/** Writes in flight (C=, creates only): each of C connections sends its next create once the previous one is answered. */
const inFlight = Number(process.env.C ?? 4);
if (inFlight !== 4 && kind !== 'create') throw new Error('C= is for KIND=create');
/** n writes of KIND from `from` on, 4 in flight (or C); the count of answers that were not its success. */
async function creates(call, from, n) {
  let bad = 0;
  if (inFlight !== 4) {
    let next = from;
    const worker = async () => {
      while (next < from + n) {
        const [got, want] = await WRITES[kind](call, next++);
        if (got !== want) bad++;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, worker));
    return bad;
  }
  for (let i = from; i < from + n; i += 4) {
    const st = await Promise.all([0, 1, 2, 3].map((j) => WRITES[kind](call, i + j)));
    bad += st.filter(([got, want]) => got !== want).length;
  }
  return bad;
}
const caller =
  (port, agent) =>
  (method, path, body, type = 'application/json') =>
    new Promise((res, rej) => {
      const r = request(
        { host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': type, 'content-length': Buffer.byteLength(body) } : {} },
        (resp) => {
          resp.resume();
          resp.on('end', () => res(resp.statusCode ?? 0));
        },
      );
      r.on('error', rej);
      r.end(body);
    });
if (process.send && process.env.CGC_PORT) {
  // The forked client (WARM): warm up, wait for the counters to be zeroed, measure.
  const agent = new Agent({ keepAlive: true, ...JSON.parse(process.env.CGC_TLS ?? '{}'), maxSockets: inFlight });
  const call = caller(Number(process.env.CGC_PORT), agent);
  const warm = Number(process.env.WARM);
  let bad = 0;
  // The objects the updates write: made by apply for KIND=apply (so its manager owns every field and no apply conflicts).
  if (kind === 'apply') for (let j = 0; j < 4; j++) bad += (await WRITES.apply(call, j))[0] === 201 ? 0 : 1;
  else if (kind === 'put' || kind === 'merge') for (let j = 0; j < 4; j++) bad += (await call('POST', CMS, cmNamed(slot(j), j))) === 201 ? 0 : 1;
  bad += await creates(call, 0, warm);
  process.send('warm');
  await new Promise((r) => process.once('message', r));
  bad += await creates(call, warm, Number(process.env.N ?? 1000));
  process.send(`done ${bad}`);
  agent.destroy();
  process.disconnect();
  process.exit(0);
}
const dist = process.env.DIST ?? '../dist';
const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
const { startServer } = await import(`${dist}/gateway/server/app.js`);
const { devPkiPaths } = await import(`${dist}/certs/devpki.js`);
if (process.env.H === '1') (await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();
const dir = process.env.VG_DIR ?? (await mkdtemp(join(tmpdir(), 'vg-')));
const port = 20000 + Math.floor(Math.random() * 20000);
const onRedis = process.env.STORE === 'redis';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `gh-cg-${process.pid}-${port}`;
const storage = onRedis
  ? ['--storage-backend', 'redis', '--redis-url', redisUrl, '--storage-prefix', prefix]
  : ['--storage-backend', process.env.STORE === 'file' ? 'file' : 'memory'];
const parsed = parseServeFlags(['--secure-port', String(port), '--data-dir', dir, ...storage]);
if ('error' in parsed) throw new Error(parsed.error);
const running = await startServer(parsed.options, { log: () => {} });
const pki = devPkiPaths(dir);
const [ca, cert, key] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.adminCert, 'utf8'), readFile(pki.adminKey, 'utf8')]);
const agent = new Agent({ keepAlive: true, ca, cert, key, maxSockets: 4 });
const call = caller(port, agent);
while ((await call('GET', '/readyz').catch(() => 0)) !== 200) await new Promise((r) => setTimeout(r, 50));
const N = Number(process.env.N ?? 1000);
let bad = 0;
/** The main thread's user and system CPU in clock ticks (10 ms), from /proc (0 where there is none). */
function mainThreadTicks() {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(f[11]), Number(f[12])];
  } catch {
    return [0, 0];
  }
}
/** callgrind_control on this process, the event loop kept busy so valgrind reads the command. */
async function callgrind(flag) {
  const tick = setInterval(() => {}, 5);
  await new Promise((res, rej) => execFile('callgrind_control', [flag, String(process.pid)], (err) => (err ? rej(err) : res())));
  clearInterval(tick);
}
if (process.env.WARM) {
  const child = fork(new URL(import.meta.url), [], { env: { ...process.env, CGC_PORT: String(port), CGC_TLS: JSON.stringify({ ca, cert, key }) } });
  const next = () => new Promise((r) => child.once('message', r));
  await next();
  const prof = process.env.PROF ? await (await import('./inspectprof.mjs')).startProfile() : undefined;
  const cpu = process.env.MEASURE === 'cpu';
  const alloc = process.env.MEASURE === 'alloc' ? (await import('./allocmeter.mjs')).startAllocMeter() : undefined;
  if (!prof && !cpu && !alloc) await callgrind('-z');
  const before = process.cpuUsage();
  const mainBefore = mainThreadTicks();
  child.send('go');
  const done = await next();
  const used = process.cpuUsage(before);
  const mainUs = mainThreadTicks().map((t, i) => (t - mainBefore[i]) * 1e4);
  if (prof) await prof.stop();
  else if (alloc) {
    const a = alloc.stop();
    console.log(
      `heap bytes allocated per ${kind} ${(a.bytes / N).toFixed(0)} (${a.scavenges} scavenges, ${a.marks} mark-compacts, ${(a.pauseUs / N).toFixed(1)} µs of pauses a write)`,
    );
  } else if (cpu)
    console.log(
      `cpu per ${kind} ${((used.user + used.system) / N).toFixed(1)} µs (user ${(used.user / N).toFixed(1)}, system ${(used.system / N).toFixed(1)}; main thread ${((mainUs[0] + mainUs[1]) / N).toFixed(1)}: user ${(mainUs[0] / N).toFixed(1)}, system ${(mainUs[1] / N).toFixed(1)})`,
    );
  else await callgrind('-d');
  bad = Number(String(done).split(' ')[1]);
}
for (let i = 0; !process.env.WARM && i < N; i += 4) {
  const st = await Promise.all([0, 1, 2, 3].map((j) => call('POST', '/api/v1/namespaces/default/configmaps', cm(i + j))));
  bad += st.filter((s) => s !== 201).length;
  if (i % 40 === 0) await call('GET', `/api/v1/namespaces/default/configmaps/c${i}`);
}
console.log('bad', bad);
agent.destroy();
await running.shutdown('done');
if (onRedis) {
  const { prefixPattern } = await import('../dist/backends/core/store/redis-keys.js');
  await (await import('./cg-redis-drop.mjs')).dropRedisPrefix(redisUrl, prefixPattern(prefix));
}
process.exit(0);
