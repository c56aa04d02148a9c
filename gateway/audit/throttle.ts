// --audit-*-batch-throttle-qps/-burst: a token bucket (client-go's
// flowcontrol.NewTokenBucketRateLimiter): it starts full with `burst` tokens
// and gains `qps` a second; a batch goes out only with a token.
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly qps: number,
    private readonly burst: number,
    private readonly clock: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.last = clock();
  }

  /** Takes a token and answers 0, or answers how many ms until one is there (taking nothing). */
  take(): number {
    const now = this.clock();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.qps) * 1000);
  }
}
