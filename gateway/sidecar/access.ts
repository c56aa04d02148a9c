// Who may reach the upstream, in kube-rbac-proxy's terms, as the pieces the
// shared chain (gateway/pipeline/chain.ts) takes: --allow-paths and
// --ignore-paths around authentication and authorization, the attributes
// (non-resource from the path and method, or the fixed --resource-attributes)
// and kube-rbac-proxy's 403 text.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { pathNotFound, StatusError } from '../../lib/api/status.js';
import { ANONYMOUS, type AuthnResult } from '../authn/types.js';
import type { Attributes, Authorizer, Decision } from '../authz/types.js';
import type { RequestAuthenticator } from '../pipeline/chain.js';
import type { RequestContext } from '../pipeline/context.js';
import type { ResourceAttributes } from './config.js';

/** Go's path.Match for one pattern: `*` any run of non-`/`, `?` one non-`/`; everything else literal. */
export function pathPattern(p: string): RegExp {
  let re = '';
  for (const ch of p) re += ch === '*' ? '[^/]*' : ch === '?' ? '[^/]' : ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${re}$`);
}

/** The path as sent (not decoded), which patterns and attributes use. */
export function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?', 1)[0]!;
}

/** --allow-paths (others are 404 before anything else) and --ignore-paths (no authentication, no authorization, no identity sent). */
export class SidecarPaths {
  readonly #allow: readonly RegExp[];
  readonly #ignore: readonly RegExp[];
  constructor(allow: readonly string[], ignore: readonly string[]) {
    this.#allow = allow.map(pathPattern);
    this.#ignore = ignore.map(pathPattern);
  }
  allowed(path: string): boolean {
    return this.#allow.length === 0 || this.#allow.some((r) => r.test(path));
  }
  ignored(path: string): boolean {
    return this.#ignore.some((r) => r.test(path));
  }
}

/** The chain's first question, so a path outside --allow-paths is 404 whoever asks; an ignored path is anonymous without looking at credentials. */
export function pathGatedAuthenticator(paths: SidecarPaths, authenticator: RequestAuthenticator): RequestAuthenticator {
  const skipped: AuthnResult = Object.freeze({ user: ANONYMOUS });
  return {
    authenticate: async (req) => {
      const path = pathOf(req);
      if (!paths.allowed(path)) throw pathNotFound();
      if (paths.ignored(path)) return skipped;
      return authenticator.authenticate(req);
    },
  };
}

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });

/** Ignored paths are allowed without asking the cluster. */
export function pathGatedAuthorizer(paths: SidecarPaths, authorizer: Authorizer): Authorizer {
  return { name: 'sidecar', authorize: (a, trace) => (paths.ignored(a.path) ? ALLOW : authorizer.authorize(a, trace)) };
}

/** kube-rbac-proxy's verb of a method. */
export function verbOf(method: string | undefined): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return 'get';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return (method ?? '').toLowerCase();
  }
}

/** Non-resource attributes (the path, the verb of the method), or the fixed --resource-attributes. */
export function sidecarAttributes(fixed: ResourceAttributes | undefined): (ctx: RequestContext) => Attributes {
  return (ctx) => {
    const user: UserInfo = ctx.user;
    const verb = verbOf(ctx.req.method);
    const path = pathOf(ctx.req);
    if (fixed) return { user, verb, isResourceRequest: true, path, ...fixed };
    return { user, verb, isResourceRequest: false, path, apiGroup: '', apiVersion: '', namespace: '', resource: '', subresource: '', name: '' };
  };
}

/** kube-rbac-proxy's 403 text, as a Status; the reason goes to the log only. */
export function sidecarForbidden(log: (msg: string) => void): (ctx: RequestContext, a: Attributes, reason: string) => StatusError {
  return (_ctx, a, reason) => {
    log(`sidecar: denied ${a.verb} ${a.path} for ${a.user.username}${reason ? `: ${reason}` : ''}`);
    const what = a.isResourceRequest
      ? `resource=${a.resource}${a.apiGroup ? `.${a.apiGroup}` : ''}, subresource=${a.subresource}, namespace=${a.namespace}, name=${a.name}`
      : `path=${a.path}`;
    return new StatusError(403, 'Forbidden', `Forbidden (user=${a.user.username}, verb=${a.verb}, ${what})`);
  };
}
