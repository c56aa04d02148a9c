// The request deadline made on demand (gateway/pipeline/deadline.ts): the
// signal is one object however often it is read, aborts when the deadline
// does, and one read only after the abort is already aborted; the same
// deadline as a Cancellation (what the proxies wait on): callbacks run once at
// the abort, removed ones never, none kept by the deadline-less NO_DEADLINE.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Deadline, NO_DEADLINE } from '../../gateway/pipeline/deadline.js';

describe('Deadline', () => {
  it('gives one signal, aborted with the deadline', () => {
    const d = new Deadline();
    const s = d.signal;
    assert.equal(d.signal, s);
    let heard = 0;
    s.addEventListener('abort', () => {
      heard++;
    });
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

  it('as a Cancellation: runs each callback once at the abort, not one removed before it, and says aborted', () => {
    const d = new Deadline();
    const heard: string[] = [];
    const a = () => heard.push('a');
    const b = () => heard.push('b');
    const c = () => heard.push('c');
    d.onAbort(a);
    d.onAbort(b);
    d.onAbort(c);
    d.offAbort(b);
    d.offAbort(b); // twice: nothing more
    assert.equal(d.aborted, false);
    d.abort();
    d.abort(); // a second abort calls nobody again
    assert.equal(d.aborted, true);
    assert.deepEqual(heard, ['a', 'c']);
    assert.equal(d.signal.aborted, true, 'the signal agrees');
  });

  it('armed deadlines pass in the order they are due, whatever order they were armed in; disarmed ones never', async () => {
    const heard: string[] = [];
    const now = performance.now();
    const make = (name: string, inMs: number, length = 60_000): Deadline => {
      const d = new Deadline();
      d.armAt(now + inMs, length, () => heard.push(name));
      assert.equal(d.armed, true);
      return d;
    };
    make('c', 60);
    make('a', 20);
    const gone = make('x', 30);
    make('b', 40);
    make('short', 10, 1000);
    gone.disarm();
    const late = new Deadline();
    late.disarm();
    late.armAt(now + 5, 60_000, () => heard.push('disarmed before'));
    assert.equal(late.armed, true);
    await new Promise((r) => setTimeout(r, 120));
    assert.deepEqual(heard, ['short', 'a', 'b', 'c']);
  });

  it('NO_DEADLINE never aborts and keeps no callback', () => {
    let heard = 0;
    NO_DEADLINE.onAbort(() => {
      heard++;
    });
    assert.equal(NO_DEADLINE.aborted, false);
    assert.equal(NO_DEADLINE.signal.aborted, false);
    assert.equal(heard, 0);
    assert.ok(Object.isFrozen(NO_DEADLINE));
  });
});
