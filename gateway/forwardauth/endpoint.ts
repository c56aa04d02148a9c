// The forward-auth endpoint (--forward-auth-path, /gatehouse/forward-auth):
// nginx, Traefik and Envoy ask it whether a request they hold may pass.
// In order: the caller must be a trusted proxy (trust.ts; else 400), the
// original request is read by its contract (original.ts), the route table
// says what it is (no route: 404; deny: 403; ignore: 200 with no identity),
// the user is authenticated from the forwarded Authorization header (every
// token method of the server) or a forwarded client certificate
// (clientcert.ts), and the server's authorizer decides on the route's
// attributes (its caches are the decision cache). Allowed: 200 with the
// user for the upstream (identity.ts); unauthenticated: 401 with
// `WWW-Authenticate: Bearer`; denied: 403 with kube's reason. It runs
// beside the request chain, not in it: the proxy's call is not a request
// to authorize on its own, and the answer needs no seat, audit or body.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { forbiddenMessage, internalError, pathNotFound, StatusError, toStatusError } from '../../lib/api/status.js';
import { newExchange } from '../../lib/http/exchange.js';
import { sendError } from '../../lib/http/respond.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import type { Authorizer } from '../authz/types.js';
import type { ChainHandler, RequestAuthenticator } from '../pipeline/chain.js';
import { routeAttributes } from '../routes/attributes.js';
import type { RouteTable } from '../routes/table.js';
import { allowedHeaders, NO_IDENTITY } from './identity.js';
import { originalRequest } from './original.js';
import type { ProxyTrust } from './trust.js';

export interface ForwardAuthOptions {
  /** --forward-auth-path. */
  readonly path: string;
  readonly trust: ProxyTrust;
  /** The forwarded caller's credentials: tokens and forwarded certificates, never the proxy's own connection. */
  readonly authenticator: RequestAuthenticator;
  readonly authorizer: Authorizer;
  readonly routes: RouteTable;
  readonly log: (msg: string) => void;
}

const BEARER_CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Bearer' });

async function decide(o: ForwardAuthOptions, req: IncomingMessage, rawPath: string): Promise<readonly string[]> {
  if (!o.trust.trusted(req)) {
    throw new StatusError(
      400,
      'BadRequest',
      'forward auth: the caller is not a trusted proxy (a client certificate named in --forward-auth-proxy-names, or an address in --forward-auth-trusted-addresses)',
    );
  }
  const orig = originalRequest(req, rawPath, o.path);
  const m = o.routes.match(orig.path);
  if (!m) throw pathNotFound(`no route matches ${JSON.stringify(orig.path)}`);
  if (m.route.action === 'deny') throw forbiddenMessage(`forbidden: route "${m.route.name}" denies path "${orig.path}"`);
  if (m.route.action === 'ignore') return NO_IDENTITY;
  let user;
  try {
    user = (await o.authenticator.authenticate(req)).user;
  } catch (err) {
    if (err instanceof StatusError && err.code === 401) throw new StatusError(401, 'Unauthorized', err.message, undefined, BEARER_CHALLENGE);
    throw err;
  }
  const attrs = routeAttributes(m, user, orig.method, orig.path);
  const d = await o.authorizer.authorize(attrs);
  if (d.kind !== 'allow') {
    if (d.error) throw internalError(d.error);
    throw forbiddenMessage(d.reason ? `${denial(attrs)}: ${d.reason}` : denial(attrs));
  }
  return m.route.identityHeaders ? allowedHeaders(user) : NO_IDENTITY;
}

function answerCall(o: ForwardAuthOptions, req: IncomingMessage, res: ServerResponse, rawPath: string): void {
  decide(o, req, rawPath).then(
    (headers) => {
      if (!res.headersSent && !res.destroyed) res.writeHead(200, headers as string[]).end();
    },
    (err: unknown) => {
      if (!(err instanceof StatusError)) o.log(`forward auth: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      sendError(newExchange(req, res, false), toStatusError(err));
    },
  );
  // The proxy sent no body (a body is refused); whatever came is drained so the connection stays usable.
  req.resume();
}

/** The server's handler with the forward-auth endpoint in front of the chain; every other path goes to the chain. */
export function withForwardAuth(o: ForwardAuthOptions | undefined, chain: ChainHandler): ChainHandler {
  if (!o) return chain;
  const endpoint = o.path;
  const n = endpoint.length;
  return (req, res, upgrade) => {
    const url = req.url ?? '/';
    // Every other request pays one prefix comparison.
    if (upgrade || !url.startsWith(endpoint)) return chain(req, res, upgrade);
    const q = url.indexOf('?');
    const rawPath = q < 0 ? url : url.slice(0, q);
    // The endpoint itself (nginx, Traefik) or a path below it (Envoy's prefix before the original path).
    if (rawPath.length > n && rawPath.charCodeAt(n) !== 0x2f) return chain(req, res, upgrade);
    answerCall(o, req, res, rawPath);
  };
}
