// What an idle watch keeps on the heap, object by object: a Gatehouse
// (memory store, the bench's flags) and the bare server each take a heap
// snapshot before and after N idle watches are opened by the load generator
// (`BENCH_WATCHERS`, default 1000); the difference of the two snapshots,
// grouped by V8's node type and constructor name, divided by N, is printed
// for both servers side by side (self sizes: what each watch adds, by kind).
// `node --import tsx bench/watch-heap.ts [outdir]` after `npm run build`;
// the snapshots stay in outdir (default a temporary directory) for DevTools.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Admin } from './admin.js';
import { devPki, freePort, startChild, type Child, serverTlsArgs } from './procs.js';

const N = Number(process.env['BENCH_WATCHERS'] ?? 1000);
const TOP = Number(process.env['BENCH_TOP'] ?? 40);

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per "type name" of a snapshot. */
async function groups(file: string): Promise<Map<string, { count: number; size: number }>> {
  const s = JSON.parse(await readFile(file, 'utf8')) as Snapshot;
  const f = s.snapshot.meta.node_fields;
  const width = f.length;
  const iType = f.indexOf('type');
  const iName = f.indexOf('name');
  const iSize = f.indexOf('self_size');
  const types = s.snapshot.meta.node_types[0];
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + iType]!]!;
    let name = s.strings[s.nodes[i + iName]!]!;
    // Strings and code by type alone: their names are their contents.
    if (type === 'string' || type === 'concatenated string' || type === 'sliced string' || type === 'code' || type === 'number') name = '';
    else if (name.length > 60) name = `${name.slice(0, 57)}...`;
    const key = `${type} ${name}`;
    const g = out.get(key);
    if (g) {
      g.count++;
      g.size += s.nodes[i + iSize]!;
    } else out.set(key, { count: 1, size: s.nodes[i + iSize]! });
  }
  return out;
}

type Diff = Map<string, { count: number; size: number }>;

async function diff(before: string, after: string): Promise<Diff> {
  const [a, b] = [await groups(before), await groups(after)];
  const out: Diff = new Map();
  for (const [k, v] of b) {
    const w = a.get(k) ?? { count: 0, size: 0 };
    if (v.count !== w.count || v.size !== w.size) out.set(k, { count: (v.count - w.count) / N, size: (v.size - w.size) / N });
  }
  for (const [k, w] of a) if (!b.has(k)) out.set(k, { count: -w.count / N, size: -w.size / N });
  return out;
}

function total(d: Diff): number {
  let t = 0;
  for (const v of d.values()) t += v.size;
  return t;
}

async function phase(
  server: Child,
  load: Child,
  port: number,
  tls: { ca: string; cert: string; key: string },
  path: string,
  dir: string,
  name: string,
): Promise<Diff> {
  const before = join(dir, `${name}-before.heapsnapshot`);
  const after = join(dir, `${name}-after.heapsnapshot`);
  await server.call('snapshot', { file: before });
  const opened = await load.call<{ opened: number }>('watchOpen', { target: { port, ...tls }, n: N, path });
  if (opened.opened !== N) throw new Error(`${name}: opened ${opened.opened} of ${N}`);
  await sleep(1000);
  await server.call('snapshot', { file: after });
  await load.call('watchClose');
  await sleep(500);
  return diff(before, after);
}

async function main(): Promise<void> {
  const keep = process.argv[2];
  const root = await mkdtemp(join(tmpdir(), 'gatehouse-watch-heap-'));
  const dir = keep ?? root;
  const children: Child[] = [];
  try {
    const memPort = await freePort();
    const memDir = join(root, 'memory');
    const mem = await startChild(
      'gatehouse-memory',
      './server.ts',
      [
        '--secure-port',
        String(memPort),
        '--data-dir',
        memDir,
        '--storage-backend',
        'memory',
        '--authorization-mode',
        'AlwaysAllow',
        '--max-connections-per-client-address=0',
        '--controllers=*,-serviceaccount,-root-ca-cert-publisher',
      ],
      0,
      ['--expose-gc'],
    );
    children.push(mem);
    const { pki, tls } = await devPki(memDir);
    const barePort = await freePort();
    const bare = await startChild('bare-https', './bare.ts', [String(barePort), ...serverTlsArgs(pki)], 0, ['--expose-gc']);
    children.push(bare);
    const load = await startChild('loadgen', './loadgen.ts', [], 1);
    children.push(load);
    const admin = new Admin(memPort, tls);
    await admin.ready();
    await admin.must('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench-watch' } });
    // One watch opened and closed first: what the first watch of a process makes once (metrics series, caches) is not counted.
    await load.call('watchOpen', { target: { port: memPort, ...tls }, n: 1, path: '/api/v1/namespaces/bench-watch/configmaps?watch=1' });
    await load.call('watchClose');
    await load.call('watchOpen', { target: { port: barePort, ...tls }, n: 1, path: '/watch' });
    await load.call('watchClose');
    await sleep(500);
    const b = await phase(bare, load, barePort, tls, '/watch', dir, 'bare');
    const g = await phase(mem, load, memPort, tls, '/api/v1/namespaces/bench-watch/configmaps?watch=1', dir, 'gatehouse');
    admin.close();
    const keys = [...new Set([...g.keys(), ...b.keys()])];
    const row = (k: string): { k: string; g: { count: number; size: number }; b: { count: number; size: number } } => ({
      k,
      g: g.get(k) ?? { count: 0, size: 0 },
      b: b.get(k) ?? { count: 0, size: 0 },
    });
    const rows = keys.map(row).sort((x, y) => Math.abs(y.g.size - y.b.size) - Math.abs(x.g.size - x.b.size));
    const fmt = (v: { count: number; size: number }): string => `${v.count.toFixed(2).padStart(7)} ${v.size.toFixed(0).padStart(6)} B`;
    console.log(`per watch, ${N} watches: self size by node type and name (count, bytes), gatehouse vs bare`);
    console.log(`${'gatehouse'.padStart(17)} ${'bare'.padStart(16)}   ${'extra B'.padStart(7)}  type name`);
    for (const r of rows.slice(0, TOP)) console.log(`${fmt(r.g)} ${fmt(r.b)}   ${(r.g.size - r.b.size).toFixed(0).padStart(7)}  ${r.k}`);
    console.log(`total: gatehouse ${total(g).toFixed(0)} B, bare ${total(b).toFixed(0)} B, extra ${(total(g) - total(b)).toFixed(0)} B per watch`);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    await rm(root, { recursive: true, force: true });
  }
}

await main();
