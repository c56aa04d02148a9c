// Metric lifecycle (spec resource-api.md "Metric lifecycle"): a deprecated
// metric's HELP carries the deprecation notice and its registration warns;
// three releases after its deprecated version it is hidden (not on /metrics)
// unless --show-hidden-metrics-for-version names the previous release; one
// release later it is gone for good. Checked on a registry of its own, then on
// the process's registry through a started server's /metrics.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Gauge } from 'prom-client';
import { LifecycleRegistry, registry as processRegistry } from '../../lib/metrics/registry.js';
import { HIDDEN_AFTER_RELEASES } from '../../lib/metrics/lifecycle.js';
import { KUBE_MAJOR, KUBE_MINOR } from '../../lib/discovery/version.js';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { parseMetrics } from '../helpers/prometheus.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

const MAJOR = Number(KUBE_MAJOR);
const MINOR = Number(KUBE_MINOR);
const release = (minorsAgo: number) => `${MAJOR}.${MINOR - minorsAgo}`;

describe('metric lifecycle on a registry', () => {
  const warnings: string[] = [];
  const reg = new LifecycleRegistry({ major: 1, minor: 33 });
  reg.warn = (m) => warnings.push(m);
  const counter = (name: string, deprecatedVersion?: string) =>
    new Counter(reg.declared({ name, help: `${name} help.`, stabilityLevel: 'STABLE', ...(deprecatedVersion ? { deprecatedVersion } : {}) }));
  const fresh = counter('fresh_total');
  const future = counter('future_total', '1.34.0');
  const sameRelease = counter('same_release_total', '1.33.0');
  const twoAgo = counter('two_ago_total', '1.31');
  const hidden = counter('hidden_total', '1.30.0');
  const deleted = counter('deleted_total', '1.29.0');
  for (const c of [fresh, future, sameRelease, twoAgo, hidden, deleted]) c.inc();
  const scrape = async () => parseMetrics(await reg.metrics());

  it('the stability level leads HELP; deprecated metrics say since when, and only once their release has come', async () => {
    const m = await scrape();
    assert.equal(m.get('fresh_total')?.help, '[STABLE] fresh_total help.');
    assert.equal(m.get('future_total')?.help, '[STABLE] future_total help.');
    assert.equal(m.get('same_release_total')?.help, '[STABLE] (Deprecated since 1.33.0) same_release_total help.');
    assert.equal(m.get('two_ago_total')?.help, '[STABLE] (Deprecated since 1.31.0) two_ago_total help.');
    assert.equal(Number(m.get('two_ago_total')?.metrics[0]?.value), 1, 'a deprecated metric still records');
  });

  it(`${HIDDEN_AFTER_RELEASES} releases after deprecation a metric is hidden; a release later it is deleted`, async () => {
    const m = await scrape();
    assert.equal(m.has('hidden_total'), false);
    assert.equal(m.has('deleted_total'), false);
    assert.ok(warnings.some((w) => /same_release_total is deprecated since 1\.33\.0/.test(w)));
    assert.ok(warnings.some((w) => /hidden_total .*hidden.*--show-hidden-metrics-for-version=1\.32/.test(w)));
    assert.ok(warnings.some((w) => /deleted_total .*not registered/.test(w)));
    assert.ok(!warnings.some((w) => /fresh_total|future_total/.test(w)), 'current metrics do not warn');
  });

  it('showing hidden metrics brings back the hidden one (with what it recorded meanwhile), not the deleted one', async () => {
    hidden.inc();
    reg.showHidden();
    const m = await scrape();
    assert.equal(m.get('hidden_total')?.help, '[STABLE] (Deprecated since 1.30.0) hidden_total help.');
    assert.equal(Number(m.get('hidden_total')?.metrics[0]?.value), 2);
    assert.equal(m.has('deleted_total'), false);
    // Declared after the flag took effect: served at once.
    counter('late_hidden_total', '1.30.0').inc();
    assert.equal((await scrape()).has('late_hidden_total'), true);
  });

  it('a metric registered without a declared stability level is refused', () => {
    assert.throws(() => new Gauge({ name: 'undeclared_gauge', help: 'x', registers: [reg] }), /undeclared_gauge has no declared stability level/);
  });
});

describe('--show-hidden-metrics-for-version', () => {
  it('accepts only the previous minor version, and the error names the flag', () => {
    const ok = parseServeFlags([`--show-hidden-metrics-for-version=${release(1)}`]);
    assert.ok('options' in ok && ok.options.showHiddenMetricsForVersion === release(1));
    for (const bad of [release(0), release(2), `${release(1)}.0`, `v${release(1)}`, 'yesterday']) {
      const r = parseServeFlags([`--show-hidden-metrics-for-version=${bad}`]);
      assert.ok('error' in r, bad);
      assert.match(
        r.error,
        new RegExp(
          `invalid value "${bad.replace(/\./g, '\\.')}" for --show-hidden-metrics-for-version: must be omitted or have the value '${release(1).replace('.', '\\.')}'`,
        ),
      );
    }
    const none = parseServeFlags([]);
    assert.ok('options' in none && none.options.showHiddenMetricsForVersion === undefined);
  });
});

describe("deprecated and hidden metrics on a server's /metrics", () => {
  // Declared through the same API as the server's own metrics, on the process's registry.
  const deprecatedGauge = new Gauge(
    processRegistry.declared({
      name: 'gatehouse_test_deprecated_gauge',
      help: 'A test metric.',
      stabilityLevel: 'ALPHA',
      deprecatedVersion: `${release(1)}.0`,
    }),
  );
  const hiddenGauge = new Gauge(
    processRegistry.declared({
      name: 'gatehouse_test_hidden_gauge',
      help: 'A hidden test metric.',
      stabilityLevel: 'BETA',
      deprecatedVersion: `${release(HIDDEN_AFTER_RELEASES)}.0`,
    }),
  );
  deprecatedGauge.set(7);
  hiddenGauge.set(9);
  const servers: TestServer[] = [];
  after(async () => {
    for (const s of servers) await s.close();
    processRegistry.forget('gatehouse_test_deprecated_gauge');
    processRegistry.forget('gatehouse_test_hidden_gauge');
  });
  const scrape = async (s: TestServer) => {
    const r = await s.admin.request('GET', '/metrics');
    assert.equal(r.status, 200);
    return parseMetrics(r.text);
  };

  it('without the flag: the deprecated metric is served with its notice, the hidden one is not', async () => {
    const s = await startTestServer();
    servers.push(s);
    const m = await scrape(s);
    assert.equal(m.get('gatehouse_test_deprecated_gauge')?.help, `[ALPHA] (Deprecated since ${release(1)}.0) A test metric.`);
    assert.equal(m.get('gatehouse_test_deprecated_gauge')?.metrics[0]?.value, '7');
    assert.equal(m.has('gatehouse_test_hidden_gauge'), false);
    assert.match(m.get('apiserver_request_total')!.help, /^\[STABLE\] Counter of apiserver requests/, "the server's own metrics are not deprecated");
  });

  it('with --show-hidden-metrics-for-version=<previous minor>: the hidden metric is back', async () => {
    const s = await startTestServer({ flags: [`--show-hidden-metrics-for-version=${release(1)}`] });
    servers.push(s);
    const m = await scrape(s);
    assert.equal(m.get('gatehouse_test_hidden_gauge')?.help, `[BETA] (Deprecated since ${release(HIDDEN_AFTER_RELEASES)}.0) A hidden test metric.`);
    assert.equal(m.get('gatehouse_test_hidden_gauge')?.metrics[0]?.value, '9');
  });
});
