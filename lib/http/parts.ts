// Sends a body made of byte pieces (a list page: each item's remembered
// encoding). Up to STREAM_MIN it goes out as one Buffer; above, in
// CHUNK-sized writes that wait for the socket to drain, so a large list never
// holds a second whole copy of itself per client (plaintext and TLS records)
// and a slow reader does not make the server buffer it all. Not a CPU saving:
// through node:https on loopback (bench/list-render.ts, a shared 2-core
// machine, ±15% between runs) a ~0.3 MiB page costs about the same as one
// Buffer, in 64 KiB writes or one write per item (0.88–1.5 ms), and a ~3 MiB
// list the same as one Buffer or in 256 KiB writes (12.8–14.5 ms); smaller
// writes only add per-write work.
// Pages from SCRATCH_MIN up to STREAM_MIN sent over HTTP/1.1 are joined into
// buffers kept for reuse (`pagePool`) rather than a fresh Buffer each: a fresh
// ~0.3 MiB Buffer per page is memory outside V8's heap, and at ~2,000 pages/s
// its growth made V8 collect for "external memory pressure" every few
// milliseconds and run a full mark-compact every 80–100 ms (7–13 ms pauses,
// `--trace-gc`). With the pool (bench/store-paths.ts, LIST limit=500, 50
// connections, the builds alternated A B A B with BENCH_DIST): 244 → 2 such
// collections in a run, server CPU per page 602–639 → 359–430 µs, page p99
// 95–98 → 37–62 ms. Streamed bodies' chunks come from the same pool over
// HTTP/1.1, each given back by its write's callback (the socket holds the
// bytes until then): a 2.6 MiB list through node:https in one process
// (bench/list-render.ts) 8,278–8,394 → 4,806–6,932 µs per request.
import type { ServerResponse } from 'node:http';
import { sendBody, wantsGzip } from './respond.js';
import { writeHeadWith } from './carried.js';
import type { Exchange } from './exchange.js';

/** Bodies at least this long are streamed. */
export const STREAM_MIN = 512 * 1024;
/** Bytes per write of a streamed body. */
export const CHUNK = 256 * 1024;

/** Pages at least this long are joined into a pooled buffer (smaller ones cost little to allocate). */
export const SCRATCH_MIN = 32 * 1024;
/** Buffers kept while pages are being sent (each STREAM_MIN bytes: 32 MiB at most)… */
const POOL_MAX = 64;
/** …and none once no page has been sent for this long. */
const POOL_IDLE_MS = 10_000;

/** Buffers for joining pages, each taken by one answer and given back when that answer has closed. */
class PagePool {
  private readonly free: Buffer[] = [];
  private used = false;
  private timer: NodeJS.Timeout | undefined;
  /** Buffers made and buffers reused (tests). */
  readonly stats = { made: 0, reused: 0 };

  take(): Buffer {
    this.used = true;
    this.timer ??= setInterval(this.sweep, POOL_IDLE_MS).unref();
    const b = this.free.pop();
    if (b) {
      this.stats.reused++;
      return b;
    }
    this.stats.made++;
    return Buffer.allocUnsafeSlow(STREAM_MIN);
  }

  give(b: Buffer): void {
    if (this.free.length < POOL_MAX) this.free.push(b);
  }

  private readonly sweep = (): void => {
    if (this.used) {
      this.used = false;
      return;
    }
    this.free.length = 0;
    clearInterval(this.timer);
    this.timer = undefined;
  };
}

export const pagePool = new PagePool();

/**
 * `parts` joined into a pooled buffer that `res` holds until it closes: by
 * then its bytes were handed to the kernel (TLS encrypted them when written),
 * or the connection was destroyed, and the audit, which reads an answer at
 * 'finish', has copied what it keeps.
 */
function joinedInPool(res: ServerResponse, parts: readonly Uint8Array[], length: number): Buffer {
  const buf = pooledJoin(parts, 0, parts.length);
  res.once('close', () => pagePool.give(buf));
  return buf.subarray(0, length);
}

/** parts[from, to) copied to the start of a buffer taken from the pool. */
function pooledJoin(parts: readonly Uint8Array[], from: number, to: number): Buffer {
  const buf = pagePool.take();
  for (let k = from, at = 0; k < to; k++) {
    buf.set(parts[k]!, at);
    at += parts[k]!.length;
  }
  return buf;
}

/**
 * One CHUNK-sized run of parts from index `from`, as one buffer, and where the
 * next starts; with `pooled`, joined into a pooled buffer (`pool`) that the
 * caller gives back once the socket took it.
 */
function nextChunk(parts: readonly Uint8Array[], from: number, pooled: boolean): { buf: Uint8Array; next: number; pool?: Buffer } {
  let i = from;
  let n = 0;
  while (i < parts.length && (i === from || n + parts[i]!.length <= CHUNK)) n += parts[i++]!.length;
  if (i - from === 1) return { buf: parts[from]!, next: i };
  if (!pooled) return { buf: Buffer.concat(parts.slice(from, i), n), next: i };
  const pool = pooledJoin(parts, from, i);
  return { buf: pool.subarray(0, n), next: i, pool };
}

/**
 * A 200-style answer whose body is `parts` joined (`length` bytes in all).
 * gzip, HEAD and small bodies take sendBody's path with the joined bytes.
 */
export function sendParts(x: Exchange, code: number, contentType: string, parts: readonly Uint8Array[], length: number): void {
  const { req, res } = x;
  if (length < STREAM_MIN || req.method === 'HEAD' || (req.method === 'GET' && wantsGzip(x))) {
    // HTTP/2 (flow control) and gzip (the thread pool) read the bytes on their own schedules: they get their own copy.
    const pooled = length >= SCRATCH_MIN && length < STREAM_MIN && req.method === 'GET' && req.httpVersionMajor === 1 && !wantsGzip(x);
    sendBody(x, code, contentType, pooled ? joinedInPool(res, parts, length) : Buffer.concat(parts, length));
    return;
  }
  if (res.headersSent || res.destroyed) return;
  writeHeadWith(x, code, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Content-Length': length });
  let at = 0;
  // HTTP/1.1: a chunk's pooled buffer goes back when the socket has written it (the write's callback) or the answer closed.
  const pooled = req.httpVersionMajor === 1;
  const more = (): void => {
    while (!res.destroyed) {
      const { buf, next, pool } = nextChunk(parts, at, pooled);
      at = next;
      if (at >= parts.length) {
        if (pool) res.once('close', () => pagePool.give(pool));
        res.end(buf);
        return;
      }
      const room = pool ? res.write(buf, () => pagePool.give(pool)) : res.write(buf);
      if (!room) {
        res.once('drain', more);
        return;
      }
    }
  };
  more();
}
