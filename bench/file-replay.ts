// The file store's open of a large directory, in this process: the time from
// FileStore.open to a usable store with N ConfigMaps (default 100,000) held
// in its log and, after a compaction, in its snapshot; beside its floor, the
// least any store reading this format must do (read the file, JSON.parse
// each line), measured in the same rounds; and split into reading the file,
// scanning it (CRC check, parse, freezing, record checks: scanLog /
// parseSnapshot) and the rest (key index, history, sizes, list bytes). Then the memory each loaded
// object holds (heap and Buffers, after a full GC) against the bytes of its
// JSON: the store's own, then with the two encodings the API keeps per frozen
// object once it answered it (the list item bytes of a LIST, the text of a GET).
// `BENCH_ONLY=file-replay`, alone: `node --import tsx bench/file-replay.ts`. Knobs: BENCH_REPLAY_N (objects), BENCH_REPLAY_ROUNDS
// (default 5; medians).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FileStore } from '../backends/core/store/file.js';
import { parseSnapshot, scanLog } from '../backends/core/store/file-format.js';
import { LOG, SNAPSHOT } from '../backends/core/store/file-load.js';
import type { KObject } from '../lib/api/meta.js';
import { jsonAnswerText, listItemBytes } from '../lib/api/json.js';
import { num, out, table } from './report.js';
import { recordRow } from './summary.js';

const N = Number(process.env['BENCH_REPLAY_N'] ?? 100_000);
const ROUNDS = Number(process.env['BENCH_REPLAY_ROUNDS'] ?? 5);
const HISTORY_MS = 300_000;
const name = (i: number): string => `cm-${String(i).padStart(6, '0')}`;

/** A ConfigMap as the API stores one made by a client (uid, timestamps, one managedFields entry): ~540 bytes of JSON. */
function configMap(i: number): KObject {
  const time = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: name(i),
      namespace: 'scale',
      uid: randomUUID(),
      creationTimestamp: time,
      labels: { app: 'scale', shard: String(i % 16) },
      managedFields: [
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time,
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:data': { '.': {}, 'f:app.properties': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:app': {}, 'f:shard': {} } } },
        },
      ],
    },
    data: { 'app.properties': `color=blue\nsize=large\nindex=${i}\n` },
  };
}

async function fill(dir: string): Promise<number> {
  const store = await FileStore.open({ dir, historyWindowMs: HISTORY_MS });
  let json = 0;
  try {
    for (let i = 0; i < N; i += 500) {
      const made = await Promise.all(
        Array.from({ length: Math.min(500, N - i) }, (_, j) => store.create(`core/configmaps/scale/${name(i + j)}`, configMap(i + j))),
      );
      for (const o of made) json += JSON.stringify(o).length;
    }
  } finally {
    await store.close();
  }
  return json / N;
}

// A full GC before each memory reading, also when the process was started without --expose-gc
// (as bench/run.ts is): the flag set at run time exposes gc in a new context.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const med = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Figures {
  open: number[];
  floor: number[];
  read: number[];
  scan: number[];
  heapPerObject: number;
}

/** Rounds of: the floor, the store's open (+ close), the open's read and scan; alternating order. */
async function measure(dir: string, file: string): Promise<Figures> {
  const path = join(dir, file);
  const f: Figures = { open: [], floor: [], read: [], scan: [], heapPerObject: NaN };
  const floor = async (): Promise<void> => {
    const t0 = performance.now();
    const buf = await readFile(path);
    let pos = 0;
    let n = 0;
    while (pos < buf.length) {
      const nl = buf.indexOf(0x0a, pos);
      if (JSON.parse(buf.toString('utf8', pos + 9, nl))) n++;
      pos = nl + 1;
    }
    f.floor.push(performance.now() - t0);
    if (n < N) throw new Error(`floor read ${n} lines, want ≥ ${N}`);
  };
  const open = async (): Promise<void> => {
    gc();
    const before = process.memoryUsage().heapUsed;
    const t0 = performance.now();
    const store = await FileStore.open({ dir, historyWindowMs: HISTORY_MS });
    f.open.push(performance.now() - t0);
    gc();
    f.heapPerObject = (process.memoryUsage().heapUsed - before) / N;
    await store.close();
  };
  const parts = async (): Promise<void> => {
    const t0 = performance.now();
    const buf = await readFile(path);
    const t1 = performance.now();
    if (file === LOG) scanLog(buf, path);
    else parseSnapshot(buf, path);
    f.read.push(t1 - t0);
    f.scan.push(performance.now() - t1);
  };
  for (let r = 0; r < ROUNDS; r++) {
    for (const step of r % 2 === 0 ? [floor, open, parts] : [parts, open, floor]) {
      await step();
      gc();
    }
  }
  return f;
}

/** Heap + Buffer bytes after a full GC. */
function used(): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** Memory per object: the store's after its open from the log, then adding what rendering a LIST item and a GET of each keeps. */
async function memoryPerObject(dir: string): Promise<{ store: number; listed: number; got: number }> {
  const before = used();
  const store = await FileStore.open({ dir, historyWindowMs: HISTORY_MS });
  try {
    const afterOpen = used();
    const all: KObject[] = [];
    let after: string | undefined;
    do {
      const page = await store.list('core/configmaps/scale/', { limit: 500, ...(after ? { after } : {}) });
      all.push(...page.items);
      after = page.continueAfter;
    } while (after);
    for (const o of all) listItemBytes(o);
    const afterList = used();
    for (const o of all) jsonAnswerText(o);
    const afterGet = used();
    return { store: (afterOpen - before) / N, listed: (afterList - afterOpen) / N, got: (afterGet - afterList) / N };
  } finally {
    await store.close();
  }
}

export async function runFileReplayBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-replay-'));
  try {
    const jsonPerObject = await fill(dir);
    const log = await measure(dir, LOG);
    const mem = await memoryPerObject(dir);
    const compacted = await FileStore.open({ dir, historyWindowMs: HISTORY_MS });
    await compacted.compact();
    await compacted.close();
    const snap = await measure(dir, SNAPSHOT);
    out();
    out(`=== file store open with ${num(N)} ConfigMaps (bench/file-replay.ts, in process; medians of ${ROUNDS} rounds) ===`);
    const row = (what: string, f: Figures): string[] => {
      const [open, floor, read, scan] = [med(f.open), med(f.floor), med(f.read), med(f.scan)];
      return [
        what,
        `${num(open)} ms`,
        `${num(floor)} ms`,
        `${(open / floor).toFixed(2)}×`,
        `${num(read)} ms`,
        `${num(scan)} ms`,
        `${num(open - read - scan)} ms`,
        `${num(f.heapPerObject)} B (${(f.heapPerObject / jsonPerObject).toFixed(1)}×)`,
      ];
    };
    table(
      ['from', 'open', 'floor (read + JSON.parse)', 'open/floor', 'read', 'scan (CRC, parse, freeze)', 'apply (index, history, bytes)', 'heap/object'],
      [row('log', log), row('snapshot', snap)],
    );
    out(`  JSON per object ${num(jsonPerObject)} B; heap/object: the store's own (no rendered bytes), after a full GC`);
    const x = (b: number): string => `${num(b)} B (${(b / jsonPerObject).toFixed(2)}×)`;
    out(
      `  memory per object (heap + Buffers): the store ${x(mem.store)}; + a LIST's item bytes ${x(mem.listed)}; + a GET's text ${x(mem.got)}; total ${x(mem.store + mem.listed + mem.got)}`,
    );
    recordRow({
      name: `file store memory per object at ${num(N)}: store + LIST item bytes + GET text (vs its JSON)`,
      value: mem.store + mem.listed + mem.got,
      unit: 'B',
      baseline: jsonPerObject,
      target: '≤ 3× its JSON plus a fixed base',
      atMost: 3,
    });
    for (const [what, f] of [
      ['log', log],
      ['snapshot', snap],
    ] as const) {
      recordRow({
        name: `file store open, ${num(N)} ConfigMaps from the ${what} (vs reading and parsing it)`,
        value: med(f.open),
        unit: 'ms',
        baseline: med(f.floor),
        target: '(reference)',
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runFileReplayBench();
