// /metrics read back as Prometheus' text exposition format. Hand-written for
// the tests: parse-prometheus-text-format (the npm parser) drops the labels,
// _sum and _count of labelled histograms, which are what kube's metrics are.
// Lines: `# HELP name text`, `# TYPE name type`, `name{k="v",…} value`;
// label values unescape \\, \" and \n. A histogram's _bucket/_sum/_count
// samples are folded into one sample per label set (buckets by `le`).

export interface Sample {
  labels: Record<string, string>;
  value?: string;
  buckets?: Record<string, string>;
  count?: string;
  sum?: string;
}
export interface Family {
  name: string;
  help: string;
  type: string;
  metrics: Sample[];
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

function labelsOf(text: string | undefined, line: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!text) return out;
  LABEL.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (LABEL.lastIndex < text.length && (m = LABEL.exec(text))) out[m[1]!] = m[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  if (LABEL.lastIndex !== text.length) throw new Error(`bad labels in: ${line}`);
  return out;
}

export function parseMetrics(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string): Family => {
    let f = families.get(name);
    if (!f) {
      f = { name, help: '', type: 'UNTYPED', metrics: [] };
      families.set(name, f);
    }
    return f;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const f = family(meta[2]!);
      if (meta[1] === 'HELP') f.help = meta[3]!;
      else f.type = meta[3]!.toUpperCase();
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const [, name, rawLabels, value] = m;
    const labels = labelsOf(rawLabels, line);
    const base = name!.replace(/_(bucket|sum|count)$/, '');
    const hist = base !== name && families.get(base)?.type === 'HISTOGRAM';
    if (!hist) {
      family(name!).metrics.push({ labels, value: value! });
      continue;
    }
    const le = labels['le'];
    delete labels['le'];
    const key = JSON.stringify(Object.entries(labels).sort());
    const f = family(base);
    let s = f.metrics.find((x) => JSON.stringify(Object.entries(x.labels).sort()) === key);
    if (!s) {
      s = { labels, buckets: {} };
      f.metrics.push(s);
    }
    if (name!.endsWith('_bucket')) s.buckets![le!] = value!;
    else if (name!.endsWith('_sum')) s.sum = value!;
    else s.count = value!;
  }
  return families;
}

/** The samples of a family whose labels include `want`. */
export function samples(m: Map<string, Family>, name: string, want: Record<string, string> = {}): Sample[] {
  return (m.get(name)?.metrics ?? []).filter((s) => Object.entries(want).every(([k, v]) => s.labels[k] === v));
}
