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
import type { Attributes, Authorizer, Decision } from '../authz/types.js';
import type { AuthnResult } from '../authn/types.js';
import type { UserInfo } from '../../lib/api/meta.js';
import type { ChainHandler, RequestAuthenticator } from '../pipeline/chain.js';
import { routeAttributes } from '../routes/attributes.js';
import type { RouteMatch, RouteTable } from '../routes/table.js';
import { allowedHeaders, NO_IDENTITY } from './identity.js';
import { originalRequest, type OriginalRequest } from './original.js';
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

/** 401 with the Bearer challenge for a failed authentication; anything else as it is. */
function challenged(err: unknown): unknown {
  return err instanceof StatusError && err.code === 401 ? new StatusError(401, 'Unauthorized', err.message, undefined, BEARER_CHALLENGE) : err;
}

/**
 * The allowed answer's headers, or a thrown StatusError. Synchronous while the authenticator and the
 * authorizer answer at once (a cached token and decision): such a call is answered in the request's own
 * callback, with no promise and no microtask turn; a promise once either has to wait.
 */
function decide(o: ForwardAuthOptions, req: IncomingMessage, rawPath: string): readonly string[] | Promise<readonly string[]> {
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
  let authn: AuthnResult | Promise<AuthnResult>;
  try {
    authn = o.authenticator.authenticate(req);
  } catch (err) {
    throw challenged(err);
  }
  if (authn instanceof Promise) {
    return authn.then(
      (r) => authorized(o, m, orig, r.user),
      (err: unknown) => {
        throw challenged(err);
      },
    );
  }
  return authorized(o, m, orig, authn.user);
}

function authorized(o: ForwardAuthOptions, m: RouteMatch, orig: OriginalRequest, user: UserInfo): readonly string[] | Promise<readonly string[]> {
  const attrs = routeAttributes(m, user, orig.method, orig.path);
  const d = o.authorizer.authorize(attrs);
  return d instanceof Promise ? d.then((d) => verdict(m, user, attrs, d)) : verdict(m, user, attrs, d);
}

function verdict(m: RouteMatch, user: UserInfo, attrs: Attributes, d: Decision): readonly string[] {
  if (d.kind !== 'allow') {
    if (d.error) throw internalError(d.error);
    throw forbiddenMessage(d.reason ? `${denial(attrs)}: ${d.reason}` : denial(attrs));
  }
  return m.route.identityHeaders ? allowedHeaders(user) : NO_IDENTITY;
}

function answerCall(o: ForwardAuthOptions, req: IncomingMessage, res: ServerResponse, rawPath: string): void {
  // The proxy sent no body (a body is refused); whatever came is drained so the connection stays usable.
  req.resume();
  const fail = (err: unknown): void => {
    if (!(err instanceof StatusError)) o.log(`forward auth: internal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    sendError(newExchange(req, res, false), toStatusError(err));
  };
  let headers: readonly string[] | Promise<readonly string[]>;
  try {
    headers = decide(o, req, rawPath);
  } catch (err) {
    fail(err);
    return;
  }
  if (headers instanceof Promise) headers.then((h) => allow(res, h), fail);
  else allow(res, headers);
}

function allow(res: ServerResponse, headers: readonly string[]): void {
  if (!res.headersSent && !res.destroyed) res.writeHead(200, headers as string[]).end();
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
