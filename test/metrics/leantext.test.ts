// The lean metrics write their own exposition text (a scrape's cost): it is
// exactly what prom-client's formatter makes of their values, escapes and
// all, and what a registry serves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { LifecycleRegistry } from '../../lib/metrics/registry.js';
import { LeanCounter, LeanHistogram } from '../../lib/metrics/lean.js';

const promClientFormat = (Registry.prototype as unknown as { getMetricsAsString(this: Registry, m: unknown): Promise<string> }).getMetricsAsString;

test("a lean counter's and histogram's text equal prom-client's formatting of their values", async () => {
  const r = new LifecycleRegistry({ major: 1, minor: 33 });
  const c = new LeanCounter('test_lean_total', 'Help with a \\ backslash\nand a newline.', { stabilityLevel: 'ALPHA' }, r);
  const h = new LeanHistogram('test_lean_seconds', 'A histogram.', { stabilityLevel: 'BETA' }, [0.1, 1, 10], r);
  c.handle({ path: 'a"b\\c\nd', verb: 'GET' }).value += 3;
  c.handle({ path: 'never', verb: 'GET' }); // never counted: not written
  c.handleFor('', {}).value += 0; // no labels: written even at 0
  const big = h.handle({ verb: 'LIST' });
  for (const v of [0.05, 0.5, 5, 50, Infinity]) big.observe(v);
  h.handle({ verb: 'GET' }); // never observed: not written
  h.handleFor('', {}).observe(0.2);
  for (const m of [c, h]) assert.equal((m as unknown as { text(): string }).text(), await promClientFormat.call(r, m), m.name);
  const served = await r.metrics();
  assert.match(served, /^test_lean_total\{path="a\\"b\\\\c\\nd",verb="GET"\} 3$/m);
  assert.match(served, /^test_lean_total 0$/m);
  assert.match(served, /^test_lean_seconds_bucket\{verb="LIST",le="\+Inf"\} 5$/m);
  assert.match(served, /^test_lean_seconds_sum\{verb="LIST"\} \+Inf$/m);
  assert.match(served, /^test_lean_seconds_count 1$/m);
  assert.doesNotMatch(served, /never|verb="GET"\} 0|_count\{verb="GET"\}/);
});
