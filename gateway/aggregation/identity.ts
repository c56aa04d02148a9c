// The identity a proxied request carries to an aggregated backend: the
// effective user (after impersonation) in X-Remote-User / -Uid / -Group /
// -Extra-<key>, as kube-aggregator sets them. Whatever the client sent under
// those names (or the configured request-header names), its credentials and
// impersonation headers are removed first, so only the gateway's word arrives.
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';

export interface StrippedHeaders {
  /** Lowercase names. */
  readonly names: readonly string[];
  /** Lowercase prefixes. */
  readonly prefixes: readonly string[];
}

const ALWAYS_NAMES = ['authorization', 'proxy-authorization', 'x-remote-user', 'x-remote-uid', 'x-remote-group'];
const ALWAYS_PREFIXES = ['x-remote-extra-', 'impersonate-'];

export function strippedHeaders(configured: StrippedHeaders): StrippedHeaders {
  return Object.freeze({
    names: Object.freeze([...new Set([...ALWAYS_NAMES, ...configured.names])]),
    prefixes: Object.freeze([...new Set([...ALWAYS_PREFIXES, ...configured.prefixes])]),
  });
}

/** Removes credential and identity headers from the inbound request before it is forwarded. */
export function stripForwarded(req: IncomingMessage, h: StrippedHeaders): void {
  for (const k of Object.keys(req.headers)) {
    if (h.names.includes(k) || h.prefixes.some((p) => k.startsWith(p))) delete req.headers[k];
  }
}

/** Header-name-safe extra key: kube percent-encodes keys in X-Remote-Extra-<key>. */
function extraHeader(key: string): string {
  return `X-Remote-Extra-${encodeURIComponent(key.toLowerCase())}`;
}

export function identityHeaders(user: UserInfo): OutgoingHttpHeaders {
  const h: OutgoingHttpHeaders = { 'X-Remote-User': user.username };
  if (user.uid) h['X-Remote-Uid'] = user.uid;
  if (user.groups.length > 0) h['X-Remote-Group'] = [...user.groups];
  for (const [k, values] of Object.entries(user.extra ?? {})) if (values.length > 0) h[extraHeader(k)] = [...values];
  return h;
}
