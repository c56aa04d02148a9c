// Graceful shutdown: /readyz fails at once; requests are still served for
// --shutdown-delay-duration (so load balancers notice); then the listener
// closes, long-running requests end, in-flight requests drain, and the
// process exits 0.
import type { Http2SecureServer } from 'node:http2';
import type { Connections } from './connections.js';
import type { ShutdownCheck } from '../health/checks.js';

export interface ShutdownOptions {
  server: Http2SecureServer;
  connections: Connections;
  check: ShutdownCheck;
  delayMs: number;
  /** Ends watches and closes backends. */
  closeLongRunning(): void;
  closeBackends(): Promise<void>;
  log(msg: string): void;
  /** Longest wait for in-flight requests before connections are cut. */
  drainTimeoutMs?: number;
}

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
    const closed = new Promise<void>((resolve) => opts.server.close(() => resolve()));
    opts.closeLongRunning();
    // Keep-alive connections become idle as their last response ends; close them as they do.
    const sweep = setInterval(() => opts.connections.closeIdle(), 50);
    opts.connections.closeIdle();
    const timeout = setTimeout(() => opts.connections.closeAll(), opts.drainTimeoutMs ?? 60_000);
    await closed;
    clearInterval(sweep);
    clearTimeout(timeout);
    await opts.closeBackends();
    opts.log('shutdown complete');
  };
}
