// Closing a connection whose request body is still arriving (a 413) without
// losing the answer. Node closes a `Connection: close` response's socket with
// destroySoon — end, then destroy as soon as the answer is flushed — and a
// socket destroyed with unread bytes makes the kernel send a reset, which
// reaches the client while it is still writing: its write fails (EPIPE,
// ECONNRESET) before it has read the 413, and the answer is lost (seen in
// about a third of the tries against a separate process). As Go's server
// (closeWriteAndWait, rstAvoidanceDelay), the write side is shut after the
// answer and the socket lingers: what the client still sends is read and
// dropped up to a byte budget (then no longer read, so the client blocks on
// a full window instead of being reset), and the socket is destroyed when
// the client closes its side or the delay ends, whichever comes first.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface LingerOptions {
  /** How long the half-closed socket waits for the client to close before it is destroyed. */
  readonly ms: number;
  /** How much of the unread body is read and dropped meanwhile. */
  readonly maxBytes: number;
}

export const DEFAULT_LINGER: LingerOptions = Object.freeze({ ms: 2000, maxBytes: 1024 * 1024 });

/** Marks the response `Connection: close` and makes the close linger when the request body is not all read. */
export function closeAfterAnswer(req: IncomingMessage, res: ServerResponse, o: LingerOptions = DEFAULT_LINGER): void {
  res.setHeader('Connection', 'close');
  const socket = req.socket as Socket | null;
  if (req.complete || !socket || socket.destroyed) return;
  let dropped = 0;
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > o.maxBytes) req.pause();
  });
  req.on('error', () => undefined);
  req.resume();
  // Replaces Node's destroySoon for this one socket (server resOnFinish calls it for a closing response).
  Object.defineProperty(socket, 'destroySoon', {
    configurable: true,
    writable: true,
    value(this: Socket): void {
      if (this.writable) this.end();
      const timer = setTimeout(() => this.destroy(), o.ms);
      timer.unref();
      this.once('close', () => clearTimeout(timer));
      // The client closed its side: nothing more can arrive, so nothing is reset.
      this.once('end', () => this.destroy());
    },
  });
}
