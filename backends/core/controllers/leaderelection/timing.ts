// client-go's rule on the three durations (NewLeaderElector): the lease must
// outlast the renew deadline, and the renew deadline a jittered retry, so a
// leader that cannot renew steps down before anyone may take the lease.

/** client-go's JitterFactor: a candidate waits retryPeriod × (1 + random × 1.2) between attempts. */
export const JITTER_FACTOR = 1.2;

export function validTiming(leaseDurationMs: number, renewDeadlineMs: number, retryPeriodMs: number): boolean {
  return leaseDurationMs > renewDeadlineMs && renewDeadlineMs > JITTER_FACTOR * retryPeriodMs && retryPeriodMs > 0;
}
