// CPU per request of the HTTP/2 dispatcher alone (gateway/aggregation/alpndispatch.ts), for an A/B of its
// per-stream work below the machine's noise: one process, a node:http2 backend answering a fixed JSON body,
// AlpnDispatcher streams to it with kubectl's headers and the identity pairs, 16 in flight; each round
// N requests through each build, alternating, process.cpuUsage per request (backend and client both in
// it, the same for both builds).
//   node bench/h2dispatch.mjs <dist A> [<dist B>]   (N, ROUNDS, WARM; CG_OUT: instructions under callgrind, below)
import { createSecureServer } from 'node:http2';
import { Agent } from 'undici';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dists = process.argv.slice(2).map((d) => resolve(d));
const N = Number(process.env.N ?? 4000);
const ROUNDS = Number(process.env.ROUNDS ?? 10);
const { generateCa, generateServingCert } = await import(pathToFileURL(`${dists[0]}/certs/pki.js`).href);
const ca = generateCa('h2dispatch-ca');
const leaf = generateServingCert(ca, { commonName: 'backend.svc', hosts: ['backend.svc'] });
const answer = Buffer.from(JSON.stringify({ kind: 'Widget', apiVersion: 'samples.gatehouse.dev/v1', metadata: { name: 'w0' }, spec: { color: 'red' } }));
const server = createSecureServer({ cert: leaf.certPem, key: leaf.keyPem, allowHTTP1: true, settings: { maxConcurrentStreams: 1000 } }, (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer);
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const origin = `https://127.0.0.1:${server.address().port}`;
const tls = { ca: ca.certPem, servername: 'backend.svc' };
const builds = [];
for (const d of dists) {
  const { AlpnDispatcher } = await import(pathToFileURL(`${d}/gateway/aggregation/alpndispatch.js`).href);
  builds.push({ name: d, disp: new AlpnDispatcher(tls, new Agent({ connect: tls }), 30_000) });
}
const headers = [
  'accept',
  'application/json, */*',
  'user-agent',
  'kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef',
  'kubectl-command',
  'kubectl get',
  'kubectl-session',
  '0d7c3a4b-1111-2222-3333-444455556666',
  'accept-encoding',
  'gzip',
  'host',
  'sample-api.gatehouse-samples.svc:443',
  'X-Remote-User',
  'admin',
  'X-Remote-Group',
  'system:masters',
];
const one = (disp) =>
  new Promise((done, fail) => {
    disp.dispatch(
      {
        origin,
        path: '/apis/samples.gatehouse.dev/v1/namespaces/default/widgets/w0',
        method: 'GET',
        headers,
        body: null,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      },
      {
        onConnect() {},
        onRequestSent() {},
        onHeadPairs: (code) => code === 200 || fail(new Error(String(code))),
        onData: () => true,
        onComplete: () => done(),
        onError: fail,
      },
    );
  });
const run = async (disp, n) => {
  const lane = async () => {
    for (let i = 0; i < n / 16; i++) await one(disp);
  };
  await Promise.all(Array.from({ length: 16 }, lane));
};
for (const b of builds) await run(b.disp, Number(process.env.WARM ?? 4000));
if (process.env.CG_OUT) {
  // Under callgrind (one build): the counters zeroed after the warm-up and dumped after N requests, so the dump holds them alone:
  //   CG_OUT=<dir> valgrind --tool=callgrind --smc-check=all-non-file --callgrind-out-file=<dir>/cg.%p node bench/h2dispatch.mjs <dist>
  const { execFileSync } = await import('node:child_process');
  const { readdirSync, readFileSync } = await import('node:fs');
  execFileSync('callgrind_control', ['-z', String(process.pid)]);
  await run(builds[0].disp, N);
  execFileSync('callgrind_control', ['-d', String(process.pid)]);
  const dump = readdirSync(process.env.CG_OUT).find((f) => f.startsWith(`cg.${process.pid}.`));
  const ir = Number(/^summary: (\d+)/m.exec(readFileSync(`${process.env.CG_OUT}/${dump}`, 'utf8'))[1]);
  console.log(`${builds[0].name}: ${Math.round(ir / N)} instructions per request (N=${N})`);
  process.exit(0);
}
const per = builds.map(() => []);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < builds.length; k++) {
    const i = r % 2 ? builds.length - 1 - k : k;
    const c0 = process.cpuUsage();
    await run(builds[i].disp, N);
    const c = process.cpuUsage(c0);
    per[i].push((c.user + c.system) / N);
  }
}
const med = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (let i = 0; i < builds.length; i++)
  console.log(`${builds[i].name}: median ${med(per[i]).toFixed(1)} µs of CPU per request (rounds: ${per[i].map((x) => x.toFixed(0)).join(' ')})`);
if (builds.length === 2) {
  const d = per[1].map((x, r) => x - per[0][r]);
  console.log(`B − A per round: median ${med(d).toFixed(1)} µs (${d.map((x) => x.toFixed(1)).join(' ')})`);
}
for (const b of builds) await b.disp.destroy();
server.close();
