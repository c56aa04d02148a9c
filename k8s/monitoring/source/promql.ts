// Small PromQL builders shared by the rules and the dashboards, so that one
// selector names the scrape job everywhere and the SLO thresholds are written
// once.

/** The scrape job the shipped scrape configuration and ServiceMonitor name; every expression selects it. */
export const JOB = 'gatehouse';

/** `name{job="gatehouse",…}`: `matchers` are PromQL label matchers (`code=~"5.."`). */
export function sel(name: string, ...matchers: string[]): string {
  return `${name}{${[`job="${JOB}"`, ...matchers].join(',')}}`;
}

export const rate = (series: string, window: string): string => `rate(${series}[${window}])`;

/** The read and write verbs kube's SLOs count (watches and proxied connections are long-running: not in them). */
export const READ_VERBS = 'verb=~"LIST|GET"';
export const WRITE_VERBS = 'verb=~"POST|PUT|PATCH|DELETE|APPLY"';
export const NOT_LONG_RUNNING = 'verb!~"WATCH|CONNECT"';

/**
 * kube's latency SLO (kubernetes-mixin): a read of one object within 1 s, of a
 * namespace within 5 s, of the cluster within 30 s; a write within 1 s — on
 * the SLI histogram, which leaves out webhook and queue time.
 */
export function slowRequestsRate(window: string): string {
  const sli = 'apiserver_request_sli_duration_seconds';
  const within = (matchers: string[], le: string) => `(sum(${rate(sel(`${sli}_bucket`, ...matchers, `le="${le}"`), window)}) or vector(0))`;
  const fast = [
    within([READ_VERBS, 'scope=~"resource|"'], '1'),
    within([READ_VERBS, 'scope="namespace"'], '5'),
    within([READ_VERBS, 'scope="cluster"'], '30'),
    within([WRITE_VERBS], '1'),
  ].join(' + ');
  return `sum(${rate(sel(`${sli}_count`, 'verb=~"LIST|GET|POST|PUT|PATCH|DELETE|APPLY"'), window)}) - (${fast})`;
}

export function sliRequestsRate(window: string): string {
  return `sum(${rate(sel('apiserver_request_sli_duration_seconds_count', 'verb=~"LIST|GET|POST|PUT|PATCH|DELETE|APPLY"'), window)})`;
}

/**
 * Every metric name an expression reads: what is left once strings, label
 * matchers (`{…}`), ranges (`[…]`), grouping lists (`by (…)`, `on (…)`, …),
 * function names and PromQL's keywords are taken out.
 */
export function seriesNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/(^|[^a-zA-Z0-9_:])[0-9.]+(e[+-]?[0-9]+)?/g, '$1 ');
  const names = new Set<string>();
  for (const m of bare.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const word = m[0];
    const after = bare.slice(m.index + word.length);
    if (KEYWORDS.has(word) || /^\s*\(/.test(after)) continue;
    names.add(word);
  }
  return [...names];
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan', 'Inf', 'NaN']);
