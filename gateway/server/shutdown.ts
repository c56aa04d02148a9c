// Graceful shutdown as kube-apiserver's: /readyz fails at once; requests are
// still served for --shutdown-delay-duration (so load balancers notice); then
// new requests are answered 429 with Retry-After while in-flight ones finish.
// Without --shutdown-send-retry-after the listener closes then and idle
// connections are ended as they become idle; with it the listener stays open
// (late clients get the 429 and retry elsewhere) until the in-flight requests
// have drained, and only then closes, as kube's ShutdownSendRetryAfter mode.
// Long-running requests are ended once draining starts; the process exits 0.
import type { Connections } from './connections.js';
import type { ShutdownCheck } from '../health/checks.js';
import type { RequestWaitGroup } from '../pipeline/waitgroup.js';

export interface ShutdownOptions {
  connections: Connections;
  check: ShutdownCheck;
  delayMs: number;
  /** --shutdown-send-retry-after: keep listening until `inFlight` drains. */
  sendRetryAfter: boolean;
  /** The requests the chain counts (all but long-running ones). */
  inFlight: RequestWaitGroup;
  /** Ends watches and closes backends. */
  closeLongRunning(): void;
  closeBackends(): Promise<void>;
  log(msg: string): void;
  /** Longest wait for in-flight requests before connections are cut. */
  drainTimeoutMs?: number;
}

/** kube's HTTP server shutdown timeout once requests drained in ShutdownSendRetryAfter mode (a GOAWAY's answer has time to come). */
const AFTER_DRAIN_MS = 2000;

export function installShutdown(opts: ShutdownOptions): (signal: string) => Promise<void> {
  let started = false;
  return async (signal: string) => {
    if (started) return;
    started = true;
    opts.log(`received ${signal}: /readyz now fails; serving for ${opts.delayMs}ms more, then draining`);
    opts.check.begin();
    if (opts.delayMs > 0) await new Promise((r) => setTimeout(r, opts.delayMs));
    opts.check.drain();
    opts.log('draining: new requests are answered 429 with Retry-After, in-flight ones finish');
    opts.closeLongRunning();
    const drainTimeoutMs = opts.drainTimeoutMs ?? 60_000;
    let cut: NodeJS.Timeout | undefined;
    if (opts.sendRetryAfter) {
      const timedOut = await Promise.race([
        opts.inFlight.drained().then(() => false),
        new Promise<boolean>((r) => {
          cut = setTimeout(() => r(true), drainTimeoutMs);
        }),
      ]);
      clearTimeout(cut);
      opts.log(timedOut ? `in-flight requests did not drain in ${drainTimeoutMs}ms: closing the listener` : 'in-flight requests drained: closing the listener');
    }
    const closed = new Promise<void>((resolve) => opts.connections.stopListening(resolve));
    opts.connections.closeIdle();
    cut = setTimeout(() => opts.connections.closeAll(), opts.sendRetryAfter ? AFTER_DRAIN_MS : drainTimeoutMs);
    await closed;
    clearTimeout(cut);
    await opts.closeBackends();
    opts.log('shutdown complete');
  };
}
