// HTTP/2 connections that must end after the current answer, as
// kube-apiserver ends them: one whose request failed authentication or was
// anonymous (CVE-2023-44487: a client that cannot authenticate must not keep
// a connection to open streams on), and, with --goaway-chance, a random few,
// so that long-lived clients spread over replicas behind a load balancer.
// GOAWAY is graceful: streams already open finish, new ones go to a new
// connection. HTTP/1.1 requests are left alone.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';

/** After this answer is written, the request's HTTP/2 session takes no new streams. */
export function goAwayAfter(req: IncomingMessage, res: ServerResponse): void {
  if (req.httpVersionMajor !== 2) return;
  const session = (req as unknown as Http2ServerRequest).stream?.session;
  if (!session) return;
  res.once('finish', () => {
    if (!session.closed && !session.destroyed) session.close();
  });
}

/** --goaway-chance: 0 (off) to 0.02, kube's bounds. */
export function maybeGoAway(chance: number, req: IncomingMessage, res: ServerResponse): void {
  if (chance > 0 && req.httpVersionMajor === 2 && Math.random() < chance) goAwayAfter(req, res);
}
