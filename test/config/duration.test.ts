import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseDuration } from '../../gateway/config/duration.js';

describe('parseDuration', () => {
  const good: [string, number][] = [
    ['0', 0],
    ['0s', 0],
    ['300ms', 300],
    ['4s', 4000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['2m0s', 120_000],
    ['1.5h', 5_400_000],
    ['.5s', 500],
    ['1.s', 1000],
    ['500us', 0.5],
    ['1000000ns', 1],
    ['1h1m1s1ms', 3_661_001],
    ['-5s', -5000],
    ['+5s', 5000],
    ['1µs', 0.001],
  ];
  for (const [input, ms] of good) {
    it(`parses "${input}" as ${ms}ms`, () => assert.equal(parseDuration(input), ms));
  }

  const bad: [string, string][] = [
    ['', 'must be a duration such as 300ms, 4s or 1h30m'],
    ['5', 'missing unit (one of ns, us, ms, s, m, h)'],
    ['1h5', 'missing unit (one of ns, us, ms, s, m, h)'],
    ['5d', 'unknown unit "d" (use ns, us, ms, s, m or h)'],
    ['5 s', 'unknown unit " s" (use ns, us, ms, s, m or h)'],
    ['s', 'must be a duration such as 300ms, 4s or 1h30m'],
    ['.s', 'must be a duration such as 300ms, 4s or 1h30m'],
    ['abc', 'must be a duration such as 300ms, 4s or 1h30m'],
    ['-', 'must be a duration such as 300ms, 4s or 1h30m'],
    ['1.2.3s', 'missing unit (one of ns, us, ms, s, m, h)'],
    ['9999999999h', 'duration is too large'],
  ];
  for (const [input, message] of bad) {
    it(`rejects "${input}"`, () => assert.throws(() => parseDuration(input), { message }));
  }
});

describe('formatDuration', () => {
  const table: [number, string][] = [
    [0, '0s'],
    [300, '300ms'],
    [4000, '4s'],
    [300_000, '5m0s'],
    [5_400_000, '1h30m0s'],
    [1500, '1.5s'],
  ];
  for (const [ms, text] of table) {
    it(`prints ${ms}ms as "${text}" and reads it back`, () => {
      assert.equal(formatDuration(ms), text);
      assert.equal(parseDuration(text), ms);
    });
  }
});
