// What an AsyncLocalStorage costs every await of the process, by Node
// version (gateway/tracing/README.md, "Cost when off, and at low sampling"):
// awaits timed before any AsyncLocalStorage was used, then after one was
// entered and disabled again (the tracing context manager switched off when
// no recorded request is in flight), then while one is entered. Each phase in
// a fresh child process, since what the first use changes stays for the
// process's life. `node bench/asynccontext.mjs` (a few seconds).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const AWAITS = 2_000_000;
const phase = process.argv[2];
if (phase) {
  const { AsyncLocalStorage } = await import('node:async_hooks');
  const leaf = async (i) => i + 1;
  const four = async (i) => {
    let s = 0;
    for (let k = 0; k < 4; k++) s += await leaf(i + k);
    return s;
  };
  if (phase === 'disabled') {
    const als = new AsyncLocalStorage();
    await als.run(1, () => leaf(0));
    als.disable();
  }
  if (phase === 'entered') new AsyncLocalStorage().enterWith(1);
  const times = [];
  for (let r = 0; r < 5; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < AWAITS / 4; i++) await four(i);
    times.push(Number(process.hrtime.bigint() - t0) / AWAITS);
  }
  times.sort((a, b) => a - b);
  process.stdout.write(String(times[2]));
} else {
  const self = fileURLToPath(import.meta.url);
  const ns = {};
  for (const p of ['never', 'disabled', 'entered']) ns[p] = Number(execFileSync(process.execPath, [...process.execArgv, self, p], { encoding: 'utf8' }));
  console.log(`Node ${process.version}: ns per await (median of 5 rounds of ${AWAITS.toLocaleString('en-US')}, each phase in its own process)`);
  console.log(`  no AsyncLocalStorage ever used        ${ns.never.toFixed(1)} ns`);
  console.log(`  one used once, then disabled          ${ns.disabled.toFixed(1)} ns  (${((100 * ns.disabled) / ns.never).toFixed(0)}%)`);
  console.log(`  one entered (context manager on)      ${ns.entered.toFixed(1)} ns  (${((100 * ns.entered) / ns.never).toFixed(0)}%)`);
}
