// The process's one Prometheus registry; every metric registers here and
// GET /metrics serves it in the text format. Every metric declares its
// stability level (and, once deprecated, the release it was deprecated in):
// the registry writes both into HELP and keeps a metric off the endpoint once
// its lifecycle hides it (lifecycle.ts), until hidden metrics are shown.
import { createHash } from 'node:crypto';
import { Registry, type Metric } from 'prom-client';
import { KUBE_MAJOR, KUBE_MINOR } from '../discovery/version.js';
import { gzipRuns, type Run } from './gzipruns.js';
import { annotatedHelp, phaseOf, type MetricLifecycle, type MinorVersion } from './lifecycle.js';

export type { MetricLifecycle, StabilityLevel } from './lifecycle.js';

export class LifecycleRegistry extends Registry {
  private readonly lifecycles = new Map<string, MetricLifecycle>();
  private readonly hidden: Metric[] = [];
  private showingHidden = false;
  /** Where registration warnings go (deprecated, hidden, deleted); stderr until the server sets its log. */
  warn: (message: string) => void = (m) => {
    process.stderr.write(`${m}\n`);
  };

  constructor(readonly current: MinorVersion) {
    super();
  }

  /** Records a metric's lifecycle; returns its HELP as served (level and deprecation notice first). */
  declare(name: string, help: string, lifecycle: MetricLifecycle): string {
    this.lifecycles.set(name, lifecycle);
    return annotatedHelp(help, lifecycle, this.current);
  }

  /**
   * A prom-client metric's configuration, declared on this registry:
   * `new Counter(registry.declared({ name, help, stabilityLevel: 'ALPHA', … }))`.
   */
  declared<T extends { name: string; help: string }>(o: T & MetricLifecycle): Omit<T, keyof MetricLifecycle> & { registers: Registry[] } {
    const { stabilityLevel, deprecatedVersion, ...config } = o;
    const lifecycle: MetricLifecycle = deprecatedVersion === undefined ? { stabilityLevel } : { stabilityLevel, deprecatedVersion };
    return { ...config, help: this.declare(o.name, o.help, lifecycle), registers: [this] } as Omit<T, keyof MetricLifecycle> & { registers: Registry[] };
  }

  /** prom-client calls this for `registers: [registry]`; a hidden metric is held back, a deleted one dropped. */
  override registerMetric<T extends string>(metric: Metric<T>): void {
    const name = (metric as unknown as { name: string }).name;
    const lifecycle = this.lifecycles.get(name);
    if (lifecycle === undefined) throw new Error(`metric ${name} has no declared stability level (declare it through the registry)`);
    const { phase } = phaseOf(lifecycle, this.current);
    const since = lifecycle.deprecatedVersion;
    if (phase === 'deleted') {
      this.warn(`metric ${name} was deprecated in ${since} and its hidden release has passed: not registered (remove it)`);
      return;
    }
    if (phase === 'hidden' && !this.showingHidden) {
      this.warn(
        `metric ${name} was deprecated in ${since} and is hidden; --show-hidden-metrics-for-version=${this.current.major}.${this.current.minor - 1} shows it`,
      );
      this.hidden.push(metric as Metric);
      return;
    }
    if (phase !== 'current') this.warn(`metric ${name} is deprecated since ${since}`);
    super.registerMetric(metric);
  }

  /** `--show-hidden-metrics-for-version` (checked by the flag): registers the metrics held back, and any hidden one declared later. */
  showHidden(): void {
    this.showingHidden = true;
    for (const m of this.hidden.splice(0)) super.registerMetric(m);
  }

  /**
   * The lean metrics (lean.ts) write their own text: prom-client's formatter
   * makes an object per sample (a scrape of 2,000 request label sets took
   * ten times as long). prom-client's `metrics()` calls this per metric; it
   * is not in its typings, hence the cast.
   */
  async getMetricsAsString(metric: Metric): Promise<string> {
    const own = (metric as unknown as { text?: () => string }).text;
    return typeof own === 'function' ? own.call(metric) : promClientFormat.call(this, metric);
  }

  /**
   * What `metrics()` writes, in runs of bytes: the lean metrics give their
   * label sets' cached bytes (lean.ts), so a scrape renders only what moved
   * since the last one, and gzipRuns recompresses only those runs
   * (measured: docs/decisions/2026-11-29-scrape-from-cached-bytes.md).
   */
  async metricsRuns(): Promise<Run[]> {
    const out: Run[] = [];
    for (const metric of this.getMetricsAsArray() as unknown as Metric[]) {
      if (out.length > 0) out.push(BETWEEN);
      const runs = (metric as unknown as { runs?: () => Run[] }).runs;
      if (typeof runs === 'function') for (const r of runs.call(metric)) out.push(r);
      else out.push(this.keptRun(metric, await this.getMetricsAsString(metric)));
    }
    out.push(LAST);
    return out;
  }

  /** A prom-client metric's last text and run: the same run while its text is the same, so gzipRuns keeps its deflated bytes. */
  private readonly kept = new WeakMap<Metric, { text: string; run: Run }>();

  private keptRun(metric: Metric, text: string): Run {
    const last = this.kept.get(metric);
    if (last?.text === text) return last.run;
    const run: Run = { key: {}, parts: [Buffer.from(text)] };
    this.kept.set(metric, { text, run });
    return run;
  }

  /** Forgets a metric entirely (tests that declare their own). */
  forget(name: string): void {
    this.removeSingleMetric(name);
    this.lifecycles.delete(name);
    const i = this.hidden.findIndex((m) => (m as unknown as { name: string }).name === name);
    if (i >= 0) this.hidden.splice(i, 1);
  }
}

const BETWEEN: Run = { key: {}, parts: [Buffer.from('\n\n')] };
const LAST: Run = { key: {}, parts: [Buffer.from('\n')] };

const promClientFormat = (Registry.prototype as unknown as { getMetricsAsString(this: Registry, m: Metric): Promise<string> }).getMetricsAsString;

export const registry = new LifecycleRegistry({ major: Number(KUBE_MAJOR), minor: Number(KUBE_MINOR) });

export async function metricsText(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/**
 * GET /metrics's answer: metricsText's body as bytes, and as gzip when asked
 * (zlib level 1: a scrape's ~5 MB in a third of level 4's time for 6% more bytes).
 * Both are made from the runs, which keep what did not move since the last scrape.
 */
export async function metricsBody(gzipped: boolean): Promise<{ contentType: string; body: Buffer; gzipped: boolean }> {
  if (registry.contentType !== Registry.PROMETHEUS_CONTENT_TYPE)
    return { contentType: registry.contentType, body: Buffer.from(await registry.metrics()), gzipped: false };
  const runs = await registry.metricsRuns();
  if (gzipped) return { contentType: registry.contentType, body: gzipRuns(runs, 1), gzipped };
  return { contentType: registry.contentType, body: Buffer.concat(runs.flatMap((r) => r.parts)), gzipped };
}

/** kube's `apiserver_id_hash` label value: `sha256:` + hex digest of the server's identity. */
export function apiServerIdHash(apiServerId: string): string {
  return `sha256:${createHash('sha256').update(apiServerId).digest('hex')}`;
}
