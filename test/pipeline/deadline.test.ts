// The request deadline made on demand (gateway/pipeline/deadline.ts): the
// signal is one object however often it is read, aborts when the deadline
// does, and one read only after the abort is already aborted.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deadline } from '../../gateway/pipeline/deadline.js';

describe('Deadline', () => {
  it('gives one signal, aborted with the deadline', () => {
    const d = new Deadline();
    const s = d.signal;
    assert.equal(d.signal, s);
    let heard = 0;
    s.addEventListener('abort', () => { heard++; });
    assert.equal(s.aborted, false);
    d.abort();
    assert.equal(s.aborted, true);
    assert.equal(heard, 1);
  });

  it('a signal first read after the abort is already aborted', () => {
    const d = new Deadline();
    d.abort();
    assert.equal(d.signal.aborted, true);
  });
});
