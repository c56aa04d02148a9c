// Instructions per LIST limit=500 page at a given store size, the server's own: a Gatehouse in this process
// on a copy of a data directory already filled (DATA, e.g. by bench/scale.ts's shape of ConfigMaps in
// namespace `scale`; STORE=file, the default, opens it), the pages asked by bench/cg-list-client.mjs in a
// child process that valgrind does not follow, C connections each walking the collection by its continue
// tokens (the last page starts over). WARM pages first, then callgrind's counters are zeroed, N pages run,
// and the counters are dumped (callgrind_control -z / -d, as bench/cg-gets.mjs): instructions per page = the
// dump's total / N. --separate-threads=yes splits the main thread from GC and JIT helpers.
//   CG_KEEP=/tmp/cgl bench/cg-main.sh 100k cg-list.mjs DATA=/tmp/d100k WARM=400 N=400
// MEASURE=cpu (no valgrind): CPU µs per page over the N pages instead (the process, its main thread, the other
// threads, and the system time). C (client connections, default 4); GATEHOUSE_PORTS=<lo>-<hi> for the port.
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fork } from 'node:child_process';
import { callgrindControl } from './cgcontrol.mjs';
const dist = process.env.DIST ?? '../dist';
const { parseServeFlags } = await import(`${dist}/gateway/config/flags.js`);
const { startServer } = await import(`${dist}/gateway/server/app.js`);
(await import(`${dist}/gateway/cli/harden.js`)).hardenIntrinsics();
const dir = mkdtempSync(join(tmpdir(), 'cg-list-'));
cpSync(process.env.DATA, dir, { recursive: true });
// GATEHOUSE_PORTS=<lo>-<hi>: a random port in that range (default 20000-39999).
const [lo, hi] = (process.env.GATEHOUSE_PORTS ?? '20000-39999').split('-').map(Number);
const port = lo + Math.floor(Math.random() * (hi - lo + 1));
const parsed = parseServeFlags([
  '--secure-port',
  String(port),
  '--data-dir',
  dir,
  '--storage-backend',
  process.env.STORE ?? 'file',
  '--authorization-mode',
  'AlwaysAllow',
]);
if ('error' in parsed) throw new Error(parsed.error);
const running = await startServer(parsed.options, { log: () => {} });
const tls = Object.fromEntries(
  ['ca.crt', 'admin.crt', 'admin.key'].map((f) => [f.split('.')[f === 'ca.crt' ? 0 : 1], readFileSync(join(dir, 'pki', f), 'utf8')]),
);
const child = fork(new URL('./cg-list-client.mjs', import.meta.url), [], { env: { ...process.env, CG_PORT: String(port), CG_TLS: JSON.stringify(tls) } });
const next = () => new Promise((r) => child.once('message', r));
let cpuAt;
let mainAt;
/** The main thread's user+system clock ticks (10 ms) from /proc. */
function mainTicks() {
  const f = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(f[11]) + Number(f[12]);
}
async function callgrind(flag) {
  if (process.env.MEASURE === 'cpu') {
    const n = Number(process.env.N ?? 400);
    if (flag === '-z') {
      cpuAt = process.cpuUsage();
      mainAt = mainTicks();
    } else {
      const d = process.cpuUsage(cpuAt);
      const all = (d.user + d.system) / n;
      const main = ((mainTicks() - mainAt) * 10_000) / n;
      console.log(
        `cpu_us_per_page ${all.toFixed(0)} main_thread ${main.toFixed(0)} other_threads ${(all - main).toFixed(0)} system ${(d.system / n).toFixed(0)}`,
      );
    }
    return;
  }
  await callgrindControl(flag);
}
await next(); // warmed
await callgrind('-z');
child.send('go');
const done = await next();
await callgrind('-d');
console.log(String(done));
await running.shutdown('done');
rmSync(dir, { recursive: true, force: true });
process.exit(0);
