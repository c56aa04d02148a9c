// One priority level's QueueSet alone, on a fake clock: kube's fair queuing
// (virtual finish times, charged for the service time really used), what
// round robin would not do; request widths; the queue-length and
// concurrency rejections; cancellation; the seat-demand integrator.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Integrator, QueueSet, type QsRequest, type StartResult } from '../../gateway/flowcontrol/queueset.js';
import { dealHand, flowHash } from '../../gateway/flowcontrol/shuffle.js';

class FakeClock {
  ms = 1_000_000;
  readonly now = () => this.ms;
  step(ms: number): void {
    this.ms += ms;
  }
}

/** Two flow names whose hands (of one queue each) differ, so they never share a queue. */
function twoFlows(queues: number): [string, string] {
  const a = 'fs\u0000alice';
  const hand = (f: string) => dealHand(flowHash(f), queues, 1)[0];
  for (let i = 0; ; i++) {
    const b = `fs\u0000bob-${i}`;
    if (hand(b) !== hand(a)) return [a, b];
  }
}

const start = (qs: QueueSet, flow: string, seats = 1): StartResult => qs.start(flow, () => flowHash(flow), seats, 'fs', flow);
const reqOf = (r: StartResult): QsRequest => {
  assert.notEqual(r.kind, 'reject');
  return (r as { req: QsRequest }).req;
};

describe('QueueSet: fair queuing', () => {
  it('serves two backlogged flows by the seat-time they use, not by turns: a flow of short requests gets many per long one', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure({ queues: 8, handSize: 1, queueLengthLimit: 1000 }, 1);
    const [slow, fast] = twoFlows(8);
    const serviceMs = (flow: string) => (flow === slow ? 1000 : 10);
    const order: string[] = [];
    const executing: Array<{ req: QsRequest; flow: string }> = [];
    const submit = (flow: string) => {
      const r = start(qs, flow);
      const req = reqOf(r);
      if (r.kind === 'execute') {
        order.push(flow);
        executing.push({ req, flow });
      } else
        req.onDispatch = () => {
          order.push(flow);
          executing.push({ req, flow });
        };
    };
    // Both flows stay backlogged for the whole run (20 s of slow work, 10 s of fast; 6 s run); one seat serves them.
    for (let i = 0; i < 1000; i++) {
      if (i < 20) submit(slow);
      submit(fast);
    }
    const used = new Map<string, number>([
      [slow, 0],
      [fast, 0],
    ]);
    while (clock.ms < 1_000_000 + 6_000) {
      const run = executing.shift();
      assert.ok(run, 'something executes while requests wait');
      clock.step(serviceMs(run.flow));
      used.set(run.flow, used.get(run.flow)! + serviceMs(run.flow));
      qs.finish(run.req);
    }
    const count = (flow: string) => order.filter((f) => f === flow).length;
    // Round robin would alternate (as many slow as fast); fair queuing gives each flow about half the seat-time.
    assert.ok(count(fast) >= 20 * count(slow), `fast ${count(fast)}, slow ${count(slow)}`);
    const share = used.get(fast)! / (used.get(fast)! + used.get(slow)!);
    assert.ok(share > 0.35 && share < 0.65, `fast flow's share of the seat-time: ${share}`);
  });

  it('a quiet flow arriving behind a backlog is served next, ahead of the backlogged flow', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure({ queues: 8, handSize: 1, queueLengthLimit: 100 }, 1);
    const [busy, quiet] = twoFlows(8);
    const first = reqOf(start(qs, busy));
    const order: string[] = [];
    for (let i = 0; i < 5; i++) reqOf(start(qs, busy)).onDispatch = () => order.push(busy);
    clock.step(150);
    reqOf(start(qs, quiet)).onDispatch = () => order.push(quiet);
    clock.step(50);
    qs.finish(first);
    assert.deepEqual(order, [quiet]);
  });

  it('a request waits until its seats are free; one wider than the level runs alone', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure({ queues: 4, handSize: 2, queueLengthLimit: 10 }, 4);
    const a = reqOf(start(qs, 'a', 3));
    assert.equal(qs.seatsInUse, 3);
    const wide = start(qs, 'b', 2);
    assert.equal(wide.kind, 'queued');
    let ran = false;
    reqOf(wide).onDispatch = () => {
      ran = true;
    };
    qs.finish(a);
    assert.equal(ran, true);
    assert.equal(qs.seatsInUse, 2);
    qs.finish(reqOf(wide));
    const huge = start(qs, 'c', 9);
    assert.equal(huge.kind, 'execute', 'nothing else executes: the wide request runs');
    assert.equal(start(qs, 'd', 1).kind, 'queued');
  });

  it('rejects with queue-full only when the seats are taken and the queue is at its limit', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure({ queues: 1, handSize: 1, queueLengthLimit: 2 }, 1);
    assert.equal(start(qs, 'a').kind, 'execute');
    assert.equal(start(qs, 'a').kind, 'queued');
    assert.equal(start(qs, 'a').kind, 'queued');
    assert.deepEqual(start(qs, 'a'), { kind: 'reject', reason: 'queue-full' });
    assert.equal(qs.rejected, 1);
  });

  it('a level without queues rejects with concurrency-limit when full', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure(undefined, 2);
    const a = reqOf(start(qs, 'a'));
    reqOf(start(qs, 'b'));
    assert.deepEqual(start(qs, 'c'), { kind: 'reject', reason: 'concurrency-limit' });
    qs.finish(a);
    assert.equal(start(qs, 'c').kind, 'execute');
  });

  it('a cancelled request leaves its queue and is never dispatched; counts say why', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    qs.configure({ queues: 2, handSize: 1, queueLengthLimit: 5 }, 1);
    const first = reqOf(start(qs, 'a'));
    const w1 = reqOf(start(qs, 'a'));
    const w2 = reqOf(start(qs, 'a'));
    let dispatched = '';
    w1.onDispatch = () => {
      dispatched += '1';
    };
    w2.onDispatch = () => {
      dispatched += '2';
    };
    assert.equal(qs.cancel(w1, 'time-out'), true);
    assert.equal(qs.cancel(w1, 'cancelled'), false, 'only once');
    qs.finish(first);
    assert.equal(dispatched, '2');
    assert.equal(qs.cancel(w2, 'cancelled'), false, 'an executing request is not cancelled');
    assert.deepEqual([qs.timedOut, qs.cancelled, qs.requestsWaiting], [1, 0, 0]);
  });

  it('raising the limit dispatches waiting requests at once', () => {
    const clock = new FakeClock();
    const qs = new QueueSet('t', clock.now);
    const q = { queues: 4, handSize: 2, queueLengthLimit: 5 };
    qs.configure(q, 1);
    reqOf(start(qs, 'a'));
    const waiting = reqOf(start(qs, 'b'));
    qs.configure(q, 2);
    assert.equal(waiting.state, 'executing');
  });
});

describe('Integrator', () => {
  it('gives the time-weighted average (sampled at its ticks), deviation and exact high watermark of a period', () => {
    const clock = new FakeClock();
    const g = new Integrator(clock.now);
    g.set(2);
    clock.step(1000);
    // The dispatcher's sampler reads the value at every tick; changes between ticks only move the maximum.
    g.tick();
    g.set(9);
    g.set(6);
    clock.step(1000);
    const r = g.reset();
    assert.equal(r.avg, 4);
    assert.equal(r.stdDev, 2);
    assert.equal(r.max, 9);
    clock.step(1000);
    assert.deepEqual(g.reset(), { avg: 6, stdDev: 0, max: 6, seconds: 1 });
  });
});
