// Server CPU time per GET for several flag sets, alternated (A B C … C B A …)
// so the machine's drift lands on each: `node bench/cpu-gets.mjs` runs
// bench/cg-gets.mjs with MEASURE=cpu (no valgrind; the client in its own
// process), which prints the server process's user+system µs per GET over N
// GETs after WARM. Unlike callgrind's count, this includes the kernel's part
// (socket writes were a fifth of a GET's profile) and the process's other
// threads (GC, compiler), i.e. what a saturated server's throughput is the
// inverse of. Configurations: CPU_CONFIGS, `;`-separated `name=flags` (flags
// space-separated; the first is the baseline; `name@<dist dir>=flags` runs
// another build, e.g. a copy of dist with one change, for an A/B), else APF off/on.
// Knobs: ROUNDS (3), N (20000), WARM (3000), INFLIGHT, PROTO (h1), AS (user).
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dirname } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const configs = (process.env.CPU_CONFIGS ?? 'apf-off=--enable-priority-and-fairness=false;apf-on=').split(';').map((c) => {
  const at = c.indexOf('=');
  const [name, dist] = c.slice(0, at).split('@');
  return { name, flags: c.slice(at + 1), dist };
});
const rounds = Number(process.env.ROUNDS ?? 3);
const env = {
  ...process.env,
  MEASURE: 'cpu',
  CLIENT: 'process',
  N: process.env.N ?? '20000',
  WARM: process.env.WARM ?? '3000',
  PROTO: process.env.PROTO ?? 'h1',
  AS: process.env.AS ?? 'user',
};

function once(flags, dist) {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['cg-gets.mjs'],
      { cwd: here, env: { ...env, FLAGS: flags, ...(dist ? { DIST: dist } : {}) }, maxBuffer: 1 << 20 },
      (err, out) => {
        if (err) {
          reject(err);
          return;
        }
        const m = /cpu_us_per_get ([\d.]+) main_us_per_get ([\d.]+)/.exec(out);
        const bad = /bad (\d+)/.exec(out);
        if (!m || !bad || bad[1] !== '0') {
          reject(new Error(`no figure or failed GETs: ${out}`));
          return;
        }
        resolve({ all: Number(m[1]), main: Number(m[2]) });
      },
    ),
  );
}

const figures = new Map(configs.map((c) => [c.name, []]));
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? configs : [...configs].reverse();
  for (const c of order) figures.get(c.name).push(await once(c.flags, c.dist));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(
  `server CPU per GET (user+system µs; ${rounds} rounds of N=${env.N} after ${env.WARM}; ${env.PROTO}, as ${env.AS}); rate = ${configs[0].name}'s CPU / this CPU`,
);
for (const part of ['all', 'main']) {
  console.log(part === 'all' ? ' the whole process (every thread):' : ' its main thread (JavaScript; 10 ms ticks):');
  const base = median(figures.get(configs[0].name).map((x) => x[part]));
  for (const c of configs) {
    const xs = figures.get(c.name).map((x) => x[part]);
    console.log(
      `  ${c.name.padEnd(22)} median ${median(xs).toFixed(1)} µs  (${xs.map((x) => x.toFixed(1)).join(', ')})  rate ${((100 * base) / median(xs)).toFixed(1)}%`,
    );
  }
}
