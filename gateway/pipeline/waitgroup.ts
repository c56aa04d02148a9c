// The requests in flight that shutdown waits for (kube's WithWaitGroup): every
// request but the long-running ones, which shutdown ends itself. With
// --shutdown-send-retry-after the listener stays open until this drains.

export class RequestWaitGroup {
  #count = 0;
  #waiters: Array<() => void> = [];

  add(): void {
    this.#count++;
  }

  done(): void {
    if (--this.#count > 0) return;
    this.#count = 0;
    // No new array each time the count reaches 0 (every request when they come one at a time) while nobody waits.
    if (this.#waiters.length === 0) return;
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  get count(): number {
    return this.#count;
  }

  /** Resolves once no counted request is in flight. */
  drained(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiters.push(resolve));
  }
}
