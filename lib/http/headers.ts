// Every value of each request header, as Node's `headersDistinct` gives them
// on HTTP/1.1 (computed once by Node and kept). Node's HTTP/2 compatibility
// request has no headersDistinct, so it is built from rawHeaders (which it
// keeps, one entry per field) on each call: a caller reads it once per step,
// and a removal sticks because the remover edits rawHeaders too
// (gateway/pipeline/identityheaders.ts).
import type { IncomingMessage } from 'node:http';

export function distinctHeaders(req: IncomingMessage): Record<string, string[]> {
  const own = (req as { headersDistinct?: Record<string, string[]> }).headersDistinct;
  if (own !== undefined) return own;
  // No prototype: header names are the client's (a `__proto__` header is a header).
  const d = Object.create(null) as Record<string, string[]>;
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (k[0] === ':') continue;
    const list = d[k];
    if (list) list.push(raw[i + 1]!);
    else d[k] = [raw[i + 1]!];
  }
  return d;
}
