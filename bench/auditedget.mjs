// The GET the in-process audit benchmarks audit (bench/micro.ts "One
// Metadata-audited GET", bench/audit-turns.mjs): a request that never reached
// a server, as kubectl sends it from 127.0.0.1, and the user authentication
// would have made. Plain JavaScript so that both a source run (micro.ts) and a
// run against a build (audit-turns.mjs, DIST=) import it.
import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';

export const URL = '/api/v1/namespaces/bench/configmaps/c1';
export const UA = 'kubectl/v1.33.0 (linux/amd64) kubernetes/abcdef';

/** A copy of s in new memory, as a request's strings are when parsed from its socket. */
export const fresh = (s) => Buffer.from(s).toString('latin1');

export function auditedGet() {
  const socket = new Socket();
  Object.defineProperty(socket, 'remoteAddress', { value: '127.0.0.1' });
  const req = new IncomingMessage(socket);
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  req.method = 'GET';
  req.url = URL;
  req.headers = { 'user-agent': UA, accept: 'application/json' };
  // One user object for every request, as authentication keeps its results per connection and token.
  const user = { username: 'cg-user', groups: ['cg', 'system:authenticated'] };
  /** The strings a new request of the same kind brings: its URL and user agent, new each time. */
  const renew = () => {
    req.url = fresh(URL);
    req.headers['user-agent'] = fresh(UA);
  };
  return { req, user, renew };
}
