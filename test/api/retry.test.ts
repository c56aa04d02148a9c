// retryOnConflict, the one loop of every write retried on a conflict: it
// tries again while a try answers RETRY, up to its bound (CONFLICT_ATTEMPTS
// unless the caller names one), then throws the caller's error or answers
// its give-up value; a value or an error of any try ends it at once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONFLICT_ATTEMPTS, RETRY, retryOnConflict, type Exhausted } from '../../lib/api/retry.js';
import * as store from '../../backends/core/store/types.js';

describe('retryOnConflict', () => {
  const cases: Array<{
    what: string;
    /** Tries that conflict before one answers `'done'` (Infinity: all of them). */
    conflicts: number;
    attempts?: number;
    exhausted: Exhausted<string | null>;
    want: { value: string | null } | { error: string };
    tries: number;
  }> = [
    { what: 'a first try that succeeds', conflicts: 0, exhausted: () => new Error('x'), want: { value: 'done' }, tries: 1 },
    {
      what: 'success on the last allowed try',
      conflicts: CONFLICT_ATTEMPTS - 1,
      exhausted: () => new Error('x'),
      want: { value: 'done' },
      tries: CONFLICT_ATTEMPTS,
    },
    {
      what: 'conflicts on every try: the error',
      conflicts: Infinity,
      exhausted: () => new Error('still conflicting'),
      want: { error: 'still conflicting' },
      tries: CONFLICT_ATTEMPTS,
    },
    { what: "a caller's bound", conflicts: Infinity, attempts: 5, exhausted: () => new Error('five'), want: { error: 'five' }, tries: 5 },
    { what: "success within a caller's bound", conflicts: 4, attempts: 5, exhausted: { giveUp: null }, want: { value: 'done' }, tries: 5 },
    { what: 'giving up with a value', conflicts: Infinity, attempts: 8, exhausted: { giveUp: null }, want: { value: null }, tries: 8 },
    { what: 'one more conflict than the bound', conflicts: 5, attempts: 5, exhausted: { giveUp: 'gave up' }, want: { value: 'gave up' }, tries: 5 },
  ];
  for (const c of cases) {
    it(c.what, async () => {
      const seen: number[] = [];
      const run = retryOnConflict<string | null>(
        async (tried) => {
          seen.push(tried);
          return seen.length <= c.conflicts ? RETRY : 'done';
        },
        c.exhausted,
        ...(c.attempts !== undefined ? [c.attempts] : []),
      );
      if ('error' in c.want) await assert.rejects(run, { message: c.want.error });
      else assert.equal(await run, c.want.value);
      assert.deepEqual(
        seen,
        Array.from({ length: c.tries }, (_, i) => i),
      );
    });
  }

  it("stops at a try's error", async () => {
    let tries = 0;
    const run = retryOnConflict(
      async () => {
        tries++;
        if (tries === 2) throw new Error('not a conflict');
        return RETRY;
      },
      { giveUp: 'never' },
    );
    await assert.rejects(run, { message: 'not a conflict' });
    assert.equal(tries, 2);
  });

  it('is the one the store exports', () => {
    assert.equal(store.retryOnConflict, retryOnConflict);
    assert.equal(store.RETRY, RETRY);
    assert.equal(store.CONFLICT_ATTEMPTS, CONFLICT_ATTEMPTS);
  });
});
