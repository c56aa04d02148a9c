// Identity headers (X-Remote-User and friends, plus the configured
// --requestheader-* names and prefixes) are removed from every request right
// after authentication: a trusted proxy's have been read by then, and an
// untrusted client's must never reach impersonation, audit or a backend.
import type { IncomingMessage } from 'node:http';

export interface IdentityHeaders {
  /** Lowercase header names. */
  readonly names: readonly string[];
  /** Lowercase header-name prefixes. */
  readonly prefixes: readonly string[];
}

export function stripIdentityHeaders(req: IncomingMessage, h: IdentityHeaders): void {
  const headers = req.headers;
  let removed = false;
  for (const n of h.names) {
    if (headers[n] !== undefined) { delete headers[n]; removed = true; }
  }
  for (const k of Object.keys(headers)) {
    if (h.prefixes.some((p) => k.startsWith(p))) { delete headers[k]; removed = true; }
  }
  if (!removed) return;
  // headersDistinct is computed once and cached separately from headers.
  const distinct = req.headersDistinct;
  for (const k of Object.keys(distinct)) {
    if (h.names.includes(k) || h.prefixes.some((p) => k.startsWith(p))) delete distinct[k];
  }
  // Keep the raw list consistent with the parsed headers (the proxy to a backend may read it).
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (h.names.includes(k) || h.prefixes.some((p) => k.startsWith(p))) continue;
    kept.push(raw[i]!, raw[i + 1]!);
  }
  raw.splice(0, raw.length, ...kept);
}
