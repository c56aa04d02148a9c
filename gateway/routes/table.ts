// The route table: which upstream a path goes to and what the cluster is
// asked about it, read top to bottom, the first match winning. A route is
// one way of matching (match.ts), an action (authorize, ignore: let through
// anonymous with no identity, deny: 403 whoever asks), the attributes
// authorized (non-resource: the path and the verb; or resource attributes,
// fixed or taken from the path's captures), whether identity headers go to
// the upstream, and, in sidecar mode, its upstream. Parsed once, frozen;
// every problem names the route.
import { ConfigError } from '../../lib/config/error.js';
import { ownValue } from '../../lib/api/own.js';
import { pathMatcher, shadows, type MatchKind, type PathMatcher } from './match.js';

export type RouteAction = 'authorize' | 'ignore' | 'deny';

export const ATTRIBUTE_FIELDS = ['namespace', 'apiGroup', 'apiVersion', 'resource', 'subresource', 'name'] as const;
export type AttributeField = (typeof ATTRIBUTE_FIELDS)[number];

/** A value of a resource attribute: literal text with `{capture}` references, compiled to parts. */
type TemplatePart = { readonly text: string } | { readonly capture: string };

export interface Route {
  readonly name: string;
  readonly matcher: PathMatcher;
  readonly action: RouteAction;
  /** The upstream URL (sidecar mode); undefined = the sidecar's --upstream. */
  readonly upstream: string | undefined;
  /** Whether the caller's identity goes to the upstream (never on an ignored route). */
  readonly identityHeaders: boolean;
  /** Resource attributes by field; undefined = a non-resource request (the path and the verb). */
  readonly resourceAttributes: Readonly<Record<AttributeField, readonly TemplatePart[]>> | undefined;
}

export interface RouteMatch {
  readonly route: Route;
  readonly captures: Readonly<Record<string, string>>;
}

export class RouteTable {
  /** Whether any route ignores (the authorizer then looks the route up again; otherwise it need not). */
  readonly ignores: boolean;
  constructor(readonly routes: readonly Route[]) {
    this.ignores = routes.some((r) => r.action === 'ignore');
  }

  /** The first route that matches the (decoded, checked) path, or undefined: no route, a 404. */
  match(path: string): RouteMatch | undefined {
    for (const route of this.routes) {
      const captures = route.matcher.test(path);
      if (captures) return { route, captures };
    }
    return undefined;
  }

  /** The distinct upstreams named by routes (the default one not included). */
  upstreams(): string[] {
    return [...new Set(this.routes.map((r) => r.upstream).filter((u): u is string => u !== undefined))];
  }
}

/** A resource attribute's value with its captures filled in. */
export function fillTemplate(parts: readonly TemplatePart[], captures: Readonly<Record<string, string>>): string {
  if (parts.length === 1) {
    const p = parts[0]!;
    return 'text' in p ? p.text : (captures[p.capture] ?? '');
  }
  let out = '';
  for (const p of parts) out += 'text' in p ? p.text : (captures[p.capture] ?? '');
  return out;
}

const MATCH_KINDS: readonly MatchKind[] = ['path', 'prefix', 'pattern', 'regex'];
const ACTIONS: readonly RouteAction[] = ['authorize', 'ignore', 'deny'];
const ROUTE_FIELDS = ['name', ...MATCH_KINDS, 'action', 'upstream', 'identityHeaders', 'resourceAttributes'];
const EMPTY: readonly TemplatePart[] = Object.freeze([]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function template(raw: string, captures: readonly string[]): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let rest = raw;
  while (rest !== '') {
    const open = rest.indexOf('{');
    if (open < 0) {
      parts.push({ text: rest });
      break;
    }
    if (open > 0) parts.push({ text: rest.slice(0, open) });
    const close = rest.indexOf('}', open);
    if (close < 0) throw new ConfigError(`unclosed "{" in "${raw}"`);
    const name = rest.slice(open + 1, close);
    if (!captures.includes(name)) throw new ConfigError(`"{${name}}" is not a capture of the route's match (captures: ${captures.join(', ') || 'none'})`);
    parts.push({ capture: name });
    rest = rest.slice(close + 1);
  }
  return parts;
}

function resourceAttributes(raw: unknown, captures: readonly string[]): Route['resourceAttributes'] {
  if (!isObject(raw)) throw new ConfigError('must be a map of namespace, apiGroup, apiVersion, resource, subresource, name');
  const unknown = Object.keys(raw).filter((k) => !(ATTRIBUTE_FIELDS as readonly string[]).includes(k));
  if (unknown.length > 0) throw new ConfigError(`unknown field ${unknown[0]} (known: ${ATTRIBUTE_FIELDS.join(', ')})`);
  const out = {} as Record<AttributeField, readonly TemplatePart[]>;
  for (const f of ATTRIBUTE_FIELDS) {
    const v = ownValue(raw, f);
    if (v !== undefined && typeof v !== 'string') throw new ConfigError(`${f} must be a string`);
    // A field left out is taken from the capture of its name, when the match has one.
    const text = v ?? (captures.includes(f) ? `{${f}}` : '');
    try {
      out[f] = Object.freeze(text === '' ? EMPTY : template(text, captures));
    } catch (err) {
      throw err instanceof ConfigError ? err.within(f) : err;
    }
  }
  if (out.resource.length === 0) throw new ConfigError('resource is required (a value, or a "{resource}" capture)');
  return Object.freeze(out);
}

function parseRoute(raw: unknown, opts: RouteTableOptions): Route {
  if (!isObject(raw)) throw new ConfigError('must be a map');
  const unknown = Object.keys(raw).filter((k) => !ROUTE_FIELDS.includes(k));
  if (unknown.length > 0) throw new ConfigError(`unknown field ${unknown[0]} (known: ${ROUTE_FIELDS.join(', ')})`);
  const name = ownValue(raw, 'name');
  if (typeof name !== 'string' || name === '') throw new ConfigError('name is required');
  const kinds = MATCH_KINDS.filter((k) => ownValue(raw, k) !== undefined);
  if (kinds.length !== 1) throw new ConfigError(`exactly one of ${MATCH_KINDS.join(', ')} is required${kinds.length ? ` (given: ${kinds.join(', ')})` : ''}`);
  const kind = kinds[0]!;
  const spec = ownValue(raw, kind);
  if (typeof spec !== 'string') throw new ConfigError(`${kind} must be a string`);
  let matcher: PathMatcher;
  try {
    matcher = pathMatcher(kind, spec);
  } catch (err) {
    throw err instanceof ConfigError ? new ConfigError(`"${spec}": ${err.reason}`, { field: kind }) : err;
  }
  const action = ownValue(raw, 'action') ?? 'authorize';
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) throw new ConfigError(`action must be one of ${ACTIONS.join(', ')}`);
  const rawUpstream = ownValue(raw, 'upstream');
  let upstream: string | undefined;
  if (rawUpstream !== undefined) {
    if (typeof rawUpstream !== 'string') throw new ConfigError('upstream must be a string');
    if (!opts.upstreams) throw new ConfigError('upstream is for sidecar mode (--upstream) only');
    try {
      upstream = opts.upstreamUrl(rawUpstream);
    } catch (err) {
      throw err instanceof ConfigError ? new ConfigError(`"${rawUpstream}": ${err.reason}`, { field: 'upstream' }) : err;
    }
  }
  const identity = ownValue(raw, 'identityHeaders') ?? true;
  if (typeof identity !== 'boolean') throw new ConfigError('identityHeaders must be true or false');
  if (action === 'ignore' && ownValue(raw, 'identityHeaders') === true) throw new ConfigError('identityHeaders: an ignored route has no caller to send');
  const ra = ownValue(raw, 'resourceAttributes');
  let attrs: Route['resourceAttributes'];
  try {
    attrs = ra === undefined ? undefined : resourceAttributes(ra, matcher.captures);
  } catch (err) {
    throw err instanceof ConfigError ? err.within('resourceAttributes') : err;
  }
  if (attrs && action !== 'authorize') throw new ConfigError(`resourceAttributes: a route with action ${action} asks nothing`);
  return Object.freeze({
    name,
    matcher,
    action: action as RouteAction,
    upstream,
    identityHeaders: action === 'ignore' ? false : identity,
    resourceAttributes: attrs,
  });
}

export interface RouteTableOptions {
  /** Whether routes may name upstreams (sidecar mode). */
  readonly upstreams: boolean;
  /** The upstream URL as the sidecar uses it; throws a ConfigError for one it cannot reach. */
  readonly upstreamUrl: (raw: string) => string;
}

/** `routes:` as read from a file: a list of routes; problems name the route (`routes[2] "metrics": …`). */
export function parseRouteTable(doc: unknown, opts: RouteTableOptions): RouteTable {
  const list = isObject(doc) ? ownValue(doc, 'routes') : undefined;
  if (!Array.isArray(list) || list.length === 0) throw new ConfigError('routes must be a non-empty list');
  if (isObject(doc)) {
    const extra = Object.keys(doc).filter((k) => k !== 'routes');
    if (extra.length > 0) throw new ConfigError(`unknown field ${extra[0]} (known: routes)`);
  }
  const routes: Route[] = [];
  list.forEach((raw, i) => {
    const label = `routes[${i}]${isObject(raw) && typeof ownValue(raw, 'name') === 'string' ? ` "${ownValue(raw, 'name') as string}"` : ''}`;
    let route: Route;
    try {
      route = parseRoute(raw, opts);
    } catch (err) {
      throw err instanceof ConfigError ? err.within(label) : err;
    }
    const dup = routes.find((r) => r.name === route.name);
    if (dup) throw new ConfigError('name is used by an earlier route', { field: label });
    const shadow = routes.find((r) => shadows(r.matcher, route.matcher));
    if (shadow) {
      throw new ConfigError(`never matches: route "${shadow.name}" (${shadow.matcher.kind} ${shadow.matcher.spec}) takes every path it matches first`, {
        field: label,
      });
    }
    routes.push(route);
  });
  return new RouteTable(Object.freeze(routes));
}
