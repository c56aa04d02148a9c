// bin/kubectl-gatehouse's steps for `oidc-login get-token`, in order, each
// stamped (bench/oidclogin.ts reads the last line of stdout): Node's
// bootstrap up to this file's first line, the freshness check's module, the
// check itself, the plugin's modules, and the command (the cache read and the
// ExecCredential written); then the process's CPU time. With --floor it
// stamps an empty start only (Node's own cost, the baseline).
import { performance } from 'node:perf_hooks';

const marks = [['bootstrap', performance.now()]];
if (process.argv[2] === '--floor') {
  const cpu = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ bootstrap: marks[0][1], cpu: (cpu.user + cpu.system) / 1000 })}\n`);
  process.exit(0);
}
const mark = (name) => marks.push([name, performance.now()]);
const { buildIsFresh } = await import('../bin/fresh.js');
mark('entry');
if (!buildIsFresh(['gateway/cli'])) throw new Error('dist/ is not fresh: npm run build first');
mark('freshness');
const plugin = await import('../dist/gateway/cli/kubectl-gatehouse.js');
await import('../dist/gateway/cli/oidclogin/index.js');
mark('modules');
process.exitCode = await plugin.main(process.argv.slice(2));
mark('command');
const out = {};
let last = 0;
for (const [name, at] of marks) {
  out[name] = at - last;
  last = at;
}
out.total = last;
// CPU time of the whole process (user + system): steadier than wall time on a machine other work shares.
const cpu = process.cpuUsage();
out.cpu = (cpu.user + cpu.system) / 1000;
process.stdout.write(`${JSON.stringify(out)}\n`);
