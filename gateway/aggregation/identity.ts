// The identity a proxied request carries to an aggregated backend: the
// effective user (after impersonation) in X-Remote-User / -Uid / -Group /
// -Extra-<key>, as kube-aggregator sets them. Whatever the client sent under
// those names (or the configured request-header names), its credentials and
// impersonation headers are removed first, so only the gateway's word arrives.
import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { isIdentity, stripIdentityHeaders, type IdentityHeaders } from '../pipeline/identityheaders.js';

/** Credentials meant for the gateway, never for a backend (the chain removes Authorization already; this is the proxy's own guarantee). */
const CREDENTIAL_NAMES = ['authorization', 'proxy-authorization'];
const IMPERSONATION_PREFIX = 'impersonate-';

/**
 * Removes credential and impersonation headers and the identity headers from
 * the inbound request before it is forwarded. `identity` is the list the
 * chain strips after authentication (pipeline/identityheaders.ts): one list
 * for both strips.
 */
export function stripForwarded(req: IncomingMessage, identity: IdentityHeaders): void {
  const h = req.headers;
  for (const n of CREDENTIAL_NAMES) if (h[n] !== undefined) delete h[n];
  for (const k in h) if (k.startsWith(IMPERSONATION_PREFIX)) delete h[k];
  stripIdentityHeaders(req, identity);
}

/**
 * The names stripForwarded removes, as a test on one lowercase name: the
 * pooled forwarder (poolforward.ts) skips them while copying the headers
 * once, instead of deleting them from the request first.
 */
export function notForwarded(identity: IdentityHeaders): (name: string) => boolean {
  return (k) => k === 'authorization' || k === 'proxy-authorization' || k.startsWith(IMPERSONATION_PREFIX) || isIdentity(k, identity);
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

/** The same headers as flat name/value pairs (one X-Remote-Group per group), for undici. */
export function identityPairs(user: UserInfo): string[] {
  const h = ['X-Remote-User', user.username];
  if (user.uid) h.push('X-Remote-Uid', user.uid);
  for (const g of user.groups) h.push('X-Remote-Group', g);
  const extra = user.extra;
  if (extra)
    for (const k of Object.keys(extra)) {
      const name = extraHeader(k);
      for (const v of extra[k]!) h.push(name, v);
    }
  return h;
}
