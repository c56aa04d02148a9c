// The pieces of an audit event alone: kube's MicroTime timestamps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { microTime } from '../../gateway/audit/event.js';

describe('audit event timestamps (microTime)', () => {
  it('are kube\'s MicroTime: UTC to the microsecond, the clock\'s time, never going back across seconds', async () => {
    const seen: string[] = [];
    const t0 = Date.now();
    for (let i = 0; i < 12; i++) {
      seen.push(microTime());
      await sleep(110); // more than a second in all: the second's prefix is formatted again
    }
    for (const t of seen) assert.match(t, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!, `${seen[i]} after ${seen[i - 1]}`);
    const first = Date.parse(seen[0]!.slice(0, 23) + 'Z');
    assert.ok(Math.abs(first - t0) < 1000, `${seen[0]} is about ${new Date(t0).toISOString()}`);
    assert.notEqual(seen[0]!.slice(0, 19), seen.at(-1)!.slice(0, 19), 'a later second');
  });
});
