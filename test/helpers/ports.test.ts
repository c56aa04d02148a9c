import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const helper = fileURLToPath(new URL('./ports.ts', import.meta.url));

/** Ports freePort gives in a fresh process with GATEHOUSE_PORTS set (the range is read at load). */
function portsWith(range: string, n: number): number[] {
  const script = `const { freePort } = await import(${JSON.stringify(helper)}); const ps = []; for (let i = 0; i < ${n}; i++) ps.push(await freePort()); console.log(JSON.stringify(ps));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, GATEHOUSE_PORTS: range },
    encoding: 'utf8',
  });
  return JSON.parse(out) as number[];
}

describe('freePort', () => {
  it('stays inside GATEHOUSE_PORTS', () => {
    for (const p of portsWith('24990-24999', 5)) assert.ok(p >= 24990 && p <= 24999, `port ${p}`);
  });

  it('without GATEHOUSE_PORTS takes a port the kernel picks', () => {
    const [p] = portsWith('', 1);
    assert.ok(p! > 0 && p! < 65536);
  });
});
