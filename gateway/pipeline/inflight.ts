// Bounds concurrent non-long-running requests (--max-requests-inflight and
// --max-mutating-requests-inflight of kube-apiserver); excess gets 429.
// A limit of 0 is no limit, as in kube-apiserver.
import { tooManyRequests } from '../../lib/api/status.js';
import { isMutatingVerb } from '../../lib/api/verbs.js';
import { inflight } from '../metrics/requests.js';
import type { Seat } from './seat.js';

export class InflightLimiter {
  private readOnly = 0;
  private mutating = 0;
  private readonly maxReadOnly: number;
  private readonly maxMutating: number;
  constructor(maxReadOnly: number, maxMutating: number) {
    this.maxReadOnly = maxReadOnly === 0 ? Infinity : maxReadOnly;
    this.maxMutating = maxMutating === 0 ? Infinity : maxMutating;
  }

  /** Takes a slot (counted in apiserver_current_inflight_requests) or throws 429. */
  acquire(verb: string): Seat {
    const mutating = isMutatingVerb(verb);
    if (mutating ? this.mutating >= this.maxMutating : this.readOnly >= this.maxReadOnly)
      throw tooManyRequests('Too many requests, please try again later.', 1);
    if (mutating) {
      this.mutating++;
      inflight.mutating++;
    } else {
      this.readOnly++;
      inflight.readOnly++;
    }
    return new InflightSeat(this, mutating);
  }

  /** @internal A seat of this limiter goes back. */
  free(mutating: boolean): void {
    if (mutating) {
      this.mutating--;
      inflight.mutating--;
    } else {
      this.readOnly--;
      inflight.readOnly--;
    }
  }
}

class InflightSeat implements Seat {
  #held = true;
  constructor(
    private readonly limiter: InflightLimiter,
    private readonly mutating: boolean,
  ) {}

  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.limiter.free(this.mutating);
  }
}
