// Leader election figures: three `gatehouse serve` processes (the built
// dist/) on the local Redis with the default election timings (15 s lease,
// 10 s renew deadline, 2 s retry period). Failover: the leader is SIGKILLed
// and the lease polled through a survivor until another process holds it,
// BENCH_LE_ROUNDS times (default 10; a fresh process replaces the killed one
// between rounds). Write load: over BENCH_LE_WINDOW_S seconds (default 20) of
// steady state, the lease's writes seen by a watch, and each process's lease
// reads and writes from its own etcd_request_duration_seconds counts (the
// identity lease's renewals included, shown apart). Targets: failover ≤ lease
// duration + 2 × retry period; ≤ 1 election write per retry period per process.
// `BENCH_ONLY=leaderelection npm run bench`, or alone:
// `node --import tsx bench/leaderelection.ts` (after `npm run build`).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { HttpsClient } from '../test/helpers/client.js';
import { drop } from './redis.js';
import { freePort } from '../test/helpers/ports.js';
import { Samples } from './stats.js';
import { recordRow } from './summary.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'gatehouse.js');
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const ROUNDS = Number(process.env['BENCH_LE_ROUNDS'] ?? 10);
const WINDOW_S = Number(process.env['BENCH_LE_WINDOW_S'] ?? 20);
const LEASE_S = 15;
const RETRY_S = 2;
const ELECTION = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/gatehouse-controllers';

interface Member {
  readonly child: ChildProcess;
  readonly identity: string;
  readonly client: HttpsClient;
  output: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function start(dataDir: string, prefix: string): Promise<Member> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [BIN, 'serve', `--secure-port=${port}`, `--data-dir=${dataDir}`, '--storage-backend=redis', `--redis-url=${REDIS_URL}`, `--storage-prefix=${prefix}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const seen = new Promise<string>((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString('utf8');
      const m = / as (\S+)\n/.exec(output.slice(output.indexOf('attempting to acquire leader lease')));
      if (output.includes('Gatehouse is serving on') && m) resolve(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`gatehouse exited (${code}) before serving:\n${output}`)));
  });
  const identity = await seen;
  const pki = join(dataDir, 'pki');
  const client = new HttpsClient(`https://127.0.0.1:${port}`, {
    ca: readFileSync(join(pki, 'ca.crt'), 'utf8'),
    cert: readFileSync(join(pki, 'admin.crt'), 'utf8'),
    key: readFileSync(join(pki, 'admin.key'), 'utf8'),
  });
  const m: Member = { child, identity, client, output };
  child.stdout!.on('data', (d: Buffer) => (m.output += d.toString('utf8')));
  return m;
}

async function holder(via: Member): Promise<string> {
  const r = await via.client.request('GET', ELECTION);
  return r.status === 200 ? String(r.json.spec.holderIdentity ?? '') : '';
}

/** `etcd_request_duration_seconds_count` of the lease type per operation, from one process's /metrics. */
async function leaseOps(m: Member): Promise<Record<string, number>> {
  const text = (await m.client.request('GET', '/metrics')).text;
  const out: Record<string, number> = {};
  const re = /^etcd_request_duration_seconds_count\{operation="(\w+)",type="leases\.coordination\.k8s\.io"\} (\d+)/gm;
  for (let x = re.exec(text); x; x = re.exec(text)) out[x[1]!] = Number(x[2]);
  return out;
}

function kill(m: Member): void {
  m.client.close();
  m.child.kill('SIGKILL');
}

export async function runLeaderElectionBench(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-le-'));
  const prefix = `gh-bench-le-${randomBytes(4).toString('hex')}`;
  const fleet: Member[] = [];
  try {
    // The first process writes the dev PKI the others reuse (one admin client for all).
    fleet.push(await start(dataDir, prefix));
    fleet.push(...(await Promise.all([start(dataDir, prefix), start(dataDir, prefix)])));
    const leaderNow = async (via: Member, not?: string): Promise<Member> => {
      for (;;) {
        const h = await holder(via).catch(() => '');
        const m = fleet.find((x) => x.identity === h && x.identity !== not);
        if (m) return m;
        await sleep(50);
      }
    };
    let leader = await leaderNow(fleet[0]!);

    // Steady state: writes to the election lease (a watch) and every process's lease operations.
    await sleep(2 * RETRY_S * 1000);
    const before = await Promise.all(fleet.map(leaseOps));
    const rv = (await fleet[0]!.client.request('GET', ELECTION)).json.metadata.resourceVersion;
    const w = await fleet[0]!.client.watch(
      `${ELECTION.replace('/gatehouse-controllers', '')}?watch=1&fieldSelector=metadata.name%3Dgatehouse-controllers&resourceVersion=${rv}`,
    );
    await sleep(WINDOW_S * 1000);
    const after = await Promise.all(fleet.map(leaseOps));
    const events: Array<{ object: { spec: { holderIdentity: string } } }> = [];
    for (let e = await w.next(1); e; e = await w.next(1)) events.push(e);
    w.stop();
    const periods = WINDOW_S / RETRY_S;
    const byHolder = new Map<string, number>();
    for (const e of events) byHolder.set(e.object.spec.holderIdentity, (byHolder.get(e.object.spec.holderIdentity) ?? 0) + 1);
    const leaderWrites = (byHolder.get(leader.identity) ?? 0) / periods;
    const otherWrites = [...byHolder].filter(([h]) => h !== leader.identity).reduce((n, [, c]) => n + c, 0);
    process.stdout.write(
      `  election lease writes over ${WINDOW_S} s (${periods} retry periods): leader ${leaderWrites.toFixed(2)} per retry period, candidates ${otherWrites} in all\n`,
    );
    for (const [k, m] of fleet.entries()) {
      const d = (op: string) => (after[k]![op] ?? 0) - (before[k]![op] ?? 0);
      const writes = d('update') + d('create');
      process.stdout.write(
        `  process ${k + 1}${m === leader ? ' (leader)' : ''}: lease reads ${(d('get') / periods).toFixed(2)}, lease writes ${(writes / periods).toFixed(2)} per retry period ` +
          `(election and identity lease; the identity lease alone: 1 write per ${10} s = ${(RETRY_S / 10).toFixed(2)} per retry period)\n`,
      );
    }
    recordRow({ name: 'leader election writes per retry period per process', value: leaderWrites, unit: 'writes', target: '≤ 1', atMost: 1 });

    // Failover after SIGKILL of the leader.
    const failover = new Samples();
    for (let round = 0; round < ROUNDS; round++) {
      const survivor = fleet.find((m) => m !== leader)!;
      const t0 = performance.now();
      kill(leader);
      const next = await leaderNow(survivor, leader.identity);
      const ms = performance.now() - t0;
      failover.add(ms);
      process.stdout.write(`  round ${round + 1}: failover ${(ms / 1000).toFixed(2)} s\n`);
      fleet.splice(fleet.indexOf(leader), 1);
      fleet.push(await start(dataDir, prefix));
      leader = next;
      // The replacement is a candidate like the others before the next kill.
      await sleep(RETRY_S * 1000);
    }
    const { p50, max: worst } = failover.summary();
    const target = (LEASE_S + 2 * RETRY_S) * 1000;
    process.stdout.write(
      `  failover after SIGKILL (${ROUNDS} rounds): p50 ${(p50 / 1000).toFixed(2)} s, worst ${(worst / 1000).toFixed(2)} s (target ≤ ${target / 1000} s)\n`,
    );
    recordRow({ name: 'leader failover after SIGKILL, p50', value: p50, unit: 'ms', target: `≤ ${target / 1000} s`, atMost: target });
    recordRow({ name: 'leader failover after SIGKILL, worst', value: worst, unit: 'ms', target: `≤ ${target / 1000} s`, atMost: target });
  } finally {
    for (const m of fleet) kill(m);
    rmSync(dataDir, { recursive: true, force: true });
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    await drop(client, prefix).catch(() => undefined);
    client.disconnect();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.stdout.write('=== Leader election (bench/leaderelection.ts, three processes on Redis) ===\n');
  await runLeaderElectionBench();
}
