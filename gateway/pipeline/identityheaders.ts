// Identity headers (X-Remote-User and friends, plus the configured
// --requestheader-* names and prefixes) are removed from every request right
// after authentication: a trusted proxy's have been read by then, and an
// untrusted client's must never reach impersonation, audit or a backend.
// The list is built once per start (authn/requestheader.ts
// identityHeaderNames) and is the same one every proxy strips again from
// what it forwards (aggregation/identity.ts notForwarded).
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

/**
 * Whether a header name is an identity header. `_` counts as `-`: CGI, WSGI,
 * Rack and nginx-fronted upstreams read `X_Remote_User` as `X-Remote-User`
 * (both become HTTP_X_REMOTE_USER), so a client's underscore spelling is a
 * copy like any other.
 */
export function isIdentity(k: string, h: IdentityHeaders): boolean {
  const n = k.includes('_') ? k.replace(/_/g, '-') : k;
  return h.names.includes(n) || hasPrefix(n, h.prefixes);
}

/** Runs on every request: no allocation unless a header is actually removed. */
export function stripIdentityHeaders(req: IncomingMessage, h: IdentityHeaders): void {
  const headers = req.headers;
  let removed = false;
  for (let i = 0; i < h.names.length; i++) {
    const n = h.names[i]!;
    if (headers[n] !== undefined) {
      delete headers[n];
      removed = true;
    }
  }
  for (const k in headers) {
    if (hasPrefix(k, h.prefixes) || (k.includes('_') && isIdentity(k, h))) {
      delete headers[k];
      removed = true;
    }
  }
  if (!removed) return;
  // headersDistinct is computed once and cached separately from headers.
  const distinct = distinctHeaders(req);
  for (const k of Object.keys(distinct)) {
    if (isIdentity(k, h)) delete distinct[k];
  }
  // Keep the raw list consistent with the parsed headers (the proxy to a backend may read it).
  const raw = req.rawHeaders;
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const k = raw[i]!.toLowerCase();
    if (isIdentity(k, h)) continue;
    kept.push(raw[i]!, raw[i + 1]!);
  }
  raw.splice(0, raw.length, ...kept);
}
