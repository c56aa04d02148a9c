// Instructions per GET through the sidecar (the sidecar's sibling of
// cg-proxy.mjs): `startSidecar` in this process in front of a plain HTTP
// upstream, the upstream and the SubjectAccessReview answerer in a child
// process (not traced by callgrind without --trace-children, so only the
// sidecar's and this client's instructions count), N GETs with 4 in flight
// over HTTP/1.1 keep-alive with a client certificate (the SubjectAccessReview
// is cached after the first), then exit. CG_SYNC=<dir> as in cg-proxy.mjs:
// bench/cg-proxy.sh takes SCRIPT=cg-sidecar.mjs and zeroes the counters
// before the measured GETs and dumps them after.
// DIST: the sidecar's build (default ../dist; an earlier build's dist for an
// A/B; its own node_modules must resolve). Without valgrind it prints this
// process's CPU per GET (sidecar and client); PROF=<file> writes a V8 CPU
// profile of the measured GETs alone (bench/inspectprof.mjs), HEAPPROF=<file>
// a sampling heap profile of them (bench/heapsites.mjs reads it). It also prints
// the bytes allocated per GET and the collections (allocmeter.mjs), the
// client's share included (the same in an A/B) unless CLIENT=worker runs the
// client (cgclient.mjs) in a worker thread, whose heap is its own.
// REQ=forwardauth: the requests are forward-auth calls in nginx's contract
// (X-Original-Method, X-Original-URI, a bearer token the TokenReview answerer
// knows; the proxy trusted by its address), decided from the caches after the
// first, instead of GETs through to the upstream. FLOOR=<variant>: a server of
// fafloor.mjs (https, h2compat, h2compat-async) answers them instead.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { startHeapProfile, startProfile } from './inspectprof.mjs';
import { perOperation, startAllocMeter } from './allocmeter.mjs';
import { clientWorker, makeClient } from './cgclient.mjs';
import { floorServer } from './fafloor.mjs';

const dist = process.env.DIST ?? '../dist';
const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
const { startSidecar } = await import(`${dist}/gateway/sidecar/index.js`);
const { generateCa, generateClientCert, generateServingCert } = await import('../dist/certs/pki.js');
(await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();

const freePort = () =>
  new Promise((res) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
const FORWARD_AUTH = process.env.REQ === 'forwardauth';
const dir = await mkdtemp(join(tmpdir(), 'cgs-'));
const ca = generateCa('cg-sidecar-ca');
const serving = generateServingCert(ca, { commonName: 'localhost' });
const client = generateClientCert(ca, { user: 'cg-user', groups: ['cg'] });
const [upPort, sarPort, port] = [await freePort(), await freePort(), await freePort()];
const f = { ca: join(dir, 'ca.crt'), cert: join(dir, 'tls.crt'), key: join(dir, 'tls.key'), kc: join(dir, 'sar.kubeconfig') };
await Promise.all([writeFile(f.ca, ca.certPem), writeFile(f.cert, serving.certPem), writeFile(f.key, serving.keyPem)]);
await writeFile(
  f.kc,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: `https://127.0.0.1:${sarPort}/`, 'certificate-authority-data': Buffer.from(ca.certPem).toString('base64') } }],
    users: [{ name: 'u', user: {} }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  }),
);
const CHILD = `
const http = require('node:http'), https = require('node:https');
const body = JSON.stringify({ kind: 'ItemList', items: [{ name: 'a', value: 'x'.repeat(200) }] });
http.createServer((req, res) => { req.resume(); res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }); res.end(body); }).listen(${upPort}, '127.0.0.1');
https.createServer({ cert: process.env.C, key: process.env.K }, (req, res) => {
  const chunks = []; req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const r = JSON.parse(Buffer.concat(chunks).toString());
    r.status = r.kind === 'TokenReview' ? { authenticated: true, user: { username: 'cg-user', groups: ['cg'] } } : { allowed: true };
    res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(r));
  });
}).listen(${sarPort}, '127.0.0.1', () => process.send('up'));
`;
const child = spawn(process.execPath, ['-e', CHILD], {
  env: { ...process.env, C: serving.certPem, K: serving.keyPem },
  stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
});
await new Promise((r) => child.once('message', r));
const parsed = parseServeFlags([
  `--upstream=http://127.0.0.1:${upPort}/`,
  `--secure-port=${port}`,
  `--data-dir=${join(dir, 'sidecar')}`,
  `--tls-cert-file=${f.cert}`,
  `--tls-private-key-file=${f.key}`,
  `--client-ca-file=${f.ca}`,
  `--authentication-token-webhook-config-file=${f.kc}`,
  `--authorization-webhook-config-file=${f.kc}`,
  ...(FORWARD_AUTH ? ['--forward-auth-trusted-addresses=127.0.0.1'] : []),
]);
if ('error' in parsed) throw new Error(parsed.error);
const FLOOR = process.env.FLOOR;
let sidecar;
if (FLOOR) {
  // A floor of fafloor.mjs in the sidecar's place (forward-auth calls only): what the same client costs against it.
  const server = floorServer(FLOOR, { cert: serving.certPem, key: serving.keyPem, ca: ca.certPem });
  await new Promise((r) => server.listen(port, '127.0.0.1', r));
  sidecar = { shutdown: () => new Promise((r) => server.close(r)) };
} else sidecar = await startSidecar(parsed.options, { log: () => {}, env: {} });

const clientOptions = { port, ca: ca.certPem, cert: client.certPem, key: client.keyPem, forwardAuth: FORWARD_AUTH };
const inWorker = process.env.CLIENT === 'worker';
const driver = inWorker ? await clientWorker(clientOptions) : makeClient(clientOptions);
let bad = 0;
const round = async (n) => {
  const b = await driver.run(n);
  bad = inWorker ? b : driver.bad;
};
const N = Number(process.env.N ?? 1000);
await round(4);
const SYNC = process.env.CG_SYNC;
const sync = async (name) => {
  if (!SYNC) return;
  await writeFile(join(SYNC, name), String(process.pid));
  while (!existsSync(join(SYNC, `${name}.ok`))) await new Promise((r) => setTimeout(r, 100));
};
// Past the first compilations of the path before anything is counted.
await round(200);
await sync('start');
const prof = await startProfile();
const heapProf = await startHeapProfile();
const alloc = startAllocMeter();
const c0 = process.cpuUsage();
await round(N);
const c = process.cpuUsage(c0);
const a = alloc.stop();
await prof.stop();
await heapProf.stop();
await sync('end');
console.log('bad', bad, ...perOperation(c, a, N));
inWorker ? await driver.stop() : driver.destroy();
child.kill('SIGKILL');
await Promise.race([sidecar.shutdown('done'), new Promise((r) => setTimeout(r, 2000))]);
process.exit(0);
