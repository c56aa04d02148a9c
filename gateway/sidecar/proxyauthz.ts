// What the sidecar asks and who answers, with kube-rbac-proxy's
// configuration file in force (proxyconfig.ts, reloaded): its resource
// attributes replace the route's, its rewrites turn one request into one
// question per value (a query parameter's or header's), every one of which
// must be allowed, and its static rules allow a question without asking the
// cluster. Without the file each route says what is asked (gateway/routes).
import { badRequest } from '../../lib/api/status.js';
import { distinctHeaders } from '../../lib/http/headers.js';
import type { Attributes, Authorizer, Decision } from '../authz/types.js';
import type { RequestContext } from '../pipeline/context.js';
import { routeAttributes, verbOf } from '../routes/attributes.js';
import type { RouteTable } from '../routes/table.js';
import { fill, type ProxyConfig, type StaticRule } from './proxyconfig.js';

/** The config file in force (swapped whole on reload). */
export interface ProxyConfigSource {
  readonly current: ProxyConfig | undefined;
}

/** The first question, carrying every question when rewrites made several (all must be allowed). */
export interface SidecarAttributes extends Attributes {
  readonly each?: readonly Attributes[];
}

function rewriteValues(cfg: ProxyConfig, ctx: RequestContext): string[] {
  const rw = cfg.rewrites!;
  const values = rw.query !== undefined ? ctx.query.getAll(rw.query) : [];
  if (rw.header !== undefined) values.push(...(distinctHeaders(ctx.req)[rw.header] ?? []));
  if (values.length === 0) {
    const from = [rw.query !== undefined && `the query parameter "${rw.query}"`, rw.header !== undefined && `the header "${rw.header}"`]
      .filter(Boolean)
      .join(' or ');
    throw badRequest(`nothing to authorize: ${from} is required`);
  }
  return values;
}

export function sidecarAttributes(table: RouteTable, config: ProxyConfigSource): (ctx: RequestContext) => SidecarAttributes {
  return (ctx) => {
    const path = ctx.info.path;
    const method = ctx.req.method ?? 'GET';
    const cfg = config.current;
    const ra = cfg?.resourceAttributes;
    if (!cfg || !ra) {
      const m = table.match(path);
      // The authenticator answered 404 for a path no route takes; this is only reached for routed paths.
      if (!m) throw badRequest(`no route for ${JSON.stringify(path)}`);
      return routeAttributes(m, ctx.user, method, path);
    }
    const one = (value: string): Attributes => ({
      user: ctx.user,
      verb: verbOf(method),
      isResourceRequest: true,
      path,
      namespace: fill(ra.namespace, value),
      apiGroup: fill(ra.apiGroup, value),
      apiVersion: fill(ra.apiVersion, value),
      resource: fill(ra.resource, value),
      subresource: fill(ra.subresource, value),
      name: fill(ra.name, value),
    });
    if (!cfg.rewrites) return one('');
    const each = rewriteValues(cfg, ctx).map(one);
    return { ...each[0]!, each };
  };
}

/** kube-rbac-proxy's static match: an empty field matches anything; groups match when any one does. */
function staticAllows(rules: readonly StaticRule[], a: Attributes): boolean {
  const eq = (rule: string, v: string) => rule === '' || rule === v;
  return rules.some(
    (r) =>
      eq(r.user.name, a.user.username) &&
      (r.user.groups.length === 0 || a.user.groups.some((g) => r.user.groups.includes(g))) &&
      eq(r.verb, a.verb) &&
      eq(r.namespace, a.namespace) &&
      eq(r.apiGroup, a.apiGroup) &&
      eq(r.resource, a.resource) &&
      eq(r.subresource, a.subresource) &&
      eq(r.name, a.name) &&
      eq(r.path, a.path) &&
      r.resourceRequest === a.isResourceRequest,
  );
}

const ALLOW: Decision = Object.freeze({ kind: 'allow', reason: '' });

/** Ignored routes allowed; then each question: a static rule, or the cluster. A single question stays synchronous when the cluster's answer is cached. */
export function sidecarAuthorizer(table: RouteTable, config: ProxyConfigSource, cluster: Authorizer): Authorizer {
  const ask = (a: Attributes, rules: readonly StaticRule[], trace: Parameters<Authorizer['authorize']>[1]) =>
    rules.length > 0 && staticAllows(rules, a) ? ALLOW : cluster.authorize(a, trace);
  return {
    name: 'sidecar',
    authorize: (a, trace) => {
      if (table.ignores && table.match(a.path)?.route.action === 'ignore') return ALLOW;
      const rules = config.current?.static ?? [];
      const each = (a as SidecarAttributes).each;
      if (!each) return ask(a, rules, trace);
      return (async () => {
        for (const x of each) {
          const d = await ask(x, rules, trace);
          if (d.kind !== 'allow') return d;
        }
        return ALLOW;
      })();
    },
  };
}
