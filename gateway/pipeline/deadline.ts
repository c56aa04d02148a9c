// The deadline step (`armDeadline`), and the request's deadline it arms.
// The deadline's signal is made only when something listens: an
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

import { badRequest, timeout } from '../../lib/api/status.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { ConfigError } from '../../lib/config/error.js';
import { isLongRunning, type RequestContext } from './context.js';
import { answerError } from './erroranswer.js';

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

/**
 * The armed deadlines of one length (the request timeout they were armed with), in the order they pass, and the
 * one Node timer that fires at the first of them. Why not a Node timer per request: setTimeout and clearTimeout
 * made a Timeout (an async id, the loop's clock read), linked it into the list of its duration (made, put in the
 * timers' priority queue and dropped again whenever the requests in flight came and went) and toggled the loop's
 * reference, ~2.5k instructions a proxied GET under callgrind (docs/decisions/2026-11-30-proxied-get-chain.md);
 * here a deadline is linked in and out of a list. The timer is not moved when its first deadline is disarmed: it
 * fires then, finds nothing due and is set for the new first one (with requests in flight, about once a timeout).
 * It is unref'd: what a deadline bounds is a request in flight, whose socket keeps the process up.
 */
class PassList {
  head: Deadline | undefined = undefined;
  tail: Deadline | undefined = undefined;
  timer: NodeJS.Timeout | undefined = undefined;
  /** When `timer` fires (performance.now() ms); Infinity when it is not set. */
  timerDue = Infinity;
  constructor(readonly length: number) {}
}

/** The lists by length: one per request timeout in use (`--request-timeout`, or a shorter `timeout` a client sent). */
const passLists = new Map<number, PassList>();
let lastList: PassList | undefined;

/** A deadline passes in the millisecond it is due, as a Node timer of its length would (which truncates to whole ms). */
const EARLY_MS = 1;

function listOf(length: number): PassList {
  if (lastList !== undefined && lastList.length === length) return lastList;
  let l = passLists.get(length);
  if (l === undefined) {
    l = new PassList(length);
    passLists.set(length, l);
  }
  lastList = l;
  return l;
}

function schedule(l: PassList, due: number, now: number): void {
  if (l.timer !== undefined) {
    if (l.timerDue <= due) return;
    clearTimeout(l.timer);
  }
  l.timerDue = due;
  l.timer = setTimeout(passDue, Math.max(1, due - now), l);
  l.timer.unref();
}

function passDue(l: PassList): void {
  l.timer = undefined;
  l.timerDue = Infinity;
  const now = performance.now();
  try {
    for (let d = l.head; d !== undefined && d.due <= now + EARLY_MS; d = l.head) d.pass();
  } finally {
    if (l.head !== undefined) schedule(l, l.head.due, performance.now());
    else if (l.timer === undefined) {
      passLists.delete(l.length);
      if (lastList === l) lastList = undefined;
    }
  }
}

export class Deadline implements Cancellation {
  #controller: AbortController | undefined;
  #aborted = false;
  #listeners: (() => void)[] | undefined;
  #armed = false;
  #done = false;
  /** While armed and not passed or disarmed: its list, its place in it, when it passes and what runs then. */
  #list: PassList | undefined = undefined;
  #prev: Deadline | undefined = undefined;
  #next: Deadline | undefined = undefined;
  #onPass: (() => void) | undefined = undefined;
  /** performance.now() ms when it passes. */
  due = 0;

  /**
   * `onPass` runs at `due` (performance.now() ms) unless the request is done first (`disarm`); it aborts the deadline
   * itself, when it chooses. `length`: the request's timeout, which names its list (the deadlines of one length
   * arrive nearly in the order they pass).
   */
  armAt(due: number, length: number, onPass: () => void): void {
    this.#armed = true;
    if (this.#done) return;
    const l = listOf(length);
    this.due = due;
    this.#onPass = onPass;
    this.#list = l;
    // From the tail: a deadline armed later mostly passes later.
    let after = l.tail;
    while (after !== undefined && after.due > due) after = after.#prev;
    this.#prev = after;
    const next = after === undefined ? l.head : after.#next;
    this.#next = next;
    if (after === undefined) l.head = this;
    else after.#next = this;
    if (next === undefined) l.tail = this;
    else next.#prev = this;
    if (l.timer === undefined || due < l.timerDue) schedule(l, due, performance.now());
  }

  /** Whether arm() was called, or the request is done (`disarm`): the chain arms it once at most. */
  get armed(): boolean {
    return this.#armed || this.#done;
  }

  /** The request is done: its deadline will not pass. */
  disarm(): void {
    this.#done = true;
    this.#unlink();
  }

  /** The deadline is due (its list's timer): out of the list, then its `onPass`. */
  pass(): void {
    const fn = this.#onPass;
    this.#unlink();
    fn?.();
  }

  #unlink(): void {
    const l = this.#list;
    if (l === undefined) return;
    const prev = this.#prev;
    const next = this.#next;
    if (prev === undefined) l.head = next;
    else prev.#next = next;
    if (next === undefined) l.tail = prev;
    else next.#prev = prev;
    this.#list = undefined;
    this.#prev = undefined;
    this.#next = undefined;
    this.#onPass = undefined;
  }

  get aborted(): boolean {
    return this.#aborted;
  }

  onAbort(fn: () => void): void {
    const l = this.#listeners;
    // [fn], not [] then push: a push to an empty array gives it 16 slots (~0.15 KB a proxied GET for its one listener).
    if (l === undefined) this.#listeners = [fn];
    else l.push(fn);
  }

  offAbort(fn: () => void): void {
    const l = this.#listeners;
    const i = l ? l.indexOf(fn) : -1;
    if (i < 0) return;
    // Moved down in place: a splice makes an array of what it removed.
    for (let j = i + 1; j < l!.length; j++) l![j - 1] = l![j]!;
    l!.length--;
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

/**
 * The deadline of a request that is not long-running: --request-timeout, or
 * the `timeout` query parameter (a Go duration) when it is shorter; zero or
 * negative means none given, as in kube-apiserver's WithRequestDeadline.
 */
export function requestDeadlineMs(query: URLSearchParams, maxMs: number): number {
  const raw = query.get('timeout');
  if (raw === null || raw === '') return maxMs;
  let ms: number;
  try {
    ms = parseDuration(raw);
  } catch (err) {
    if (err instanceof ConfigError) throw badRequest(`invalid timeout specified in the request URL: ${err.message}`);
    throw err;
  }
  return ms > 0 && ms < maxMs ? ms : maxMs;
}

/**
 * The deadline step (kube's WithRequestDeadline): a request that is not
 * long-running is answered 504 when its deadline passes first; what waits on
 * it (a proxy, a priority-and-fairness queue) is told through `ctx.cancel`.
 * Here the deadline is only read (a bad `timeout` is a 400); its timer is
 * set by `startDeadline` once the request has to wait.
 */
export function armDeadline(ctx: RequestContext, maxMs: number): void {
  if (isLongRunning(ctx)) return;
  ctx.timeoutMs = requestDeadlineMs(ctx.query, maxMs);
}

/**
 * The request waits on something (a step's promise): its deadline's timer
 * starts, for what is left of it since the request came in. A request answered
 * without waiting never sets one (a GET from memory: no timer made, linked
 * into the timer list and cleared per request; docs/decisions/2026-11-29-get-cpu-cuts.md).
 */
export function startDeadline(ctx: RequestContext, cbor: boolean): void {
  const ms = ctx.timeoutMs;
  if (ms === undefined || ctx.cancel.armed) return;
  ctx.cancel.armAt(ctx.receivedAt + ms, ms, () => {
    // A request still queued by priority and fairness is answered 429 by its queue (on this abort).
    const queued = ctx.queued === true;
    ctx.cancel.abort();
    if (ctx.res.headersSent || queued) return;
    ctx.terminated = true;
    const waiting = ctx.waitingOn ? `: no answer from ${ctx.waitingOn} within ${formatDuration(ms)}` : '';
    answerError(ctx, timeout(`Timeout: request did not complete within requested timeout - context deadline exceeded${waiting}`), cbor);
  });
}
