// Server-side apply figures: SSA PATCH/s on a realistic Pod and a
// 100-key ConfigMap beside PUT of the same objects, and the managedFields
// bookkeeping's share of a PUT: trackUpdate timed on the very transitions the
// PUTs make, beside the PUT rate (production code has no switch to turn the
// bookkeeping off). Self-contained like bench/patch.ts: an in-process
// Gatehouse on the memory store, 16 keep-alive connections from the same
// process — compare ratios.
import { performance } from 'node:perf_hooks';
import type { KObject } from '../lib/api/meta.js';
import { deepFreezeJson } from '../lib/api/json.js';
import { trackUpdate, type WriteContext } from '../lib/fieldmanager/index.js';
import { builtinRegistry } from '../lib/registry/index.js';
import { configMap, pod } from './patch.js';
import { CONNECTIONS, DURATION, rateLoop, withInProcessServer, type Call } from './inprocess.js';

const ROUNDS = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const line = (what: string, pct: number, target: string) => console.log(`  ${what.padEnd(48)} ${pct.toFixed(0).padStart(7)} %   (${target})`);
const registry = builtinRegistry();

/** Seconds of CPU one trackUpdate takes on the PUT's transition from `stored` (as the server keeps it) to a relabelled body. */
function trackUpdateSeconds(stored: KObject, resource: string, relabel: (i: number) => string): number {
  const node = registry.lookup('', 'v1', resource)?.schema;
  const c: WriteContext = { manager: 'bench', apiVersion: 'v1', subresource: '', now: Date.now(), node };
  const nexts = Array.from({ length: 2000 }, (_, i) => {
    const body = JSON.parse(relabel(i)) as KObject;
    return { ...body, metadata: { ...stored.metadata, labels: body.metadata.labels, managedFields: undefined } } as KObject;
  });
  const times: number[] = [];
  for (let round = 0; round < 5; round++) {
    const copies = nexts.map((n) => ({ ...n, metadata: { ...n.metadata } }));
    const t0 = performance.now();
    for (const next of copies) trackUpdate(stored, next, undefined, c);
    times.push((performance.now() - t0) / 1000 / copies.length);
  }
  return median(times);
}

async function measure(call: Call, label: string, path: string, resource: string, obj: Record<string, unknown>): Promise<void> {
  const meta = obj['metadata'] as { name: string; labels: Record<string, string> };
  const item = `${path}/${meta.name}`;
  const withLabel = (i: number) => JSON.stringify({ ...obj, metadata: { ...meta, labels: { ...meta.labels, n: String(i) } } });
  const put = (what = `PUT ${label}`) => rateLoop(what, async (i) => (await call('PUT', item, withLabel(i), 'application/json')).status === 200);
  const created = await call('POST', path, JSON.stringify(obj), 'application/json');
  if (created.status !== 201) throw new Error(`create ${label}: ${created.status} ${created.text.slice(0, 200)}`);
  await put(); // warm-up
  const rates: number[] = [];
  for (let round = 0; round < ROUNDS; round++) rates.push(await put());
  // Frozen, as the store hands it out (decoded managedFields are cached for frozen lists only).
  const stored = deepFreezeJson(JSON.parse((await call('GET', item, '', 'application/json')).text) as KObject);
  const track = trackUpdateSeconds(stored, resource, withLabel);
  // One process serves and loads: 1/rate is its CPU per PUT, of which trackUpdate takes `track`;
  // without it the rate would rise by track / (1/rate − track).
  const perPut = 1 / median(rates);
  console.log(`  ${`trackUpdate on that PUT (${label})`.padEnd(48)} ${(track * 1e6).toFixed(1).padStart(7)} µs   (of ${(perPut * 1e6).toFixed(0)} µs per PUT)`);
  const ssa = await rateLoop(
    `PATCH apply ${label}`,
    async (i) => (await call('PATCH', `${item}?fieldManager=bench&force=true`, withLabel(i), 'application/apply-patch+yaml')).status === 200,
  );
  line(`server-side apply / PUT (${label})`, (100 * ssa) / median(rates), 'target ≥ 40%');
  line(`bookkeeping cost on PUT (${label}, median of ${ROUNDS})`, (100 * track) / (perPut - track), 'target ≤ 20%');
}

export async function runApplyBench(): Promise<void> {
  await withInProcessServer('apply', async (call) => {
    console.log(`\nSERVER-SIDE APPLY (in-process memory store, ${CONNECTIONS} connections, ${DURATION} ms each)`);
    const ns = '/api/v1/namespaces/default';
    await measure(call, 'Pod', `${ns}/pods`, 'pods', pod('bench-apply-pod'));
    await measure(call, 'ConfigMap 100 keys', `${ns}/configmaps`, 'configmaps', configMap('bench-apply-cm'));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await runApplyBench();
