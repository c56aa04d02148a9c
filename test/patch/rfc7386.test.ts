// RFC 7386 appendix A, every example, against lib/patch/merge.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergePatch } from '../../lib/patch/merge.js';

const CASES: Array<[unknown, unknown, unknown]> = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [
    ['a', 'b'],
    ['c', 'd'],
    ['c', 'd'],
  ],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe('RFC 7386 appendix A', () => {
  for (const [i, [target, patch, result]] of CASES.entries()) {
    it(`example ${i + 1}: ${JSON.stringify(target)} patched with ${JSON.stringify(patch)} gives ${JSON.stringify(result)}`, () => {
      assert.deepEqual(mergePatch(target, patch), result);
    });
  }
  it('leaves its inputs unchanged', () => {
    const target = Object.freeze({ a: Object.freeze({ b: 1 }) });
    assert.deepEqual(mergePatch(target, { a: { c: 2 } }), { a: { b: 1, c: 2 } });
  });
});
