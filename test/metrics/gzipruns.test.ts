// A scrape is rendered from the lean metrics' kept bytes and gzipped run by
// run (lib/metrics/gzipruns.ts): the bytes must be exactly prom-client's text,
// scrape after scrape as label sets move and appear, and the gzip one valid
// member (CRC and length checked by zlib) of the same text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32, gunzipSync } from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { LifecycleRegistry } from '../../lib/metrics/registry.js';
import { LeanCounter, LeanHistogram } from '../../lib/metrics/lean.js';
import { gzipRuns } from '../../lib/metrics/gzipruns.js';
import { crc32Combine } from '../../lib/metrics/crc32combine.js';
import { Counter } from 'prom-client';

test('crc32Combine equals the CRC-32 of the concatenation', () => {
  for (const [a, b] of [
    [0, 0],
    [0, 7],
    [7, 0],
    [1, 1],
    [1000, 70_000],
    [123_457, 3_000_001],
  ] as const) {
    const x = Buffer.from(Array.from({ length: a }, (_, i) => (i * 31 + 7) & 255));
    const y = Buffer.from(Array.from({ length: b }, (_, i) => (i * 17 + 3) & 255));
    assert.equal(crc32Combine(crc32(x), crc32(y), b), crc32(Buffer.concat([x, y])), `${a}+${b}`);
  }
});

test('scrape after scrape, the runs are prom-client text and their gzip is that text', async () => {
  const r = new LifecycleRegistry({ major: 1, minor: 33 });
  const c = new LeanCounter('test_runs_total', 'Runs.', { stabilityLevel: 'ALPHA' }, r);
  const h = new LeanHistogram('test_runs_seconds', 'Runs.', { stabilityLevel: 'ALPHA' }, [0.1, 1, 10], r);
  new Counter(r.declared({ name: 'test_plain_total', help: 'A prom-client counter.', stabilityLevel: 'ALPHA', labelNames: ['x'] })).inc({ x: 'y' });
  const handles = Array.from({ length: 300 }, (_, i) => h.handle({ resource: `r${i}`, verb: i % 2 ? 'GET' : 'LIST' }));
  const counters = Array.from({ length: 300 }, (_, i) => c.handle({ resource: `r${i}`, code: '200' }));
  let previous: Buffer | undefined;
  for (let round = 0; round < 6; round++) {
    // A few label sets move, a few appear (never-observed ones become written), most stay.
    for (let i = round; i < 300; i += 37) handles[i]!.observe(round * 0.3);
    for (let i = round * 50; i < round * 50 + 50; i++) counters[i]!.value += i + 1;
    const text = await r.metrics();
    const runs = await r.metricsRuns();
    const plain = Buffer.concat(runs.flatMap((x) => x.parts));
    assert.equal(plain.toString('utf8'), text, `round ${round}: runs`);
    const zipped = gzipRuns(runs, 1);
    assert.equal(gunzipSync(zipped).toString('utf8'), text, `round ${round}: gzip`);
    if (previous) assert.notDeepEqual(zipped, previous);
    previous = zipped;
  }
  // And the command-line gzip agrees that it is one valid member.
  try {
    execFileSync('gzip', ['-t'], { input: previous });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
});

test('an unchanged label set is not rendered again', async () => {
  const r = new LifecycleRegistry({ major: 1, minor: 33 });
  const h = new LeanHistogram('test_kept_seconds', 'Kept.', { stabilityLevel: 'ALPHA' }, [1], r);
  const a = h.handle({ verb: 'GET' });
  const b = h.handle({ verb: 'LIST' });
  a.observe(0.5);
  b.observe(0.5);
  const first = (await r.metricsRuns()).flatMap((x) => x.parts);
  b.observe(2);
  const second = (await r.metricsRuns()).flatMap((x) => x.parts);
  assert.equal(second.length, first.length);
  assert.ok(second.includes(a.rendered.bytes) && first.includes(a.rendered.bytes), "GET's bytes kept");
  assert.ok(!first.includes(b.rendered.bytes), "LIST's bytes made again after it observed");
});
