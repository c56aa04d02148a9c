// SortedKeys against a plain sorted array under random inserts and removals,
// enough of them to split and merge chunks many times.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SortedKeys } from '../../backends/core/store/sortedkeys.js';

/** A small deterministic generator, so a failure repeats. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ref = {
  lowerBound: (a: string[], k: string) => a.filter((x) => x < k).length,
  upperBound: (a: string[], k: string) => a.filter((x) => x <= k).length,
};

describe('SortedKeys', () => {
  it('agrees with a sorted array through inserts, removals, searches and iteration', () => {
    const rand = rng(7);
    const keys = new SortedKeys();
    let plain: string[] = [];
    const key = () => `core/pods/ns${Math.floor(rand() * 5)}/p${Math.floor(rand() * 3000)}`;
    for (let step = 0; step < 12_000; step++) {
      const k = key();
      // Mostly inserts first, then mostly removals, so chunks both split and merge.
      const insert = rand() < (step < 6000 ? 0.8 : 0.25);
      const had = plain.includes(k);
      if (insert) {
        assert.equal(keys.insert(k), !had);
        if (!had) plain = [...plain, k].sort();
      } else {
        assert.equal(keys.remove(k), had);
        if (had) plain = plain.filter((x) => x !== k);
      }
      assert.equal(keys.size, plain.length);
      if (step % 500 === 0) {
        assert.deepEqual([...keys], plain);
        for (let j = 0; j < 20; j++) {
          const q = rand() < 0.5 ? key() : (plain[Math.floor(rand() * plain.length)] ?? 'x');
          assert.equal(keys.lowerBound(q), ref.lowerBound(plain, q), `lowerBound(${q})`);
          assert.equal(keys.upperBound(q), ref.upperBound(plain, q), `upperBound(${q})`);
          const at = Math.floor(rand() * (plain.length + 2));
          assert.deepEqual([...keys.from(at)], plain.slice(at));
        }
      }
    }
    assert.ok(plain.length > 0);
    assert.deepEqual([...keys], plain);
  });

  it('builds from sorted keys, and a clone changes independently', () => {
    const sorted = Array.from({ length: 2000 }, (_, i) => `k${String(i).padStart(5, '0')}`);
    const keys = new SortedKeys(sorted);
    const copy = keys.clone();
    assert.equal(copy.remove('k00010'), true);
    assert.equal(copy.insert('k00010a'), true);
    assert.deepEqual([...keys], sorted);
    assert.equal(keys.size, 2000);
    assert.equal(copy.size, 2000);
    assert.equal(copy.lowerBound('k00011'), 11);
    assert.equal(keys.lowerBound(''), 0);
    assert.equal(keys.upperBound('z'), 2000);
    assert.deepEqual([...new SortedKeys().from(0)], []);
  });
});
