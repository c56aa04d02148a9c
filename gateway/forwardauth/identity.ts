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

/** The answer's headers as flat name/value pairs (ServerResponse.writeHead takes them as they are). */
export function allowedHeaders(user: UserInfo): string[] {
  const h = identityPairs(user);
  h.push('X-Auth-Request-User', user.username);
  if (user.groups.length > 0) h.push('X-Auth-Request-Groups', user.groups.join(','));
  h.push(...NO_STORE);
  return h;
}
