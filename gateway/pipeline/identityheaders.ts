// Identity headers (X-Remote-User and friends, plus the configured
// --requestheader-* names and prefixes) are removed from every request right
// after authentication: a trusted proxy's have been read by then, and an
// untrusted client's must never reach impersonation, audit or a backend.
// The list is built once per start (authn/requestheader.ts
// identityHeaderNames) and is the same one every proxy strips again from
// what it forwards (aggregation/identity.ts stripForwarded).
import type { IncomingMessage } from 'node:http';
import { distinctHeaders } from '../../lib/http/headers.js';

export interface IdentityHeaders {
  /** Lowercase header names. */
  readonly names: readonly string[];
  /** Lowercase header-name prefixes. */
  readonly prefixes: readonly string[];
}

function hasPrefix(k: string, prefixes: readonly string[]): boolean {
  for (let i = 0; i < prefixes.length; i++) if (k.startsWith(prefixes[i]!)) return true;
  return false;
}

/** Runs on every request: no allocation unless a header is actually removed. */
export function stripIdentityHeaders(req: IncomingMessage, h: IdentityHeaders): void {
  const headers = req.headers;
  let removed = false;
  for (let i = 0; i < h.names.length; i++) {
    const n = h.names[i]!;
    if (headers[n] !== undefined) { delete headers[n]; removed = true; }
  }
  for (const k in headers) {
    if (hasPrefix(k, h.prefixes)) { delete headers[k]; removed = true; }
  }
  if (!removed) return;
  // headersDistinct is computed once and cached separately from headers.
  const distinct = distinctHeaders(req);
  for (const k of Object.keys(distinct)) {
    if (h.names.includes(k) || hasPrefix(k, h.prefixes)) delete distinct[k];
  }
  // Keep the raw list consistent with the parsed headers (the proxy to a backend may read it).
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (h.names.includes(k) || hasPrefix(k, h.prefixes)) continue;
    kept.push(raw[i]!, raw[i + 1]!);
  }
  raw.splice(0, raw.length, ...kept);
}
