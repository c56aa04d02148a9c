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
// profile of the measured GETs alone (bench/inspectprof.mjs).
// REQ=forwardauth: the requests are forward-auth calls in nginx's contract
// (X-Original-Method, X-Original-URI, a bearer token the TokenReview answerer
// knows; the proxy trusted by its address), decided from the caches after the
// first, instead of GETs through to the upstream.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:https';
import { createServer } from 'node:net';
import { startProfile } from './inspectprof.mjs';

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
const sidecar = await startSidecar(parsed.options, { log: () => {}, env: {} });

const agent = new Agent({ keepAlive: true, ca: ca.certPem, cert: client.certPem, key: client.keyPem, maxSockets: 4 });
let bad = 0;
const FA = {
  host: '127.0.0.1',
  port,
  path: '/gatehouse/forward-auth',
  servername: 'localhost',
  headers: { 'X-Original-Method': 'GET', 'X-Original-URI': '/api/v1/items?limit=10', Authorization: 'Bearer cg-token-0123456789abcdef' },
};
const get = () =>
  new Promise((res) => {
    const r = request(FORWARD_AUTH ? { ...FA, agent } : { host: '127.0.0.1', port, path: '/api/v1/items', agent, servername: 'localhost' }, (resp) => {
      resp.resume();
      resp.on('end', () => {
        if (resp.statusCode !== 200) bad++;
        res();
      });
    });
    r.on('error', () => {
      bad++;
      res();
    });
    r.end();
  });
const N = Number(process.env.N ?? 1000);
await Promise.all([get(), get(), get(), get()]);
const SYNC = process.env.CG_SYNC;
const sync = async (name) => {
  if (!SYNC) return;
  await writeFile(join(SYNC, name), String(process.pid));
  while (!existsSync(join(SYNC, `${name}.ok`))) await new Promise((r) => setTimeout(r, 100));
};
// Past the first compilations of the path before anything is counted.
for (let i = 0; i < 200; i += 4) await Promise.all([get(), get(), get(), get()]);
await sync('start');
const prof = await startProfile();
const c0 = process.cpuUsage();
for (let i = 0; i < N; i += 4) await Promise.all([get(), get(), get(), get()]);
const c = process.cpuUsage(c0);
await prof.stop();
await sync('end');
console.log('bad', bad, 'cpu µs/GET', ((c.user + c.system) / N).toFixed(1));
agent.destroy();
child.kill('SIGKILL');
await Promise.race([sidecar.shutdown('done'), new Promise((r) => setTimeout(r, 2000))]);
process.exit(0);
