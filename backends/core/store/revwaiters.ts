// Callers waiting for a revision to be reached: the watch cache's own
// revision (StoreState) or, on a Redis Cluster, the highest revision the
// process has seen in any type (RedisStore). One list, woken in one pass.
import type { StoreError } from './types.js';

interface Waiter {
  rev: number;
  resolve(): void;
  reject(err: StoreError): void;
  timer: NodeJS.Timeout;
}

export class RevisionWaiters {
  private waiters: Waiter[] = [];

  /** Resolves once reached(r) is called with r ≥ rev; rejects with tooLate() after timeoutMs. */
  wait(rev: number, timeoutMs: number, tooLate: () => StoreError): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        rev,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(tooLate());
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Wakes every waiter for a revision ≤ rev. */
  reached(rev: number): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.rev <= rev) {
        clearTimeout(w.timer);
        w.resolve();
      } else still.push(w);
    }
    this.waiters = still;
  }

  /** Ends every pending wait with err (close). */
  failAll(err: StoreError): void {
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.waiters = [];
  }
}
