// Every value of each request header, as Node's `headersDistinct` gives them
// on HTTP/1.1. Node's HTTP/2 compatibility request has no headersDistinct,
// so it is built once from rawHeaders (which it does keep, one entry per
// field) and remembered, so that a later removal (identity headers) sticks.
import type { IncomingMessage } from 'node:http';

const built = new WeakMap<IncomingMessage, Record<string, string[]>>();

export function distinctHeaders(req: IncomingMessage): Record<string, string[]> {
  const own = (req as { headersDistinct?: Record<string, string[]> }).headersDistinct;
  if (own !== undefined) return own;
  let d = built.get(req);
  if (d) return d;
  // No prototype: header names are the client's (a `__proto__` header is a header).
  d = Object.create(null) as Record<string, string[]>;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (k[0] === ':') continue;
    const list = d[k];
    if (list) list.push(raw[i + 1]!);
    else d[k] = [raw[i + 1]!];
  }
  built.set(req, d);
  return d;
}
