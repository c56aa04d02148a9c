// Server-side apply figures (issue 7): SSA PATCH/s on a realistic Pod and a
// 100-key ConfigMap beside PUT of the same objects, and PUT with managedFields
// bookkeeping on vs off (lib/fieldmanager setUpdateTracking). Self-contained
// like bench/patch.ts: an in-process Gatehouse on the memory store, 16
// keep-alive connections from the same process — compare ratios.
import { setUpdateTracking } from '../lib/fieldmanager/index.js';
import { configMap, pod } from './patch.js';
import { CONNECTIONS, DURATION, rateLoop, withInProcessServer, type Call } from './inprocess.js';

const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const line = (what: string, pct: number, target: string) => console.log(`  ${what.padEnd(48)} ${pct.toFixed(0).padStart(7)} %   (${target})`);

async function measure(call: Call, label: string, path: string, obj: Record<string, unknown>): Promise<void> {
  const meta = obj['metadata'] as { name: string; labels: Record<string, string> };
  const item = `${path}/${meta.name}`;
  const withLabel = (i: number) => JSON.stringify({ ...obj, metadata: { ...meta, labels: { ...meta.labels, n: String(i) } } });
  const put = (what = `PUT ${label}`) => rateLoop(what, async (i) => (await call('PUT', item, withLabel(i), 'application/json')).status === 200);
  const created = await call('POST', path, JSON.stringify(obj), 'application/json');
  if (created.status !== 201) throw new Error(`create ${label}: ${created.status} ${created.text.slice(0, 200)}`);
  await put(); // warm-up
  // Alternating rounds, median of each: the JIT and the heap keep changing
  // over a run, so one round after the other favours whichever comes later.
  const tracked: number[] = [];
  const untracked: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    tracked.push(await put());
    setUpdateTracking(false);
    try { untracked.push(await put(`PUT ${label}, no managedFields bookkeeping`)); } finally { setUpdateTracking(true); }
  }
  const ssa = await rateLoop(`PATCH apply ${label}`, async (i) => (await call('PATCH', `${item}?fieldManager=bench&force=true`, withLabel(i), 'application/apply-patch+yaml')).status === 200);
  line(`server-side apply / PUT (${label})`, 100 * ssa / median(tracked), 'target ≥ 40%');
  line(`bookkeeping cost on PUT (${label}, median of ${ROUNDS})`, 100 * (median(untracked) / median(tracked) - 1), 'target ≤ 20%');
}

export async function runApplyBench(): Promise<void> {
  await withInProcessServer('apply', async (call) => {
    console.log(`\nSERVER-SIDE APPLY (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    const ns = '/api/v1/namespaces/default';
    await measure(call, 'Pod', `${ns}/pods`, pod('bench-apply-pod'));
    await measure(call, 'ConfigMap 100 keys', `${ns}/configmaps`, configMap('bench-apply-cm'));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runApplyBench();
