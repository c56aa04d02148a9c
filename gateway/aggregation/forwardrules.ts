// The rules every forwarded request follows, whichever path carries it (an
// APIService, the remote core backend, the sidecar's upstream, an upgrade):
// which headers belong to one connection and never cross, which answers send
// the client elsewhere, and how a forwarded request is named on its trace
// span. One place, so the forwarders cannot drift apart.
import { badGateway, type StatusError } from '../../lib/api/status.js';

/**
 * Whether a header belongs to one connection and is never forwarded: Connection, Keep-Alive, Proxy-Connection,
 * Proxy-Authenticate, Proxy-Authorization, TE, Trailer, Transfer-Encoding, Upgrade. The one table both checks
 * below read: by length, then by content, `fold` (lower-casing or not) applied only at the lengths a hop-by-hop
 * name has. The answer's names are fresh strings from undici's Buffers, which a Set lookup hashes first
 * (bench/micro.ts hopbyhop: docs/decisions/2026-11-30-proxied-get-cost.md).
 */
function hopByHop(name: string, fold: (name: string) => string): boolean {
  switch (name.length) {
    case 2:
      return fold(name) === 'te';
    case 7: {
      const n = fold(name);
      return n === 'trailer' || n === 'upgrade';
    }
    case 10: {
      const n = fold(name);
      return n === 'connection' || n === 'keep-alive';
    }
    case 16:
      return fold(name) === 'proxy-connection';
    case 17:
      return fold(name) === 'transfer-encoding';
    case 18:
      return fold(name) === 'proxy-authenticate';
    case 19:
      return fold(name) === 'proxy-authorization';
    default:
      return false;
  }
}

const asIs = (name: string): string => name;
const lowerCased = (name: string): string => name.toLowerCase();

/** A header (lowercase name) that belongs to one connection and is never forwarded. */
export function isHopByHop(lowercaseName: string): boolean {
  return hopByHop(lowercaseName, asIs);
}

/**
 * `isHopByHop` of a name in any case (a backend's answer, as sent): lower-cased only at the lengths a hop-by-hop
 * name has, so the common answer's names (Content-Type, Date, Audit-Id, …) make no lower-case copy (each was a
 * fresh string, ~7 of ~9 names a proxied GET; docs/decisions/2026-11-30-proxied-get-bytes.md).
 */
export function isHopByHopAnyCase(name: string): boolean {
  return hopByHop(name, lowerCased);
}

/** 304 answers a conditional request; every other 3xx sends the client elsewhere. */
export function isRedirect(code: number | undefined): boolean {
  return code !== undefined && code >= 300 && code < 400 && code !== 304;
}

/**
 * kube-aggregator's words (handler_proxy with RejectForwardingRedirects): a
 * relayed or followed redirect would send the client's next request,
 * credentials and all, wherever the backend chose (CVE-2022-3172).
 */
export function redirectRefused(): StatusError {
  return badGateway('the backend attempted to redirect this request, which is not permitted');
}

/** Whether `name` (lowercase) is one of the names a flat name/value list sets. */
export function setsName(set: readonly string[], name: string): boolean {
  for (let i = 0; i < set.length; i += 2) if (set[i]!.length === name.length && set[i]!.toLowerCase() === name) return true;
  return false;
}

/** The request path on the backend: an upstream URL's path prefixes the client's. */
export function backendPath(prefix: string | undefined, url: string | undefined): string {
  return prefix ? `${prefix.replace(/\/$/, '')}${url ?? '/'}` : (url ?? '/');
}

/** `scheme://host:port/path` without the query, as the client span's url.full. */
export function targetUrl(protocol: string, host: string, port: number | string | null | undefined, path: string): string {
  return `${protocol}//${host.includes(':') ? `[${host}]` : host}${port ? `:${port}` : ''}${path.split('?', 1)[0]}`;
}

export function targetAttributes(host: string, port: number | string | null | undefined, purpose: string | undefined): Record<string, string | number> {
  return { 'server.address': host, ...(port ? { 'server.port': Number(port) } : {}), ...(purpose ? { 'gatehouse.backend': purpose } : {}) };
}
