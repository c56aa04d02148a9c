// Bounds concurrent non-long-running requests (--max-requests-inflight and
// --max-mutating-requests-inflight of kube-apiserver); excess gets 429.
// A limit of 0 is no limit, as in kube-apiserver.
import { tooManyRequests } from '../../lib/api/status.js';
import { isMutatingVerb } from '../../lib/api/verbs.js';

export class InflightLimiter {
  private readOnly = 0;
  private mutating = 0;
  private readonly maxReadOnly: number;
  private readonly maxMutating: number;
  constructor(maxReadOnly: number, maxMutating: number) {
    this.maxReadOnly = maxReadOnly === 0 ? Infinity : maxReadOnly;
    this.maxMutating = maxMutating === 0 ? Infinity : maxMutating;
  }

  /** Takes a slot or throws 429; returns the release function. */
  acquire(verb: string): () => void {
    if (isMutatingVerb(verb)) {
      if (this.mutating >= this.maxMutating) throw tooManyRequests('Too many requests, please try again later.', 1);
      this.mutating++;
      return () => {
        this.mutating--;
      };
    }
    if (this.readOnly >= this.maxReadOnly) throw tooManyRequests('Too many requests, please try again later.', 1);
    this.readOnly++;
    return () => {
      this.readOnly--;
    };
  }
}
