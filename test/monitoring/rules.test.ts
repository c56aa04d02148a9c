// k8s/monitoring/ and docs/runbooks/ as k8s/monitoring/source makes them:
// the committed files equal the generated ones; promtool checks every rules
// file and runs the unit tests (every alert fires on its firing input and not
// on its quiet one); every rule and panel expression names only series
// Gatehouse's /metrics exports (or the rules record); every runbook_url
// names a runbook that exists.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { render, RULES_FILE, RULES_TEST_FILE } from '../../k8s/monitoring/source/render.js';
import { alerts, recordingRules } from '../../k8s/monitoring/source/rules.js';
import { panelQueries } from '../../k8s/monitoring/source/dashboards.js';
import { seriesNames } from '../../k8s/monitoring/source/promql.js';
import { root } from '../docs/readmes.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { missing } from './tools.js';

const promtool = (...args: string[]) => spawnSync('promtool', args, { cwd: root, encoding: 'utf8' });

describe('the monitoring files', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gatehouse-monitoring-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('are committed as the source makes them (node --import tsx k8s/monitoring/generate.ts)', async () => {
    const stale: string[] = [];
    for (const [path, content] of render()) if ((await readFile(join(root, path), 'utf8').catch(() => '')) !== content) stale.push(path);
    assert.deepEqual(stale, []);
  });

  it('promtool checks the rules file and the PrometheusRule', { skip: missing('promtool') }, async () => {
    const plain = promtool('check', 'rules', RULES_FILE);
    assert.equal(plain.status, 0, plain.stdout + plain.stderr);
    assert.match(plain.stdout, new RegExp(`SUCCESS: ${recordingRules.length + alerts.reduce((n, a) => n + a.rules.length, 0)} rules found`));
    // The PrometheusRule's spec is a rules file: checked as one.
    const pr = parse(await readFile(join(root, 'k8s/monitoring/prometheusrule.yaml'), 'utf8')) as { kind: string; spec: unknown };
    assert.equal(pr.kind, 'PrometheusRule');
    const file = join(dir, 'prometheusrule-spec.yaml');
    await writeFile(file, JSON.stringify(pr.spec));
    const operator = promtool('check', 'rules', file);
    assert.equal(operator.status, 0, operator.stdout + operator.stderr);
  });

  it('promtool runs the unit tests: every alert fires on its input and stays quiet on the other', { skip: missing('promtool') }, () => {
    const r = promtool('test', 'rules', RULES_TEST_FILE);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /SUCCESS/);
  });

  it("every alert has a firing and a quiet case, whose input is the alert's own series", () => {
    for (const a of alerts) {
      assert.ok(a.tests.some((t) => t.fires.length > 0) && a.tests.some((t) => t.fires.length === 0), a.name);
      const read = new Set(a.rules.flatMap((r) => seriesNames(r.expr)).flatMap((n) => [n, ...recordedFrom(n)]));
      for (const t of a.tests)
        for (const i of t.input) {
          const name = i.series.slice(0, i.series.indexOf('{'));
          // A histogram's _sum and _count come with the _bucket series an alert reads (and the other way round).
          const base = name.replace(/_(sum|count)$/, '');
          assert.ok(
            read.has(name) || (base !== name && (read.has(`${base}_bucket`) || read.has(`${base}_count`))),
            `${a.name} / ${t.what}: ${name} is not read by the alert`,
          );
        }
    }
  });

  it('every runbook_url names a runbook that exists, with its three parts', async () => {
    const rules = parse(await readFile(join(root, RULES_FILE), 'utf8')) as {
      groups: Array<{ rules: Array<{ alert?: string; annotations?: Record<string, string> }> }>;
    };
    const urls = rules.groups.flatMap((g) => g.rules.filter((r) => r.alert).map((r) => r.annotations!['runbook_url']!));
    assert.equal(
      urls.length,
      alerts.reduce((n, a) => n + a.rules.length, 0),
    );
    for (const url of new Set(urls)) {
      assert.ok(existsSync(join(root, url)), url);
      const text = await readFile(join(root, url), 'utf8');
      for (const part of ['## Meaning', '## Confirm', '## Act']) assert.ok(text.includes(part), `${url}: ${part}`);
    }
  });
});

/** The series a recording rule reads, for inputs that feed an alert through it. */
function recordedFrom(name: string): string[] {
  const r = recordingRules.find((x) => x.record === name);
  return r ? seriesNames(r.expr) : [];
}

describe("the rules and dashboards read only what Gatehouse's /metrics exports", () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s?.close();
  });

  it('every series name of every rule and panel is exported (a renamed metric fails here)', async () => {
    const text = (await s.admin.request('GET', '/metrics')).text;
    const exported = new Set<string>(['up']); // made by Prometheus for every target
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const [, name, type] = m;
      exported.add(name!);
      if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name! + suffix);
    }
    for (const r of recordingRules) exported.add(r.record);
    const unknown: string[] = [];
    const check = (where: string, expr: string) => {
      for (const name of seriesNames(expr)) if (!exported.has(name)) unknown.push(`${where}: ${name}`);
    };
    for (const r of recordingRules) check(r.record, r.expr);
    for (const a of alerts) for (const r of a.rules) check(a.name, r.expr);
    for (const p of panelQueries()) check(p.where, p.expr);
    assert.deepEqual(unknown, []);
    // The check sees names at all: every panel reads something.
    assert.ok(panelQueries().every((p) => seriesNames(p.expr).length > 0));
  });
});
