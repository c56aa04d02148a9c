// The bench's machine-readable side: which sections run
// (BENCH_ONLY, a comma list of section names) and every summary row of the
// run, written as JSON to BENCH_JSON=<file> when the run ends. Sections run
// in the one `npm run bench` process, so the rows are collected here and
// written once; a section run alone (`node --import tsx bench/x.ts`) writes
// its own rows the same way.
import { writeFileSync } from 'node:fs';

/** One summary row: a figure beside its baseline and its target. */
export interface SummaryRow {
  name: string;
  value: number;
  unit: string;
  /** The figure it is compared with, measured in the same run (null: an absolute target). */
  baseline: number | null;
  /** value / baseline (or value / target for an absolute target), null when neither applies. */
  ratio: number | null;
  /** As the target is stated: "≥ 60%", "p99 ≤ 50 ms". */
  target: string;
  met: boolean | null;
}

/** Every section of `npm run bench` by name; BENCH_ONLY takes these (and the old group names below). */
export const SECTIONS = [
  'get',
  'list',
  'encodings',
  'create',
  'file-create',
  'file-replay',
  'crd',
  'watch',
  'patch',
  'redis-create',
  'redis-read',
  'redis-watch',
  'redis',
  'authn',
  'authz',
  'proxy',
  'sidecar',
  'forwardauth',
  'http2',
  'flowcontrol',
  'micro',
  'audit',
  'tracing',
  'access',
  'crdschema',
  'csr',
  'admission',
  'crds',
  'leaderelection',
  'workloads',
  'monitoring',
  'crdconversion',
  'oidclogin',
  'scale',
  'startup',
] as const;
export type SectionName = (typeof SECTIONS)[number];

/** Names that select several sections at once. */
const GROUPS: Readonly<Record<string, readonly SectionName[]>> = {
  redis: ['redis-create', 'redis-read', 'redis-watch'],
  aggregation: ['proxy', 'sidecar'],
};

function parseOnly(raw: string | undefined): ReadonlySet<string> | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const known = new Set<string>([...SECTIONS, ...Object.keys(GROUPS)]);
  const unknown = names.filter((n) => !known.has(n));
  if (unknown.length > 0) {
    process.stderr.write(`BENCH_ONLY: unknown section ${unknown.map((n) => `"${n}"`).join(', ')}; known: ${[...known].sort().join(', ')}\n`);
    process.exit(2);
  }
  const out = new Set<string>();
  for (const n of names) {
    out.add(n);
    for (const m of GROUPS[n] ?? []) out.add(m);
  }
  return out;
}

const ONLY = parseOnly(process.env['BENCH_ONLY']);

/**
 * Whether a section runs: every section when BENCH_ONLY is unset (then
 * BENCH_<SKIP>=0 still skips a whole file's section, as before), only the
 * named ones when it is set.
 */
export function selected(name: SectionName, skipVar?: string): boolean {
  if (ONLY) return ONLY.has(name);
  return skipVar === undefined || process.env[skipVar] !== '0';
}

/** Whether any of the names runs (a file holding several sections starts its servers only then). */
export function anySelected(names: readonly SectionName[], skipVar?: string): boolean {
  return names.some((n) => selected(n, skipVar));
}

const rows: SummaryRow[] = [];

/**
 * Records a summary row. `atLeast`/`atMost` give the target as a bound on the
 * ratio (value/baseline) or, without a baseline, on the value itself.
 */
export function recordRow(r: { name: string; value: number; unit: string; baseline?: number; target: string; atLeast?: number; atMost?: number }): SummaryRow {
  const baseline = r.baseline ?? null;
  const ratio = baseline !== null && baseline !== 0 ? r.value / baseline : null;
  const judged = ratio ?? (baseline === null ? r.value : null);
  let met: boolean | null = null;
  if (judged !== null && Number.isFinite(judged)) {
    if (r.atLeast !== undefined) met = judged >= r.atLeast;
    if (r.atMost !== undefined) met = (met ?? true) && judged <= r.atMost;
  }
  const row: SummaryRow = { name: r.name, value: r.value, unit: r.unit, baseline, ratio, target: r.target, met };
  rows.push(row);
  return row;
}

/** Records rows a section built whole (bench/aggregation.ts returns its own). */
export function addRows(rs: readonly SummaryRow[]): void {
  rows.push(...rs);
}

export function summaryRows(): readonly SummaryRow[] {
  return rows;
}

/** Writes the rows to BENCH_JSON, when set: once, when the process exits (a section run alone writes its own). */
function writeSummaryJson(): void {
  const file = process.env['BENCH_JSON'];
  if (!file) return;
  writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
  process.stdout.write(`\nsummary: ${rows.length} rows written to ${file}\n`);
}
// Only the process that runs the sections writes: their child processes (IPC-connected) load this module too.
if (process.send === undefined) process.once('exit', writeSummaryJson);
