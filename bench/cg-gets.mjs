// Instructions per GET, for changes smaller than this machine's drift (the
// GET sibling of cg-creates.mjs): a Gatehouse on the memory store in this
// process, N GETs of one ConfigMap with 4 in flight, over HTTP/2 (one
// session, PROTO=h2, the default) or HTTP/1.1 (4 keep-alive connections,
// PROTO=h1), then exit. Run under callgrind at two N and subtract, so start-up
// cancels out (the client's instructions are in both, the same per GET):
//   for n in 300 1300; do VG_DIR=/tmp/cgdir N=$n valgrind --tool=callgrind \
//     --smc-check=all-non-file --callgrind-out-file=/dev/null node bench/cg-gets.mjs; done
// DIST: the build (default ../dist; an earlier copy for an A/B); FLAGS: more
// `gatehouse serve` flags, space-separated (e.g. --enable-priority-and-fairness=false);
// AS=user: GET as an ordinary user (client certificate from the dev CA, not
// system:masters: priority level global-default) instead of the admin.
// VG_DIR: a data directory reused across runs (the dev PKI is made once).
// CLIENT=process (with WARM): the GETs come from bench/cg-gets-client.mjs in a
// child process that valgrind does not follow, so the dump counts the server alone.
// WARM=<n>: n GETs first, then callgrind's counters are zeroed, N GETs run, and
// the counters are dumped (callgrind_control -z / -d): the dump
// (<out-file>.1) holds the N GETs only, without start-up, JIT warm-up and
// shutdown, whose variance between runs was larger than APF's whole cost. One
// run then suffices: instructions per GET = the dump's total / N.
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'node:https';
import { runGets } from './cg-gets-client.mjs';
import { startProfile } from './inspectprof.mjs';
import { callgrindControl } from './cgcontrol.mjs';
const dist = process.env.DIST ?? '../dist';
const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
const { startServer } = await import(`${dist}/gateway/server/app.js`);
const { devPkiPaths } = await import(`${dist}/certs/devpki.js`);
const { generateClientCert } = await import(`${dist}/certs/pki.js`);
(await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();
const dir = process.env.VG_DIR ?? (await mkdtemp(join(tmpdir(), 'vg-')));
const port = 20000 + Math.floor(Math.random() * 20000);
const extra = (process.env.FLAGS ?? '').split(' ').filter(Boolean);
const parsed = parseServeFlags([
  '--secure-port',
  String(port),
  '--data-dir',
  dir,
  '--storage-backend',
  'memory',
  '--authorization-mode',
  // AUTHZ: the authorization modes (default AlwaysAllow; `Node,RBAC` is gatehouse serve's default).
  process.env.AUTHZ ?? 'AlwaysAllow',
  ...extra,
]);
if ('error' in parsed) throw new Error(parsed.error);
const running = await startServer(parsed.options, { log: () => {} });
const pki = devPkiPaths(dir);
const [ca, cert, key, caKey] = await Promise.all([pki.caCert, pki.adminCert, pki.adminKey, join(dir, 'pki', 'ca.key')].map((f) => readFile(f, 'utf8')));
const admin = { ca, cert, key };
const agent = new Agent({ keepAlive: true, ...admin, maxSockets: 4 });
const call = (method, path, body) =>
  new Promise((res, rej) => {
    const r = request(
      { host: '127.0.0.1', port, method, path, agent, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} },
      (resp) => {
        resp.resume();
        resp.on('end', () => res(resp.statusCode ?? 0));
      },
    );
    r.on('error', rej);
    r.end(body);
  });
while ((await call('GET', '/readyz').catch(() => 0)) !== 200) await new Promise((r) => setTimeout(r, 50));
await call(
  'POST',
  '/api/v1/namespaces/default/configmaps',
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1' }, data: { a: 'b' } }),
);
// SEED=<n>: n more ConfigMaps of about bench/run.ts's size, for CG_PATH lists (bench/cg-gets-client.mjs).
for (let i = 0; i < Number(process.env.SEED ?? 0); i += 20) {
  await Promise.all(
    Array.from({ length: Math.min(20, Number(process.env.SEED) - i) }, (_, k) =>
      call(
        'POST',
        '/api/v1/namespaces/default/configmaps',
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `cm-${String(i + k).padStart(4, '0')}`, labels: { app: 'bench', tier: 'backend' } },
          data: { 'config.yaml': 'x'.repeat(300), mode: 'bench' },
        }),
      ),
    ),
  );
}
// The user's key is made once per VG_DIR: RSA key generation is random work that would swamp the difference.
async function userTls() {
  const files = [join(dir, 'cg-user.crt'), join(dir, 'cg-user.key')];
  try {
    const [c, k] = await Promise.all(files.map((f) => readFile(f, 'utf8')));
    return { ca, cert: c, key: k };
  } catch {
    /* made below */
  }
  const c = generateClientCert({ certPem: ca, keyPem: caKey }, { user: 'cg-user', groups: ['cg'] });
  await Promise.all([writeFile(files[0], c.certPem), writeFile(files[1], c.keyPem)]);
  return { ca, cert: c.certPem, key: c.keyPem };
}
const who = process.env.AS === 'user' ? await userTls() : admin;
const N = Number(process.env.N ?? 1000);
const WARM = Number(process.env.WARM ?? 0);
let bad = 0;
/**
 * Runs callgrind_control on this process, keeping the event loop busy so valgrind reads the command.
 * MEASURE=cpu (no valgrind): '-z' notes the process's CPU time, '-d' prints the user+system µs per GET since.
 */
let cpuAt;
// PROF=<file> (with MEASURE=cpu): a V8 CPU profile over the N GETs alone (bench/inspectprof.mjs).
let profiling;
let mainAt;
/** The main thread's user+system CPU in µs (/proc, in clock ticks of 10 ms). */
async function mainThreadUs() {
  const t = await mainThreadTicks();
  return (t.user + t.system) * 10_000;
}
async function mainThreadTicks() {
  const f = (await readFile(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return { user: Number(f[11]), system: Number(f[12]) };
}
let ticksAt;
async function callgrind(flag) {
  if (process.env.MEASURE === 'cpu') {
    if (flag === '-z') {
      cpuAt = process.cpuUsage();
      mainAt = await mainThreadUs();
      ticksAt = await mainThreadTicks();
      profiling = await startProfile();
    } else {
      await profiling.stop();
      const d = process.cpuUsage(cpuAt);
      const t = await mainThreadTicks();
      console.log(`cpu_us_per_get ${((d.user + d.system) / N).toFixed(2)} main_us_per_get ${(((await mainThreadUs()) - mainAt) / N).toFixed(2)}`);
      // The split, for where a difference lies: user and kernel time, the whole process's and the main thread's.
      console.log(
        `user_us_per_get ${(d.user / N).toFixed(2)} system_us_per_get ${(d.system / N).toFixed(2)} main_user ${(((t.user - ticksAt.user) * 10_000) / N).toFixed(2)} main_system ${(((t.system - ticksAt.system) * 10_000) / N).toFixed(2)}`,
      );
    }
    return;
  }
  await callgrindControl(flag);
}
if (process.env.CLIENT === 'process') {
  // The client in a process valgrind does not follow: the counts are the server's alone.
  const { fork } = await import('node:child_process');
  const child = fork(new URL('./cg-gets-client.mjs', import.meta.url), [], { env: { ...process.env, CG_PORT: String(port), CG_TLS: JSON.stringify(who) } });
  const next = () => new Promise((r) => child.once('message', r));
  await next();
  await callgrind('-z');
  child.send('go');
  const done = await next();
  await callgrind('-d');
  bad = Number(String(done).split(' ')[1]);
} else if (WARM > 0) {
  bad += await runGets(port, who, WARM);
  await callgrind('-z');
  bad += await runGets(port, who, N);
  await callgrind('-d');
} else {
  bad += await runGets(port, who, N);
}
console.log('bad', bad);
agent.destroy();
await running.shutdown('done');
process.exit(0);
