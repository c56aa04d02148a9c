// The request a proxy asks about, read by the three forward-auth contracts:
// nginx auth_request (X-Original-Method and X-Original-URI), Traefik
// ForwardAuth (X-Forwarded-Method, -Uri, -Host, -Proto) and Envoy's
// ext_authz HTTP service (the check request keeps the original method, and
// its path is the endpoint's followed by the original path). The URI is
// checked and decoded exactly as the gateway's own request paths
// (lib/api/requestpath.ts): an absolute URI, dot segments, empty segments
// and encoded slashes are a 400, so no route reads a path the upstream
// would read differently. A header given twice, two contracts at once, or a
// body is a 400 as well: a proxy sends none of them.
import type { IncomingMessage } from 'node:http';
import { badRequest, StatusError } from '../../lib/api/status.js';
import { checkedRequestPath } from '../../lib/api/requestpath.js';

export type Contract = 'nginx' | 'traefik' | 'envoy';

export interface OriginalRequest {
  readonly contract: Contract;
  readonly method: string;
  /** The decoded, checked path (no query): what routes match and authorization reads. */
  readonly path: string;
}

/** The forwarded headers read, lowercase. */
const READ = ['x-original-uri', 'x-original-method', 'x-forwarded-uri', 'x-forwarded-method', 'x-forwarded-host', 'x-forwarded-proto'] as const;
type Forwarded = Partial<Record<(typeof READ)[number], string>>;

const METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** The forwarded headers, each at most once (Node would join a repeated one with ", " and hide it). */
function forwarded(req: IncomingMessage): Forwarded {
  const out: Forwarded = {};
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // Every forwarded name begins with "x-": most headers are passed over on one comparison.
    if (name.length < 12 || (name.charCodeAt(0) | 0x20) !== 0x78) continue;
    const k = name.toLowerCase() as (typeof READ)[number];
    if (!(READ as readonly string[]).includes(k)) continue;
    if (out[k] !== undefined) throw badRequest(`forward auth: several ${name} headers`);
    out[k] = raw[i + 1]!;
  }
  return out;
}

function method(value: string | undefined, header: string): string {
  if (value === undefined || value === '') throw badRequest(`forward auth: ${header} is required`);
  if (!METHOD.test(value)) throw badRequest(`forward auth: ${header} is not an HTTP method`);
  return value;
}

/** Where the query or fragment begins (-1: neither). Two indexOf calls, not a RegExp search: this runs per call. */
function queryStart(v: string): number {
  const q = v.indexOf('?');
  const h = v.indexOf('#');
  return q < 0 ? h : h < 0 ? q : Math.min(q, h);
}

/** The path of a forwarded URI (query cut off), checked and decoded as the gateway's own. */
function uriPath(value: string | undefined, header: string): string {
  if (value === undefined || value === '') throw badRequest(`forward auth: ${header} is required`);
  if (value.charCodeAt(0) !== 0x2f || value.charCodeAt(1) === 0x2f) {
    throw badRequest(`forward auth: ${header} must be a path beginning with "/" (absolute URIs are refused)`);
  }
  const q = queryStart(value);
  try {
    return checkedRequestPath(q < 0 ? value : value.slice(0, q));
  } catch (err) {
    if (err instanceof StatusError) throw badRequest(`forward auth: ${header}: ${err.message}`);
    throw err;
  }
}

function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/**
 * The original request of a forward-auth call to `endpoint` (the check
 * request's path, without its query: `rawPath`); throws a 400 StatusError
 * naming the header or the part at fault.
 */
export function originalRequest(req: IncomingMessage, rawPath: string, endpoint: string): OriginalRequest {
  if (hasBody(req)) throw badRequest('forward auth: the request must not have a body (the original request is described by headers)');
  const f = forwarded(req);
  const nginx = f['x-original-uri'] !== undefined || f['x-original-method'] !== undefined;
  const traefik = f['x-forwarded-uri'] !== undefined || f['x-forwarded-method'] !== undefined;
  if (rawPath.length > endpoint.length) {
    if (nginx || traefik) throw badRequest('forward auth: a path after the endpoint (Envoy) and forwarded URI headers together');
    const url = req.url ?? '';
    return { contract: 'envoy', method: method(req.method, 'the method'), path: uriPath(url.slice(endpoint.length), 'the path after the endpoint') };
  }
  if (nginx && traefik) throw badRequest('forward auth: X-Original-* (nginx) and X-Forwarded-Uri/-Method (Traefik) headers together');
  if (nginx) return { contract: 'nginx', method: method(f['x-original-method'], 'X-Original-Method'), path: uriPath(f['x-original-uri'], 'X-Original-URI') };
  if (traefik) {
    return { contract: 'traefik', method: method(f['x-forwarded-method'], 'X-Forwarded-Method'), path: uriPath(f['x-forwarded-uri'], 'X-Forwarded-Uri') };
  }
  throw badRequest(
    'forward auth: no original request: send X-Original-Method and X-Original-URI (nginx), X-Forwarded-Method and X-Forwarded-Uri (Traefik), or the path after the endpoint (Envoy)',
  );
}
