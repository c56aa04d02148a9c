// A request's deadline signal, made only when something listens: an
// AbortController and its AbortSignal (an EventTarget) cost 1–20 µs to make
// on this machine (node 20; more under load), a large share of a ~70 µs GET,
// and most requests finish without anyone waiting on their deadline (only a
// proxied request or one queued by priority and fairness does). Aborting
// before the signal was asked for is remembered: it is then made aborted.
// Code of our own that waits on a deadline (the proxies, a priority-and-
// fairness queue; `ctx.cancel`) takes it as a Cancellation: a flag and plain
// callbacks, no EventTarget at all (making the signal, adding and removing its
// listener were ~6% of a proxied GET's gateway CPU in a profile). The signal
// stays for an API that takes an AbortSignal.

/** A deadline as a waiter of our own sees it. */
export interface Cancellation {
  readonly aborted: boolean;
  /** `fn` runs once, when the deadline passes (the caller checks `aborted` first). */
  onAbort(fn: () => void): void;
  offAbort(fn: () => void): void;
}

/** The deadline of a request that has none (long-running, or built outside the chain). */
export const NO_DEADLINE: Cancellation & { readonly signal: AbortSignal } = Object.freeze({
  aborted: false,
  signal: new AbortController().signal,
  onAbort() {},
  offAbort() {},
});

export class Deadline implements Cancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #listeners: (() => void)[] | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  onAbort(fn: () => void): void {
    (this.#listeners ??= []).push(fn);
  }

  offAbort(fn: () => void): void {
    const l = this.#listeners;
    const i = l ? l.indexOf(fn) : -1;
    if (i >= 0) l!.splice(i, 1);
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#controller?.abort();
    const l = this.#listeners;
    this.#listeners = undefined;
    if (l) for (const fn of l) fn();
  }
}
