// The connection a request came on, as one stable object: on HTTP/1.1 its
// socket, on HTTP/2 its session. Node's HTTP/2 compatibility request hands out
// a new Proxy of the socket on every `req.socket` read, so a per-connection
// cache keyed on it never hits: client certificates were verified again on
// every HTTP/2 request (424 µs of server CPU per GET instead of ~55 µs).
import type { IncomingMessage } from 'node:http';

export function connectionOf(req: IncomingMessage): object {
  const session = (req as unknown as { stream?: { session?: object } }).stream?.session;
  return session ?? req.socket;
}
