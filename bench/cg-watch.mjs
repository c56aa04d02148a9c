// Instructions per watch event (the watch sibling of cg-gets.mjs): a Gatehouse
// on the memory store in this process; a child process that valgrind does not
// follow opens W HTTP/1.1 watches on one namespace's configmaps (W keep-alive
// TLS connections, `?watch=1` from the namespace's empty state) and creates
// configmaps there, 4 in flight; every create is one event on every watch.
// After WARM creates (all their events read), callgrind's counters are zeroed,
// N creates run, the child waits until each watch has read its N events, and
// the counters are dumped: the dump's main-thread total / N is a create fanned
// out to W watchers, the figure the watch path's tricks are measured against.
//   VG_DIR=/tmp/cgw W=100 WARM=400 N=400 valgrind --tool=callgrind --smc-check=all-non-file \
//     --separate-threads=yes --callgrind-out-file=/tmp/cgw.out node bench/cg-watch.mjs   # /tmp/cgw.out.1-01 / N
// DIST: the build (default ../dist; an earlier or patched copy for an A/B);
// MEASURE=cpu (no valgrind): prints the process's and the main thread's CPU per
// create instead. VG_DIR: a data directory reused across runs (the dev PKI is made once).
import { execFile, fork } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NS = 'cgw';
const W = Number(process.env.W ?? 100);
const N = Number(process.env.N ?? 400);
const WARM = Number(process.env.WARM ?? 400);

/** One HTTPS call through `agent`; its status code. */
function call(agent, port, method, path, body) {
  return new Promise((res, rej) => {
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
}

if (process.send && process.env.CGW_PORT) {
  // The client: W watches, then the creates; reports after each phase's events have all arrived.
  const port = Number(process.env.CGW_PORT);
  const tls = JSON.parse(process.env.CGW_TLS ?? '{}');
  const watchAgent = new Agent({ keepAlive: true, ...tls, maxSockets: W });
  const lines = new Array(W).fill(0);
  await Promise.all(
    lines.map(
      (_, i) =>
        new Promise((res, rej) => {
          const r = request({ host: '127.0.0.1', port, path: `/api/v1/namespaces/${NS}/configmaps?watch=1`, agent: watchAgent }, (resp) => {
            if (resp.statusCode !== 200) rej(new Error(`watch answered ${resp.statusCode}`));
            resp.on('data', (d) => {
              for (let k = d.indexOf(10); k !== -1; k = d.indexOf(10, k + 1)) lines[i]++;
            });
            res();
          });
          r.on('error', rej);
          r.end();
        }),
    ),
  );
  const agent = new Agent({ keepAlive: true, ...tls, maxSockets: 4 });
  let bad = 0;
  let made = 0;
  const creates = async (n) => {
    for (let i = 0; i < n; i += 4) {
      const st = await Promise.all(
        [0, 1, 2, 3].map(() =>
          call(
            agent,
            port,
            'POST',
            `/api/v1/namespaces/${NS}/configmaps`,
            JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${made++}`, labels: { app: 'x' } }, data: { a: 'x'.repeat(100) } }),
          ),
        ),
      );
      bad += st.filter((s) => s !== 201).length;
    }
    // Every watch has read every event so far: the delivery is inside the window.
    while (lines.some((l) => l < made)) await new Promise((r) => setTimeout(r, 20));
  };
  await creates(WARM);
  process.send('warm');
  await new Promise((r) => process.once('message', r));
  await creates(N);
  process.send(`done ${bad} ${made} ${Math.min(...lines)}`);
  process.disconnect();
} else {
  const dist = process.env.DIST ?? '../dist';
  const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
  const { startServer } = await import(`${dist}/gateway/server/app.js`);
  const { devPkiPaths } = await import(`${dist}/certs/devpki.js`);
  (await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();
  const dir = process.env.VG_DIR ?? (await mkdtemp(join(tmpdir(), 'vg-')));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const parsed = parseServeFlags([
    '--secure-port',
    String(port),
    '--data-dir',
    dir,
    '--storage-backend',
    'memory',
    '--authorization-mode',
    'AlwaysAllow',
    // No kube-root-ca.crt ConfigMap in the namespace: each watch's lines are then the creates' events alone.
    '--controllers=*,-serviceaccount,-root-ca-cert-publisher',
  ]);
  if ('error' in parsed) throw new Error(parsed.error);
  const running = await startServer(parsed.options, { log: () => {} });
  const pki = devPkiPaths(dir);
  const [ca, cert, key] = await Promise.all([pki.caCert, pki.adminCert, pki.adminKey].map((f) => readFile(f, 'utf8')));
  const admin = { ca, cert, key };
  const agent = new Agent({ keepAlive: true, ...admin, maxSockets: 1 });
  while ((await call(agent, port, 'GET', '/readyz').catch(() => 0)) !== 200) await new Promise((r) => setTimeout(r, 50));
  await call(agent, port, 'POST', '/api/v1/namespaces', JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }));
  agent.destroy();
  let cpuAt;
  let mainAt;
  const mainThreadUs = async () => {
    const f = (await readFile(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  };
  /** callgrind_control on this process (the event loop kept busy so valgrind reads it), or the CPU clocks with MEASURE=cpu. */
  const counters = async (flag) => {
    if (process.env.MEASURE === 'cpu') {
      if (flag === '-z') {
        cpuAt = process.cpuUsage();
        mainAt = await mainThreadUs();
      } else {
        const d = process.cpuUsage(cpuAt);
        console.log(`cpu_us_per_create ${((d.user + d.system) / N).toFixed(2)} main_us_per_create ${(((await mainThreadUs()) - mainAt) / N).toFixed(2)}`);
      }
      return;
    }
    const tick = setInterval(() => {}, 5);
    await new Promise((res, rej) => execFile('callgrind_control', [flag, String(process.pid)], (err) => (err ? rej(err) : res())));
    clearInterval(tick);
  };
  const child = fork(new URL(import.meta.url), [], { env: { ...process.env, CGW_PORT: String(port), CGW_TLS: JSON.stringify(admin) } });
  const next = () => new Promise((r) => child.once('message', r));
  await next();
  await counters('-z');
  child.send('go');
  const done = String(await next());
  await counters('-d');
  console.log(`W ${W} N ${N} ${done}`);
  await running.shutdown('done');
  process.exit(0);
}
