// Borrowing between priority levels, as kube's APF config controller does it
// every 10 s: each level's seat demand over the period (time-weighted
// average, deviation, high watermark, from its QueueSet's integrator) gives a
// smoothed target; the server's seats (the sum of the NominalCLs) are then
// shared out by one fair proportion of those targets, each level's share
// kept between its floor — what it may not lend (NominalCL − LendableCL), or
// its recent demand up to its NominalCL — and its ceiling (NominalCL +
// BorrowingCL; Exempt levels have none). An idle level thus lends seats to a
// busy one, and gets them back as its own demand returns.

/** kube's borrowingAdjustmentPeriod and seatDemandSmoothingFactor. */
export const BORROWING_PERIOD_MS = 10_000;
const SMOOTHING = 0.977;

export interface Bounds {
  readonly nominalCL: number;
  readonly lendableCL: number;
  /** Infinity: no borrowingLimitPercent. */
  readonly borrowingCL: number;
  readonly minCL: number;
  readonly maxCL: number;
}

/** NominalCL, LendableCL = round(NominalCL·lendablePercent/100), BorrowingCL = round(NominalCL·borrowingLimitPercent/100). */
export function boundsOf(nominalCL: number, lendablePercent: number, borrowingLimitPercent: number | undefined): Bounds {
  const lendableCL = Math.round((nominalCL * lendablePercent) / 100);
  const borrowingCL = borrowingLimitPercent === undefined ? Infinity : Math.round((nominalCL * borrowingLimitPercent) / 100);
  return { nominalCL, lendableCL, borrowingCL, minCL: nominalCL - lendableCL, maxCL: nominalCL + borrowingCL };
}

export interface DemandStats {
  avg: number;
  stdDev: number;
  highWatermark: number;
  smoothed: number;
}

export const emptyStats = (): DemandStats => ({ avg: 0, stdDev: 0, highWatermark: 0, smoothed: 0 });

/** A period's observation folded in: the envelope avg + stdDev, smoothed so a level's target decays slowly. */
export function updateStats(s: DemandStats, obs: { avg: number; stdDev: number; max: number; seconds: number }): void {
  s.highWatermark = Math.round(obs.max);
  if (obs.seconds <= 0) return;
  s.avg = obs.avg;
  s.stdDev = obs.stdDev;
  const envelope = obs.avg + obs.stdDev;
  s.smoothed = Math.max(envelope, SMOOTHING * s.smoothed + (1 - SMOOTHING) * envelope);
}

export interface AllocItem {
  lower: number;
  upper: number;
  target: number;
}

/**
 * Shares `total` out as clamp(f·target, lower, upper) with one proportion f
 * for all (kube's computeConcurrencyAllocation): the floors when they already
 * take everything, the ceilings when even they do not reach it.
 */
export function allocate(items: readonly AllocItem[], total: number): number[] {
  const at = (f: number) => items.map((c) => Math.min(c.upper, Math.max(c.lower, c.target * f)));
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const lowers = items.map((c) => c.lower);
  if (sum(lowers) >= total) return lowers;
  // f grows until the sum reaches the total (or cannot: every item capped or without target).
  let hi = 1;
  while (sum(at(hi)) < total && hi < 1e12) hi *= 2;
  if (sum(at(hi)) < total) return at(hi);
  let lo = 0;
  for (let k = 0; k < 100; k++) {
    const mid = (lo + hi) / 2;
    if (sum(at(mid)) < total) lo = mid;
    else hi = mid;
  }
  return at(hi);
}

export interface BorrowingLevel {
  readonly exempt: boolean;
  readonly bounds: Bounds;
  readonly stats: DemandStats;
}

/**
 * The current concurrency limits for one period, rounded to seats. Each
 * level's floor is max(minCL, min(NominalCL, high watermark)) — an Exempt
 * level's max(minCL, high watermark), as its requests run whatever the limit.
 * A level with no demand at all targets a sliver of its NominalCL, so that
 * idle levels share what is left in proportion to their nominal sizes
 * (kube's allocation leaves that case to its solver's tie-breaking).
 */
export function currentLimits(levels: readonly BorrowingLevel[]): number[] {
  const total = levels.reduce((a, l) => a + l.bounds.nominalCL, 0);
  const items = levels.map((l): AllocItem => {
    const b = l.bounds;
    const hw = l.stats.highWatermark;
    const lower = l.exempt ? Math.max(b.minCL, hw) : Math.max(b.minCL, Math.min(b.nominalCL, hw));
    const upper = l.exempt ? Infinity : Math.max(lower, b.maxCL);
    return { lower, upper, target: l.stats.smoothed > 0 ? l.stats.smoothed : 1e-6 * Math.max(b.nominalCL, 1) };
  });
  return allocate(items, total).map((x) => Math.round(x));
}
