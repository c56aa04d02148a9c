// ReadFence (backends/core/store/redis-readindex.ts): which revision check or
// feed read may answer a consistent read. The checks here are driven by hand
// so each ordering of arrival, check and feed read is exact; the same rules
// against a real Redis are in redis-reads.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ReadFence } from '../../backends/core/store/redis-readindex.js';

/** A fence whose checks the test answers one by one, in the order they were sent. */
function manual(): { fence: ReadFence<number>; sent: ((v: number) => void)[]; fail: ((e: Error) => void)[] } {
  const sent: ((v: number) => void)[] = [];
  const fail: ((e: Error) => void)[] = [];
  const fence = new ReadFence<number>(
    () =>
      new Promise<number>((resolve, reject) => {
        sent.push(resolve);
        fail.push(reject);
      }),
  );
  return { fence, sent, fail };
}

const settled = <T>(p: Promise<T>): { value?: T; done: boolean } => {
  const s: { value?: T; done: boolean } = { done: false };
  p.then(
    (v) => {
      s.value = v;
      s.done = true;
    },
    () => {
      s.done = true;
    },
  );
  return s;
};
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('ReadFence', () => {
  it('shares one check among reads queued together, and never gives a read a check sent before it arrived', async () => {
    const { fence, sent } = manual();
    const first = settled(fence.fresh());
    assert.equal(sent.length, 1, 'the first read starts a check');
    // These arrive while check 1 is in flight: it may have been answered before they arrived.
    const later = Array.from({ length: 50 }, () => settled(fence.fresh()));
    assert.equal(sent.length, 1, 'no second check while one is in flight');
    sent[0]!(10);
    await turn();
    assert.equal(first.value, 10);
    assert.ok(
      later.every((r) => !r.done),
      'reads that arrived during check 1 wait for check 2',
    );
    assert.equal(sent.length, 2, 'they start one check together');
    sent[1]!(11);
    await turn();
    assert.deepEqual(
      later.map((r) => r.value),
      later.map(() => 11),
    );
    assert.equal(fence.stats.checks, 2);
  });

  it('lets a feed read sent after a read arrived answer it, so the queued check is never sent', async () => {
    const { fence, sent } = manual();
    void fence.fresh(); // check 1 in flight
    const before = fence.tick(); // a feed read sent before the next reads arrive
    const queued = Array.from({ length: 5 }, () => settled(fence.fresh()));
    fence.caughtUp(before);
    await turn();
    assert.ok(
      queued.every((r) => !r.done),
      'a feed read sent before their arrival does not cover them',
    );
    const after = fence.tick();
    fence.caughtUp(after);
    await turn();
    assert.ok(
      queued.every((r) => r.done && r.value === undefined),
      'answered by the feed',
    );
    sent[0]!(1);
    await turn();
    assert.equal(sent.length, 1, 'no check for reads the feed answered');
    // The read waiting on check 1 arrived before that feed read too: six answered by the feed.
    assert.deepEqual(fence.stats, { checks: 1, byFeed: 6 });
  });

  it('answers a read waiting on a check in flight by a later feed read, and only reads that arrived before that feed read', async () => {
    const { fence, sent } = manual();
    const a = settled(fence.fresh());
    const t = fence.tick();
    const b = settled(fence.fresh());
    fence.caughtUp(t);
    await turn();
    assert.equal(a.done, true, 'a arrived before the feed read was sent');
    assert.equal(b.done, false, 'b arrived after it');
    sent[0]!(3);
    await turn();
    assert.equal(b.done, false, 'b still needs a check sent after it arrived');
    sent[1]!(4);
    await turn();
    assert.equal(b.value, 4);
  });

  it('never answers point() from the feed: callers of point() need the revision itself', async () => {
    const { fence, sent } = manual();
    void fence.fresh();
    const p = settled(fence.point());
    fence.caughtUp(fence.tick());
    sent[0]!(1);
    await turn();
    assert.equal(p.done, false);
    sent[1]!(2);
    await turn();
    assert.equal(p.value, 2);
  });

  it('fails the reads waiting when told (the feed broke) and a failed check fails only its own batch', async () => {
    const { fence, sent, fail } = manual();
    const a = fence.fresh();
    const b = fence.fresh();
    fence.failAll(new Error('feed down'));
    await assert.rejects(a, /feed down/);
    await assert.rejects(b, /feed down/);
    sent[0]!(1); // the check in flight returns later: no one is left to answer
    await turn();
    const c = fence.fresh();
    assert.equal(sent.length, 2);
    const d = settled(fence.fresh());
    fail[1]!(new Error('redis: not connected'));
    await assert.rejects(c, /not connected/);
    await turn();
    assert.equal(d.done, false, 'd arrived after the failed check was sent');
    sent[2]!(5);
    await turn();
    assert.equal(d.value, 5);
  });
});
