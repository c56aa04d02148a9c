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
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendBody, wantsGzip } from './respond.js';
import { writeHeadWith } from './carried.js';

/** Bodies at least this long are streamed. */
export const STREAM_MIN = 512 * 1024;
/** Bytes per write of a streamed body. */
export const CHUNK = 256 * 1024;

/** One CHUNK-sized run of parts from index `from`, as one Buffer, and where the next starts. */
function nextChunk(parts: readonly Buffer[], from: number): { buf: Buffer; next: number } {
  let i = from;
  let n = 0;
  while (i < parts.length && (i === from || n + parts[i]!.length <= CHUNK)) n += parts[i++]!.length;
  return { buf: i - from === 1 ? parts[from]! : Buffer.concat(parts.slice(from, i), n), next: i };
}

/**
 * A 200-style answer whose body is `parts` joined (`length` bytes in all).
 * gzip, HEAD and small bodies take sendBody's path with the joined bytes.
 */
export function sendParts(req: IncomingMessage, res: ServerResponse, code: number, contentType: string, parts: readonly Buffer[], length: number): void {
  if (length < STREAM_MIN || req.method === 'HEAD' || (req.method === 'GET' && wantsGzip(req))) {
    sendBody(req, res, code, contentType, Buffer.concat(parts, length));
    return;
  }
  if (res.headersSent || res.destroyed) return;
  writeHeadWith(res, code, { 'Content-Type': contentType, 'Cache-Control': 'no-cache, private', 'Content-Length': length });
  let at = 0;
  const more = (): void => {
    while (!res.destroyed) {
      const { buf, next } = nextChunk(parts, at);
      at = next;
      if (at >= parts.length) { res.end(buf); return; }
      if (!res.write(buf)) { res.once('drain', more); return; }
    }
  };
  more();
}
