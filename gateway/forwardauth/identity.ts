// What an allowed forward-auth answer tells the proxy about the user, for
// it to pass to the upstream (nginx `auth_request_set`, Traefik
// `authResponseHeaders`, Envoy `allowed_upstream_headers`): kube's
// X-Remote-User / -Uid / -Group / -Extra-* (aggregation/identity.ts, one
// X-Remote-Group per group) and oauth2-proxy's X-Auth-Request-User and
// X-Auth-Request-Groups (comma-joined, which one nginx variable can carry).
import type { UserInfo } from '../../lib/api/meta.js';
import { identityPairs } from '../aggregation/identity.js';

const NO_STORE = ['Cache-Control', 'no-cache, private', 'Content-Length', '0'];

/** An allowed answer that names nobody (an ignored route, or a route with identityHeaders false). */
export const NO_IDENTITY: readonly string[] = Object.freeze([...NO_STORE]);

/** Answers already made, per user: a cached decision hands back the same frozen user object each time. */
const made = new WeakMap<UserInfo, readonly string[]>();

/** The answer's headers as flat name/value pairs (ServerResponse.writeHead takes them as they are, and keeps no reference). */
export function allowedHeaders(user: UserInfo): readonly string[] {
  const memo = made.get(user);
  if (memo !== undefined) return memo;
  const h = identityPairs(user);
  h.push('X-Auth-Request-User', user.username);
  if (user.groups.length > 0) h.push('X-Auth-Request-Groups', user.groups.join(','));
  h.push(...NO_STORE);
  const frozen = Object.freeze(h);
  // Only a frozen user is known to stay the user these headers name.
  if (Object.isFrozen(user)) made.set(user, frozen);
  return frozen;
}
