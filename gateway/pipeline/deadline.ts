// A request's deadline signal, made only when something listens: an
// AbortController and its AbortSignal (an EventTarget) cost 1–20 µs to make
// on this machine (node 20; more under load), a large share of a ~70 µs GET,
// and most requests finish without anyone waiting on their deadline (only a
// proxied request or one queued by priority and fairness does). Aborting
// before the signal was asked for is remembered: it is then made aborted.
export class Deadline {
  #controller: AbortController | undefined;
  #aborted = false;

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  abort(): void {
    this.#aborted = true;
    this.#controller?.abort();
  }
}
