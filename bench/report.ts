// All of the benchmark's output: progress lines while it runs, then the
// figures beside their baselines and the summary against their targets.
// Figures only — a benchmark is not a test, so nothing here passes or fails.
import type { LoopResult } from './rawclient.js';
import type { WatchRunResult } from './loadgen.js';
import type { MemoryFigures } from './procs.js';
import { recordRow } from './summary.js';

export type { CpuShare } from './rawclient.js';

export const share = (x: number): string => (Number.isFinite(x) ? `${Math.round(100 * x)}%` : '-');
export const cpuOf = (r: { cpu?: { server: number; load: number } }): string => (r.cpu ? `${share(r.cpu.server)} / ${share(r.cpu.load)}` : '-');

/** `watches` watches of `events` events each in one encoding: the server's CPU over them all, one watch's bytes. */
export interface WatchEncoding {
  format: string;
  events: number;
  watches: number;
  cpuSeconds: number;
  bytes: number;
}

export interface IdleMemory {
  watchers: number;
  before: MemoryFigures;
  after: MemoryFigures;
}

export interface WatchFigures {
  watchers: number;
  gatehouse: WatchRunResult;
  bare: WatchRunResult;
  idle?: { gatehouse: IdleMemory; bare: IdleMemory };
}

export interface Figures {
  /** Two runs each, mirrored (bare, floor, Gatehouse, Gatehouse, floor, bare); the floor is bench/kubefloor.ts. */
  get?: { bare: LoopResult[]; floor: LoopResult[]; gatehouse: LoopResult[] };
  list?: { objects: number; unpaged: LoopResult; paged50: LoopResult; paged500: LoopResult };
  /**
   * As get's, then the file store once; after them, the durable create's floor and its volatile twin
   * (bench/file-floor.ts with FLOOR_DURABLE=1 and 0, records of the file store's mean size).
   */
  create?: {
    bare: LoopResult[];
    floor: LoopResult[];
    memory: LoopResult[];
    file: LoopResult[];
    /** batch: records per sync over the windows, the file store's (from its /metrics) and the durable floor's. */
    fileFloor?: { recordBytes: number; durable: LoopResult[]; volatile: LoopResult[]; batch: { file: number; durable: number } };
  };
  /** The same request answered in JSON, protobuf and CBOR (two runs each, A B C C B A). */
  encodings?: Array<{
    what: string;
    json: LoopResult[];
    protobuf: LoopResult[];
    cbor: LoopResult[];
    jsonBytes: number;
    protobufBytes: number;
    cborBytes: number;
  }>;
  /** A watch delivering the same events in each encoding. */
  watchEncodings?: WatchEncoding[];
  watch: WatchFigures[];
  /** Custom resource creates beside ConfigMap creates (two runs each, CM CR CR CM), and the CRD's install-to-served time. */
  crd?: { installMs: number; configMap: LoopResult[]; custom: LoopResult[]; ruled: LoopResult[] };
}

/** Requests/s and server CPU per request (µs) over several runs of one measurement. */
function pooled(runs: readonly LoopResult[]): { rps: number; cpuUs: number } {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  const cpuSeconds = runs.reduce((n, r) => n + (r.cpu?.server ?? 0) * r.seconds, 0);
  return { rps: requests / seconds, cpuUs: (cpuSeconds / requests) * 1e6 };
}

export const out = (line = ''): void => {
  process.stdout.write(`${line}\n`);
};

export function num(n: number, digits = 0): string {
  if (!Number.isFinite(n)) return '-';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}
export const ms = (n: number): string => (Number.isFinite(n) ? `${n.toFixed(n < 10 ? 2 : 1)} ms` : '-');
export const pct = (a: number, b: number): string => (b > 0 ? `${((100 * a) / b).toFixed(1)}%` : '-');
type Measured = { requests: number; seconds: number; cpu?: { server: number } };
export const rps = (r: { requests: number; seconds: number }): number => r.requests / r.seconds;
/** Server CPU µs per request (the server's share of a core over the run, per request/s). */
export const cpuUs = (r: Measured): number => (r.cpu ? (r.cpu.server * 1e6) / rps(r) : NaN);
/** Requests/s per core of server CPU (rate ÷ the server's CPU share). */
export const perCore = (r: Measured): number => rps(r) / (r.cpu?.server ?? NaN);
const ups = (r: LoopResult): number => r.units / r.seconds;
const kib = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KiB`;

/** Columns padded to their widest cell: the first left-aligned, the figures right-aligned. */
export function table(headers: string[], rows: string[][]): void {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  out(line(headers));
  out(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) out(line(r));
  out();
}

function errorsOf(r: LoopResult): string {
  const bad = Object.entries(r.statuses).filter(([code]) => Number(code) >= 400);
  return bad.length === 0 && r.errors === 0 ? '0' : `${r.errors} (${bad.map(([c, n]) => `${c}×${n}`).join(' ')})`;
}

export function header(lines: string[]): void {
  out('Gatehouse benchmarks (figures, not pass/fail)');
  for (const l of lines) out(`  ${l}`);
  out();
}

export function progress(what: string, detail: string): void {
  out(`  … ${what.padEnd(34)} ${detail}`);
}

export const describe = {
  loop: (r: LoopResult): string =>
    `${num(rps(r))} req/s, p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}${r.units !== r.requests ? `, ${num(ups(r))} objects/s` : ''}, errors ${errorsOf(r)}`,
  watch: (r: WatchRunResult): string =>
    `${num(r.eventsPerSec)} events/s (${num(r.writesPerSec)} writes/s × ${r.watchers}), p99 ack→client ${ms(r.fromAck.p99)}, missing ${r.missing}`,
};

/** Rows of pooled runs beside the first (bare), with rate and CPU-per-request ratios to it and to the second (the floor). */
function floorTable(rows: ReadonlyArray<readonly [string, readonly LoopResult[]]>, vsBare: string): void {
  const p = rows.map(([, runs]) => pooled(runs));
  const [bare, floor] = [p[0]!, p[1]!];
  const p99 = (runs: readonly LoopResult[]) => Math.max(...runs.map((r) => r.latency.p99));
  table(
    ['server', 'req/s', 'CPU µs/req', 'p99 (worst run)', 'errors', `${vsBare} (req/s, CPU)`, 'floor vs it (req/s, CPU)'],
    rows.map(([name, runs], i) => [
      name,
      num(p[i]!.rps),
      num(p[i]!.cpuUs),
      ms(p99(runs)),
      runs.map(errorsOf).join(' / '),
      `${pct(p[i]!.rps, bare.rps)}, ${pct(bare.cpuUs, p[i]!.cpuUs)}`,
      i < 2 ? '' : `${pct(p[i]!.rps, floor.rps)}, ${pct(floor.cpuUs, p[i]!.cpuUs)}`,
    ]),
  );
  out('  (CPU ratios are the other way up: the baseline\'s CPU per request over the row\'s, so both columns read as "share of the baseline".)');
  out();
}

/**
 * The ceiling a durable append sets on the file store's create against the memory store's: D, the CPU the
 * durable floor spends per create over its volatile twin, added to the memory store's create, gives
 * memory ÷ (memory + D), the best file/memory CPU ratio of any design that appends durably.
 */
function fileCeiling(memory: readonly LoopResult[], file: readonly LoopResult[], ff: NonNullable<NonNullable<Figures['create']>['fileFloor']>) {
  const [m, fs, d, v] = [pooled(memory), pooled(file), pooled(ff.durable), pooled(ff.volatile)];
  const added = d.cpuUs - v.cpuUs;
  const ceiling = m.cpuUs / (m.cpuUs + added);
  return { m, fs, d, v, added, ceiling, fileCpu: m.cpuUs / fs.cpuUs, fileRate: fs.rps / m.rps };
}

function fileFloorDetails(memory: readonly LoopResult[], file: readonly LoopResult[], ff: NonNullable<NonNullable<Figures['create']>['fileFloor']>): void {
  const c = fileCeiling(memory, file, ff);
  const p99 = (runs: readonly LoopResult[]) => Math.max(...runs.map((r) => r.latency.p99));
  out(
    `The file store's ratio floor (bench/file-floor.ts: parse, stamp, a ${num(ff.recordBytes)}-byte CRC line, batched by the store's rule; durable: appended O_DSYNC before the 201, volatile: answered once built)`,
  );
  const row = (name: string, runs: readonly LoopResult[], q: { rps: number; cpuUs: number }): string[] => [
    name,
    num(q.rps),
    num(q.cpuUs),
    ms(p99(runs)),
    runs.map(errorsOf).join(' / '),
    `${pct(q.rps, c.v.rps)}, ${pct(c.v.cpuUs, q.cpuUs)}`,
  ];
  table(
    ['server', 'req/s', 'CPU µs/req', 'p99 (worst run)', 'errors', 'vs volatile (req/s, CPU)'],
    [row('volatile floor (FLOOR_DURABLE=0)', ff.volatile, c.v), row('durable floor (O_DSYNC group commit)', ff.durable, c.d)],
  );
  out(
    `  D, the durable append's CPU per create: ${num(c.d.cpuUs)} − ${num(c.v.cpuUs)} = ${num(c.added, 1)} µs, at the durable floor's mean batch of ${num(ff.batch.durable, 1)} records a sync (the file store's: ${num(ff.batch.file, 1)})`,
  );
  out(
    `  ceiling for file/memory: memory ${num(c.m.cpuUs)} µs ÷ (${num(c.m.cpuUs)} + D) = ${pct(c.ceiling, 1)}; measured file/memory CPU ${pct(c.fileCpu, 1)} (rate ${pct(c.fileRate, 1)}): ${pct(c.fileCpu, c.ceiling)} of the ceiling (rate ${pct(c.fileRate, c.ceiling)})`,
  );
  out();
}

export function details(f: Figures): void {
  out();
  if (f.get) {
    out('GET one object (50 keep-alive connections; two runs each, mirrored, pooled)');
    floorTable(
      [
        ['bare node:https (fixed JSON)', f.get.bare],
        ["floor: kube's answer, nothing more (bench/kubefloor.ts)", f.get.floor],
        ['gatehouse GET configmap', f.get.gatehouse],
      ],
      'vs bare',
    );
  }
  if (f.list) {
    out(`LIST ${f.list.objects} configmaps (50 keep-alive connections)`);
    const rows = (
      [
        ['unpaged', f.list.unpaged],
        ['paged, limit=50', f.list.paged50],
        ['paged, limit=500', f.list.paged500],
      ] as const
    ).map(([name, r]) => [name, num(rps(r)), num(ups(r)), ms(r.latency.p50), ms(r.latency.p99), errorsOf(r), cpuOf(r)]);
    table(['mode', 'requests/s', 'objects/s', 'p50 (page)', 'p99 (page)', 'errors', 'CPU srv/load'], rows);
  }
  if (f.create) {
    out('CREATE configmap (50 keep-alive connections; bare, floor, memory and file two runs each, mirrored, pooled)');
    floorTable(
      [
        ['bare node:https POST', f.create.bare],
        ["floor: kube's answer, nothing more (bench/kubefloor.ts)", f.create.floor],
        ['gatehouse, memory store', f.create.memory],
        ['gatehouse, file store (fsync)', f.create.file],
      ],
      'vs bare POST',
    );
    if (f.create.fileFloor) fileFloorDetails(f.create.memory, f.create.file, f.create.fileFloor);
  }
  if (f.crd) {
    out('CREATE custom resource vs ConfigMap (memory store, 50 keep-alive connections, runs CM CR RULED RULED CR CM pooled)');
    const cm = pooled(f.crd.configMap);
    const cr = pooled(f.crd.custom);
    const rr = pooled(f.crd.ruled);
    table(
      ['object', 'req/s', 'CPU µs/request', 'errors', 'vs ConfigMap', 'vs CR without rules'],
      [
        ['ConfigMap', num(cm.rps), num(cm.cpuUs), f.crd.configMap.map(errorsOf).join(' / '), '100%', ''],
        ['custom resource (Widget CRD)', num(cr.rps), num(cr.cpuUs), f.crd.custom.map(errorsOf).join(' / '), pct(cr.rps, cm.rps), '100%'],
        ['custom resource, three CEL rules', num(rr.rps), num(rr.cpuUs), f.crd.ruled.map(errorsOf).join(' / '), pct(rr.rps, cm.rps), pct(rr.rps, cr.rps)],
      ],
    );
    out(`CRD install to first served request: ${f.crd.installMs.toFixed(1)} ms`);
  }
  for (const w of f.watch) {
    out(`WATCH delivery to ${num(w.watchers)} watchers (4 writers, each write one event to every watcher)`);
    const row = (name: string, r: WatchRunResult, ratio: string) => [
      name,
      num(r.writesPerSec),
      num(r.eventsPerSec),
      ms(r.fromAck.p50),
      ms(r.fromAck.p99),
      ms(r.fromSend.p99),
      String(r.missing),
      cpuOf(r),
      ratio,
    ];
    table(
      ['server', 'writes/s', 'events/s', 'p50 ack→client', 'p99 ack→client', 'p99 send→client', 'missing', 'CPU srv/load', 'vs raw fan-out'],
      [row('raw fan-out loop (bare https)', w.bare, '100%'), row('gatehouse watch', w.gatehouse, pct(w.gatehouse.eventsPerSec, w.bare.eventsPerSec))],
    );
    if (w.idle) {
      const per = (m: IdleMemory) => [
        kib((m.after.rss - m.before.rss) / m.watchers),
        kib((m.after.heapUsed - m.before.heapUsed) / m.watchers),
        kib((m.after.external - m.before.external) / m.watchers),
      ];
      out(`Memory per idle watch (${num(w.idle.gatehouse.watchers)} open, after GC; RSS includes each TLS connection)`);
      table(
        ['server', 'RSS/watch', 'heap/watch', 'external/watch'],
        [
          ['bare https chunked response', ...per(w.idle.bare)],
          ['gatehouse watch', ...per(w.idle.gatehouse)],
        ],
      );
    }
  }
}

export function summary(f: Figures): void {
  out('Summary against the targets (one server core, keep-alive, 50 connections)');
  const rows: string[][] = [];
  if (f.get) {
    const [bare, floor, g] = [pooled(f.get.bare), pooled(f.get.floor), pooled(f.get.gatehouse)];
    recordRow({ name: 'GET one object (memory store)', value: g.rps, unit: 'req/s', baseline: bare.rps, target: '≥ 65% of bare', atLeast: 0.65 });
    recordRow({ name: 'GET floor (kube answer only)', value: floor.rps, unit: 'req/s', baseline: bare.rps, target: '(reference)' });
    rows.push(['GET one object', `${num(g.rps)} req/s = ${pct(g.rps, bare.rps)} of bare (${num(bare.rps)}); CPU ${pct(bare.cpuUs, g.cpuUs)}`, '≥ 65% of bare']);
    rows.push([
      'GET floor (kubefloor.ts)',
      `${pct(floor.rps, bare.rps)} of bare (CPU ${pct(bare.cpuUs, floor.cpuUs)}); Gatehouse ${pct(g.rps, floor.rps)} of floor (CPU ${pct(floor.cpuUs, g.cpuUs)})`,
      '(reference)',
    ]);
  }
  if (f.list) {
    rows.push([
      'LIST 500 unpaged',
      `${num(ups(f.list.unpaged))} objects/s, ${num(rps(f.list.unpaged), 1)} lists/s, p99 ${ms(f.list.unpaged.latency.p99)}`,
      '(reference)',
    ]);
    recordRow({ name: 'LIST limit=50 page p99', value: f.list.paged50.latency.p99, unit: 'ms', target: 'p99 ≤ 50 ms', atMost: 50 });
    rows.push(['LIST paged limit=50', `${num(ups(f.list.paged50))} objects/s, page p99 ${ms(f.list.paged50.latency.p99)}`, '≥ 100,000 objects/s, p99 ≤ 50 ms']);
    rows.push([
      'LIST paged limit=500',
      `${num(ups(f.list.paged500))} objects/s, page p99 ${ms(f.list.paged500.latency.p99)}`,
      '≥ 100,000 objects/s, p99 ≤ 50 ms',
    ]);
  }
  if (f.create) {
    const [bare, floor, m, file] = [pooled(f.create.bare), pooled(f.create.floor), pooled(f.create.memory), pooled(f.create.file)];
    recordRow({ name: 'CREATE memory store', value: m.rps, unit: 'req/s', baseline: bare.rps, target: '≥ 30% of bare POST', atLeast: 0.3 });
    recordRow({ name: 'CREATE floor (kube answer only)', value: floor.rps, unit: 'req/s', baseline: bare.rps, target: '(reference)' });
    rows.push([
      'CREATE memory store',
      `${num(m.rps)} req/s = ${pct(m.rps, bare.rps)} of bare POST (${num(bare.rps)}); CPU ${pct(bare.cpuUs, m.cpuUs)}`,
      '≥ 30% of bare POST',
    ]);
    rows.push([
      'CREATE floor (kubefloor.ts)',
      `${pct(floor.rps, bare.rps)} of bare POST (CPU ${pct(bare.cpuUs, floor.cpuUs)}); Gatehouse ${pct(m.rps, floor.rps)} of floor (CPU ${pct(floor.cpuUs, m.cpuUs)})`,
      '(reference)',
    ]);
    rows.push([
      'CREATE file store vs memory store',
      `${num(file.rps)} req/s = ${pct(file.rps, m.rps)} of the memory store (CPU ${pct(m.cpuUs, file.cpuUs)})`,
      '≥ 80% of memory',
    ]);
    rows.push(['CREATE file store', `${num(file.rps)} req/s = ${pct(file.rps, bare.rps)} of bare POST`, '(reference)']);
    if (f.create.fileFloor) {
      const c = fileCeiling(f.create.memory, f.create.file, f.create.fileFloor);
      const floorRow = 'floor (no target)';
      recordRow({
        name: 'CREATE durable floor (file-floor.ts) vs its volatile twin, req/s',
        value: c.d.rps,
        unit: 'req/s',
        baseline: c.v.rps,
        target: floorRow,
      });
      recordRow({ name: 'CREATE durable floor (file-floor.ts), CPU per create', value: c.d.cpuUs, unit: 'µs', baseline: c.v.cpuUs, target: floorRow });
      recordRow({ name: 'CREATE volatile floor (file-floor.ts FLOOR_DURABLE=0), CPU per create', value: c.v.cpuUs, unit: 'µs', target: floorRow });
      recordRow({ name: "CREATE the durable append's CPU per create (D = durable − volatile floor)", value: c.added, unit: 'µs', target: floorRow });
      recordRow({ name: 'CREATE file/memory CPU ceiling: memory ÷ (memory + D)', value: c.ceiling, unit: 'ratio', target: floorRow });
      recordRow({
        name: 'CREATE file store vs memory store, CPU per create (memory ÷ file) vs the ceiling',
        value: c.fileCpu,
        unit: 'ratio',
        baseline: c.ceiling,
        target: 'reference',
      });
      recordRow({
        name: 'CREATE file store vs memory store, req/s (create section, pooled)',
        value: c.fs.rps,
        unit: 'req/s',
        baseline: c.m.rps,
        target: 'reference',
      });
      rows.push([
        'CREATE durable append floor (file-floor.ts)',
        `D = ${num(c.added, 1)} µs/create (durable ${num(c.d.cpuUs)} − volatile ${num(c.v.cpuUs)}); ceiling memory ÷ (memory + D) = ${pct(c.ceiling, 1)}; file/memory CPU ${pct(c.fileCpu, 1)}, rate ${pct(c.fileRate, 1)} = ${pct(c.fileCpu, c.ceiling)} / ${pct(c.fileRate, c.ceiling)} of the ceiling`,
        'floor (no target)',
      ]);
    }
  }
  if (f.crd) {
    const cm = pooled(f.crd.configMap);
    const cr = pooled(f.crd.custom);
    const rr = pooled(f.crd.ruled);
    recordRow({
      name: 'CREATE custom resource vs ConfigMap',
      value: cr.rps,
      unit: 'req/s',
      baseline: cm.rps,
      target: '≥ 80% of ConfigMap create',
      atLeast: 0.8,
    });
    recordRow({
      name: 'CREATE custom resource with three CEL rules vs without',
      value: rr.rps,
      unit: 'req/s',
      baseline: cr.rps,
      target: '≥ 70% of CR without rules',
      atLeast: 0.7,
    });
    rows.push(['CREATE custom resource', `${num(cr.rps)} req/s = ${pct(cr.rps, cm.rps)} of ConfigMap create (${num(cm.rps)})`, '≥ 80% of ConfigMap create']);
    rows.push(['CREATE CR with three CEL rules', `${num(rr.rps)} req/s = ${pct(rr.rps, cr.rps)} of CR create without rules`, '≥ 70% of CR without rules']);
    rows.push(['CRD install → first served request', `${f.crd.installMs.toFixed(1)} ms`, '(reference)']);
  }
  for (const w of f.watch) {
    const target = w.watchers >= 1000 ? '≥ 50% of raw, p99 ≤ 50 ms' : '(reference)';
    if (w.watchers >= 1000)
      recordRow({
        name: `WATCH ${w.watchers} watchers events/s vs raw fan-out`,
        value: w.gatehouse.eventsPerSec,
        unit: 'events/s',
        baseline: w.bare.eventsPerSec,
        target: '≥ 50% of raw',
        atLeast: 0.5,
      });
    if (w.watchers >= 1000)
      recordRow({ name: `WATCH ${w.watchers} watchers ack→socket p99`, value: w.gatehouse.fromAck.p99, unit: 'ms', target: 'p99 ≤ 50 ms', atMost: 50 });
    rows.push([
      `WATCH ${num(w.watchers)} watchers`,
      `${num(w.gatehouse.eventsPerSec)} events/s = ${pct(w.gatehouse.eventsPerSec, w.bare.eventsPerSec)} of raw (${num(w.bare.eventsPerSec)}), p99 ${ms(w.gatehouse.fromAck.p99)}`,
      target,
    ]);
    if (w.idle) {
      const g = w.idle.gatehouse;
      rows.push([
        `Idle watch memory`,
        `${kib((g.after.rss - g.before.rss) / g.watchers)} RSS, ${kib((g.after.heapUsed - g.before.heapUsed) / g.watchers)} heap per watch`,
        '≤ 20 KiB per idle watch',
      ]);
    }
  }
  for (const e of f.encodings ?? []) {
    const j = pooled(e.json);
    const p = pooled(e.protobuf);
    const target = e.what === 'GET' ? 'protobuf CPU ≤ 110% of JSON' : 'protobuf CPU ≤ 100% of JSON';
    recordRow({
      name: `${e.what} protobuf vs JSON server CPU`,
      value: p.cpuUs,
      unit: 'µs/request',
      baseline: j.cpuUs,
      target,
      atMost: e.what === 'GET' ? 1.1 : 1.0,
    });
    rows.push([
      `${e.what} protobuf vs JSON`,
      `server CPU ${num(p.cpuUs)} µs vs ${num(j.cpuUs)} µs per request = ${pct(p.cpuUs, j.cpuUs)}; ${num(p.rps)} vs ${num(j.rps)} req/s; ${num(e.protobufBytes)} vs ${num(e.jsonBytes)} bytes`,
      target,
    ]);
    const c = pooled(e.cbor);
    rows.push([
      `${e.what} CBOR vs JSON`,
      `server CPU ${num(c.cpuUs)} µs vs ${num(j.cpuUs)} µs per request = ${pct(c.cpuUs, j.cpuUs)}; ${num(c.rps)} vs ${num(j.rps)} req/s; ${num(e.cborBytes)} vs ${num(e.jsonBytes)} bytes`,
      '(reference)',
    ]);
  }
  const wj = f.watchEncodings?.find((w) => w.format === 'JSON');
  for (const w of f.watchEncodings ?? []) {
    const per = (x: WatchEncoding) => (x.cpuSeconds / x.watches) * 1e3;
    rows.push([
      `WATCH ${num(w.events)} events ${w.format}`,
      `server CPU ${num(per(w), 1)} ms per watch${wj && w !== wj ? ` = ${pct(per(w), per(wj))} of JSON` : ''}; ${num(w.bytes)} bytes`,
      '(reference)',
    ]);
  }
  table(['measurement', 'figure', 'target'], rows);
}
