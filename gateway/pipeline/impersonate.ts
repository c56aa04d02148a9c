// Impersonation: Impersonate-User / -Group / -Uid / -Extra-<key> headers,
// each checked with the `impersonate` verb for the authenticated user. The
// headers are removed afterwards so nothing downstream can read them.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import { badRequest, forbiddenMessage } from '../../lib/api/status.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import { setOwn } from '../../lib/api/own.js';
import { distinctHeaders } from '../../lib/http/headers.js';
import type { RequestContext } from './context.js';

const SA_PREFIX = 'system:serviceaccount:';

function headerValues(headers: Record<string, string[]>, name: string): string[] {
  const v = headers[name];
  return v
    ? v.flatMap((x) =>
        x
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      )
    : [];
}

function extraKey(header: string): string {
  const raw = header.slice('impersonate-extra-'.length);
  try {
    return decodeURIComponent(raw).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/** Runs on every request: a scan of the parsed header names, no allocation. */
export function hasImpersonation(req: IncomingMessage): boolean {
  for (const h in req.headers) if (h.startsWith('impersonate-')) return true;
  return false;
}

/** Returns the user to act as; throws 400/403. Call only when hasImpersonation(req). */
export async function impersonate(req: IncomingMessage, actor: UserInfo, authz: Authorizer): Promise<UserInfo> {
  // Read once: on HTTP/2 the table is built from the raw headers on each call.
  const headers = distinctHeaders(req);
  const usernames = headerValues(headers, 'impersonate-user');
  const groups = headers['impersonate-group'] ?? [];
  const uids = headers['impersonate-uid'] ?? [];
  const extra: Record<string, string[]> = {};
  for (const h of Object.keys(req.headers)) {
    if (h.startsWith('impersonate-extra-')) setOwn(extra, extraKey(h), headers[h] ?? []);
  }
  if (usernames.length !== 1) {
    throw badRequest(
      usernames.length === 0 ? 'impersonation requested without impersonating a user: set Impersonate-User' : 'only one Impersonate-User header may be set',
    );
  }
  if (uids.length > 1) throw badRequest('only one Impersonate-Uid header may be set');
  const username = usernames[0]!;
  const checks: Array<Omit<Attributes, 'user' | 'verb' | 'isResourceRequest' | 'path' | 'apiVersion'>> = [];
  if (username.startsWith(SA_PREFIX)) {
    const [ns, name] = username.slice(SA_PREFIX.length).split(':');
    checks.push({ apiGroup: '', resource: 'serviceaccounts', namespace: ns ?? '', name: name ?? '', subresource: '' });
  } else {
    checks.push({ apiGroup: '', resource: 'users', namespace: '', name: username, subresource: '' });
  }
  for (const g of groups) checks.push({ apiGroup: '', resource: 'groups', namespace: '', name: g, subresource: '' });
  for (const u of uids) checks.push({ apiGroup: 'authentication.k8s.io', resource: 'uids', namespace: '', name: u, subresource: '' });
  for (const [k, values] of Object.entries(extra)) {
    for (const v of values) checks.push({ apiGroup: 'authentication.k8s.io', resource: 'userextras', namespace: '', name: v, subresource: k });
  }
  for (const c of checks) {
    const attrs: Attributes = { ...c, user: actor, verb: 'impersonate', isResourceRequest: true, path: '', apiVersion: '' };
    const d = await authz.authorize(attrs);
    if (d.kind !== 'allow') throw forbiddenMessage(denial(attrs), { name: c.name, group: c.apiGroup, kind: c.resource });
  }
  const finalGroups = [...groups];
  if (username.startsWith(SA_PREFIX)) {
    const ns = username.slice(SA_PREFIX.length).split(':')[0]!;
    for (const g of ['system:serviceaccounts', `system:serviceaccounts:${ns}`]) if (!finalGroups.includes(g)) finalGroups.push(g);
  }
  if (username === 'system:anonymous') {
    if (!finalGroups.includes('system:unauthenticated')) finalGroups.push('system:unauthenticated');
  } else if (!finalGroups.includes('system:authenticated')) {
    finalGroups.push('system:authenticated');
  }
  for (const h of Object.keys(req.headers)) if (h.startsWith('impersonate-')) delete req.headers[h];
  return Object.freeze({
    username,
    groups: finalGroups,
    ...(uids[0] ? { uid: uids[0] } : {}),
    ...(Object.keys(extra).length ? { extra } : {}),
  });
}

/** The impersonation step (kube's WithImpersonation): a promise only for a request that impersonates, when impersonation is on. */
export function impersonation(ctx: RequestContext, enabled: boolean, authz: Authorizer): Promise<void> | undefined {
  if (!enabled || !hasImpersonation(ctx.req)) return undefined;
  return impersonate(ctx.req, ctx.user, authz).then((user) => {
    ctx.user = user;
    ctx.audit?.impersonated(user);
  });
}
