// The front door of every Gatehouse process that serves — the gateway
// (`gatehouse serve`), the sidecar (`--upstream`) and the backend processes
// (`gatehouse core-backend`, `gatehouse sample-backend`): one HTTPS server
// (serving.ts) and one shutdown path (shutdown.ts). The caller builds its
// chain with `draining: () => shutdownCheck.draining` and the same `inFlight`
// wait group, so on a signal every kind of process does the same: /readyz
// fails (where it serves one), requests are served for
// --shutdown-delay-duration, then new ones get 429 with Retry-After
// (HTTP/1.1 connections closed, HTTP/2 ones sent GOAWAY) while those in
// flight finish, for at most 60 s (the listener open meanwhile with
// --shutdown-send-retry-after).
import type { Http2SecureServer } from 'node:http2';
import type { ShutdownCheck } from '../health/checks.js';
import { serveHttps, type ServeHttpsOptions } from './serving.js';
import { installShutdown } from './shutdown.js';
import type { RequestWaitGroup } from '../pipeline/waitgroup.js';

export interface FrontDoorOptions extends ServeHttpsOptions {
  /** Begun on the signal (/readyz fails), drained after the delay; the chain reads its `draining`. */
  readonly shutdownCheck: ShutdownCheck;
  /** --shutdown-delay-duration. */
  readonly shutdownDelayMs: number;
  /** --shutdown-send-retry-after. */
  readonly shutdownSendRetryAfter: boolean;
  /** The chain's count of requests in flight. */
  readonly inFlight: RequestWaitGroup;
  /** Ends what never finishes on its own (watches) once draining starts. */
  readonly closeLongRunning?: () => void;
  /** Closes what the process holds (backends, clients, audit, tracing) once the server has closed. */
  readonly close: () => Promise<void>;
  /** Longest wait for in-flight requests before connections are cut (60 s). */
  readonly drainTimeoutMs?: number;
}

export interface FrontDoor {
  readonly server: Http2SecureServer;
  readonly url: string;
  /** The whole shutdown; once per process, later calls return at once. */
  shutdown(signal: string): Promise<void>;
}

export async function startFrontDoor(o: FrontDoorOptions): Promise<FrontDoor> {
  const { server, connections, url } = await serveHttps(o);
  const shutdown = installShutdown({
    connections,
    sendRetryAfter: o.shutdownSendRetryAfter,
    inFlight: o.inFlight,
    check: o.shutdownCheck,
    delayMs: o.shutdownDelayMs,
    log: o.log,
    closeLongRunning: o.closeLongRunning ?? (() => undefined),
    closeBackends: o.close,
    ...(o.drainTimeoutMs !== undefined ? { drainTimeoutMs: o.drainTimeoutMs } : {}),
  });
  return { server, url, shutdown };
}
