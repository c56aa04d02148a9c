// The identity a forwarded request carries to a backend: the effective user
// (after impersonation) in X-Remote-User / -Uid / -Group / -Extra-<key>, as
// kube-aggregator sets them. Whatever the client sent under those names (or
// the configured request-header names), its credentials and impersonation
// headers are never forwarded, so only the gateway's word arrives. One
// builder for every forwarder (poolforward.ts, forward.ts's upgrades) and
// every path (APIServices, the remote core backend, the sidecar).
import type { UserInfo } from '../../lib/api/meta.js';
import { isIdentity, type IdentityHeaders } from '../pipeline/identityheaders.js';

const IMPERSONATION_PREFIX = 'impersonate-';

/**
 * The client header names (lowercase) never forwarded: credentials meant for
 * the gateway (the chain removes Authorization already; this is the
 * forwarders' own guarantee), `Impersonate-*`, and `identity`, the list the
 * chain strips after authentication (pipeline/identityheaders.ts): one list
 * for both. The forwarders skip them while copying the headers once.
 */
export function notForwarded(identity: IdentityHeaders): (name: string) => boolean {
  return (k) => k === 'authorization' || k === 'proxy-authorization' || k.startsWith(IMPERSONATION_PREFIX) || isIdentity(k, identity);
}

/** Header-name-safe extra key: kube percent-encodes keys in X-Remote-Extra-<key>. */
function extraHeader(key: string): string {
  return `X-Remote-Extra-${encodeURIComponent(key.toLowerCase())}`;
}

/** The identity headers as flat name/value pairs (one X-Remote-Group per group, one X-Remote-Extra-<key> per value). */
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

/** The identity part of a forwarded head: the pairs, and their names in lower case (which client headers they replace). */
export interface IdentityHead {
  readonly pairs: readonly string[];
  readonly names: ReadonlySet<string>;
}

/**
 * Built once per identity: the authenticators hand out one frozen UserInfo
 * per connection or cached token (and impersonation one per request), so a
 * memo keyed by it serves every request of a keep-alive client or an
 * HTTP/2 session. Saves ~1.2 µs of 1.6 per proxied request (3 groups, one
 * extra; bench/micro.ts forwardhead): the pairs' array and the per-header scan.
 */
const heads = new WeakMap<UserInfo, IdentityHead>();

export function identityHead(user: UserInfo): IdentityHead {
  let h = heads.get(user);
  if (h === undefined) {
    const pairs = Object.freeze(identityPairs(user));
    const names = new Set<string>();
    for (let i = 0; i < pairs.length; i += 2) names.add(pairs[i]!.toLowerCase());
    h = { pairs, names };
    heads.set(user, h);
  }
  return h;
}
