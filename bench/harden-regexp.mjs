// What hardening (gateway/cli/harden.ts) costs a RegExp test: ns per short
// `.test` (a config-key pattern and Node's header-value check) unhardened and
// hardened, each in its own process, alternated. Run alone, after `npm run build`:
//   node bench/harden-regexp.mjs            (the parent: 3 rounds of both)
//   node bench/harden-regexp.mjs <none|hardened>   (one process, one figure)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const variant = process.argv[2];
if (variant === undefined) {
  const self = fileURLToPath(import.meta.url);
  for (let round = 0; round < 3; round++) {
    for (const v of round % 2 ? ['hardened', 'none'] : ['none', 'hardened']) {
      process.stdout.write(spawnSync(process.execPath, [self, v], { encoding: 'utf8' }).stdout);
    }
  }
} else {
  if (variant === 'hardened') (await import('../dist/gateway/cli/harden.js')).hardenIntrinsics();
  const key = /^[-._a-zA-Z0-9]+$/;
  const headerChar = /[^\t\x20-\x7e\x80-\xff]/;
  const inputs = ['app.properties', 'KEY_NAME', 'a', 'content-type', 'x-remote-user'];
  let n = 0;
  for (let i = 0; i < 2e6; i++) n += key.test(inputs[i % 5]) ? 1 : 0;
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < 5e6; i++) n += (key.test(inputs[i % 5]) ? 1 : 0) + (headerChar.test(inputs[i % 5]) ? 1 : 0);
  const ns = Number(process.hrtime.bigint() - t0) / 1e7;
  console.log(`${variant.padEnd(8)} ${ns.toFixed(1)} ns per RegExp test (${n} matched)`);
}
