// Borrowing between priority levels: the bounds (NominalCL, LendableCL,
// BorrowingCL), the fair allocation, and the dispatcher's periodic
// adjustment on a fake clock: an idle level lends to a busy one (whose
// waiting requests then run), within lendablePercent and
// borrowingLimitPercent, and gets its seats back when its own demand
// returns; an Exempt level's demand takes seats from the others.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KObject } from '../../lib/api/meta.js';
import { Classifier } from '../../gateway/flowcontrol/classifier.js';
import { Dispatcher } from '../../gateway/flowcontrol/dispatcher.js';
import { allocate, boundsOf, currentLimits, emptyStats } from '../../gateway/flowcontrol/borrowing.js';
import type { QsRequest } from '../../gateway/flowcontrol/queueset.js';

const V = 'flowcontrol.apiserver.k8s.io/v1';
const limited = (name: string, shares: number, lendablePercent: number, borrowingLimitPercent?: number): KObject => ({
  apiVersion: V,
  kind: 'PriorityLevelConfiguration',
  metadata: { name, uid: `pl-${name}` },
  spec: {
    type: 'Limited',
    limited: {
      nominalConcurrencyShares: shares,
      lendablePercent,
      ...(borrowingLimitPercent !== undefined ? { borrowingLimitPercent } : {}),
      limitResponse: { type: 'Queue', queuing: { queues: 4, handSize: 2, queueLengthLimit: 100 } },
    },
  },
});
const exempt = (shares: number, lendablePercent: number): KObject => ({
  apiVersion: V,
  kind: 'PriorityLevelConfiguration',
  metadata: { name: 'exempt', uid: 'pl-exempt' },
  spec: { type: 'Exempt', exempt: { nominalConcurrencyShares: shares, lendablePercent } },
});

class FakeClock {
  ms = 5_000_000;
  readonly now = () => this.ms;
}

function setup(levels: KObject[], total: number) {
  const clock = new FakeClock();
  const c = new Classifier();
  c.reflected()[1]!.reset(levels);
  const d = new Dispatcher(c, total, { clock: clock.now, borrowingPeriodMs: 0 });
  const level = (name: string) => d.states.get(name)!;
  /** n requests of one flow each at the level; they execute or wait. */
  const load = (name: string, n: number): QsRequest[] => {
    const out: QsRequest[] = [];
    for (let i = 0; i < n; i++) {
      const r = level(name).qs.start(`f${i}`, () => BigInt(i * 7919), 1, 'fs', `f${i}`);
      assert.notEqual(r.kind, 'reject');
      if (r.kind !== 'reject') out.push(r.req);
    }
    return out;
  };
  return { clock, d, level, load };
}

describe('borrowing: bounds and allocation', () => {
  it('LendableCL and BorrowingCL round NominalCL times their percentages; no borrowingLimitPercent is no limit', () => {
    assert.deepEqual(boundsOf(10, 50, 20), { nominalCL: 10, lendableCL: 5, borrowingCL: 2, minCL: 5, maxCL: 12 });
    assert.equal(boundsOf(10, 0, undefined).maxCL, Infinity);
  });

  it('allocates one fair proportion of the targets within each floor and ceiling', () => {
    assert.deepEqual(
      allocate(
        [
          { lower: 1, upper: 10, target: 2 },
          { lower: 1, upper: 10, target: 6 },
        ],
        8,
      ).map(Math.round),
      [2, 6],
    );
    assert.deepEqual(
      allocate(
        [
          { lower: 3, upper: 4, target: 100 },
          { lower: 1, upper: 100, target: 1 },
        ],
        10,
      ).map(Math.round),
      [4, 6],
    );
    assert.deepEqual(
      allocate(
        [
          { lower: 6, upper: 9, target: 1 },
          { lower: 6, upper: 9, target: 1 },
        ],
        10,
      ),
      [6, 6],
      'floors above the total: the floors',
    );
  });

  it('an idle level keeps what it may not lend; a busy one takes the rest', () => {
    const s = (hw: number, smoothed: number) => ({ ...emptyStats(), highWatermark: hw, smoothed });
    const limits = currentLimits([
      { exempt: false, bounds: boundsOf(10, 50, undefined), stats: s(0, 0) },
      { exempt: false, bounds: boundsOf(10, 0, undefined), stats: s(20, 20) },
    ]);
    assert.deepEqual(limits, [5, 15]);
  });
});

describe('borrowing: the dispatcher adjusts limits every period', () => {
  it('an idle level lends seats to a busy one, whose waiting requests then run; the seats come back with demand', () => {
    const { clock, d, level, load } = setup([exempt(0, 0), limited('idle', 50, 60), limited('busy', 50, 0)], 20);
    assert.equal(level('idle').currentCL, 10);
    assert.equal(level('busy').currentCL, 10);
    const busy = load('busy', 30);
    assert.equal(level('busy').qs.requestsExecuting, 10);
    clock.ms += 10_000;
    d.adjustBorrowing();
    // The idle level lends round(10·60%) = 6 seats; the busy one has no borrowing limit.
    assert.equal(level('idle').currentCL, 4);
    assert.equal(level('busy').currentCL, 16);
    assert.equal(level('busy').qs.requestsExecuting, 16, 'six more of the waiting requests run at once');
    // The lender gets busy, the borrower calms down: the seats go back.
    for (const r of busy) level('busy').qs.finish(r);
    load('idle', 30);
    for (let i = 0; i < 30; i++) {
      clock.ms += 10_000;
      d.adjustBorrowing();
    }
    assert.ok(level('idle').currentCL >= 10, `idle level back to at least its nominal: ${level('idle').currentCL}`);
    assert.equal(level('idle').currentCL + level('busy').currentCL, 20);
  });

  it('borrowingLimitPercent caps what a level borrows', () => {
    const { clock, d, level, load } = setup([exempt(0, 0), limited('idle', 50, 100), limited('busy', 50, 0, 20)], 20);
    load('busy', 40);
    clock.ms += 10_000;
    d.adjustBorrowing();
    assert.equal(level('busy').currentCL, 12, 'NominalCL 10 + round(10·20%)');
  });

  it("an Exempt level with shares borrows: its demand lowers the others' limits, never below what they may not lend", () => {
    const { clock, d, level, load } = setup([exempt(50, 0), limited('a', 50, 50)], 20);
    assert.equal(level('exempt').currentCL, 10);
    load('exempt', 16);
    assert.equal(level('exempt').qs.requestsExecuting, 16, 'exempt requests never wait');
    clock.ms += 10_000;
    d.adjustBorrowing();
    assert.equal(level('a').currentCL, 5, 'a lends its lendable half');
    // The floors (16 of exempt demand, 5 a may not lend) already pass the 20 seats: each gets its floor.
    assert.equal(level('exempt').currentCL, 16);
  });
});
