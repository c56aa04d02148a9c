// The chunks of a long-running HTTP/1.1 answer (a watch) written straight to
// its socket, each framed once however many answers carry it. Why: a watch
// event goes to every watcher's socket in the same turn, and
// ServerResponse.write costs each one a cork, four writes into the socket's
// buffer (length, CRLF, bytes, CRLF), a tick to uncork and a writev that
// gathers them again — about a third of a watcher event's CPU besides the
// TLS write itself in a profile of 1,000 watchers (bench/run.ts, WATCH ×1000).
// The frame written here is what Node would send; ServerResponse still owns
// the head and the end (`0\r\n\r\n`), which follow on the same socket in order.
// Saves 26% of the main thread's instructions per write watched by 50 clients, `frames` alone 13% (bench/cg-watch.mjs; docs/perf.md).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ChunkSink {
  /** Sends one chunk of the body (an empty one is skipped: it would end the body). */
  write(chunk: Buffer | string): void;
  /** Bytes accepted and not yet handed to the kernel. */
  buffered(): number;
}

const CRLF = Buffer.from('\r\n', 'latin1');
const frames = new WeakMap<Buffer, Buffer>();

/** `<hex length>\r\n<bytes>\r\n`: one chunk; kept per buffer, so a line shared by many answers is framed once. */
export function chunkFrame(bytes: Buffer): Buffer {
  let f = frames.get(bytes);
  if (f === undefined) {
    f = Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF]);
    frames.set(bytes, f);
  }
  return f;
}

/**
 * The body writer of an answer whose head is sent: straight to the socket when
 * it is HTTP/1.1, chunked, and nothing of it waits in the response itself
 * (its head went out; no earlier answer of a pipelined connection holds the
 * socket), else the response's own write (HTTP/2, a wrapped response).
 */
export function chunkSink(req: IncomingMessage, res: ServerResponse): ChunkSink {
  const socket = res.socket as Socket | null;
  const direct =
    socket !== null &&
    req.httpVersionMajor === 1 &&
    res.headersSent &&
    res.chunkedEncoding &&
    !res.writableEnded &&
    // The response's own buffer is empty: its head is on the socket, in order before what follows.
    res.writableLength === socket.writableLength;
  return direct ? new SocketSink(res, socket) : new ResponseSink(res);
}

// Classes, not objects of closures: an open watch holds its sink for its life, and two closures with
// their context and a held record were ~250 B of it (bench/watch-heap.ts).
class ResponseSink implements ChunkSink {
  constructor(private readonly res: ServerResponse) {}

  write(chunk: Buffer | string): void {
    if (chunk.length !== 0) this.res.write(chunk);
  }

  buffered(): number {
    return this.res.writableLength;
  }
}

// A socket's chunks of one event-loop turn leave together, when the turn ends
// (setImmediate, as lib/http/turnend.ts ends answers): the events of writes
// acknowledged in the same turn cost a watcher one TLS record and one system
// call instead of one each — the TLS writes were ~355 of ~550 busy samples of
// a 1,000-watcher fan-out (docs/decisions/2026-11-29-watch-encodings-shared.md).
// Whatever else the socket carries (the answer's end, the next answer) is
// queued behind in order and leaves with them.
class SocketSink implements ChunkSink {
  corked = false;

  constructor(
    private readonly res: ServerResponse,
    readonly socket: Socket,
  ) {}

  write(chunk: Buffer | string): void {
    const socket = this.socket;
    if (chunk.length === 0 || this.res.writableEnded || socket.destroyed) return;
    if (!this.corked) holdUntilTurnEnds(this);
    socket.write(chunkFrame(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk));
  }

  buffered(): number {
    return this.socket.writableLength;
  }
}

const heldThisTurn: SocketSink[] = [];

function holdUntilTurnEnds(held: SocketSink): void {
  held.socket.cork();
  held.corked = true;
  if (heldThisTurn.push(held) === 1) setImmediate(releaseHeld);
}

function releaseHeld(): void {
  const batch = heldThisTurn.splice(0, heldThisTurn.length);
  for (const held of batch) {
    held.corked = false;
    try {
      held.socket.uncork();
    } catch (err) {
      // One socket's failure must not leave the others held: that connection alone goes.
      held.socket.destroy(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
