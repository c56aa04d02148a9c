// kube-rbac-proxy's configuration file (--config-file, here also
// --resource-attributes), under `authorization:` (or `resourceAttributes:`
// at the top, Gatehouse's older form): the resource the cluster is asked
// about instead of the path (`resourceAttributes`), `rewrites` that fill
// `{{ .Value }}` in those attributes from a query parameter or header, one
// review per value, all of which must allow, and `static` rules that allow
// without asking the cluster. Unknown fields and templates other than
// `{{ .Value }}` are refused, naming the field. Parsed into a frozen value;
// the sidecar reloads the file on change (a bad file keeps the previous one).
import { parse as parseYaml } from 'yaml';
import { ownValue } from '../../lib/api/own.js';
import { ConfigError } from '../../lib/config/error.js';

export const RESOURCE_FIELDS = ['namespace', 'apiGroup', 'apiVersion', 'resource', 'subresource', 'name'] as const;
export type ResourceField = (typeof RESOURCE_FIELDS)[number];

/** A value with `{{ .Value }}` places: the literal parts around them (one part: no place). */
export type ValueTemplate = readonly string[];

export interface StaticRule {
  readonly user: { readonly name: string; readonly groups: readonly string[] };
  readonly verb: string;
  readonly namespace: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
  readonly resourceRequest: boolean;
  readonly path: string;
}

export interface ProxyConfig {
  readonly resourceAttributes: Readonly<Record<ResourceField, ValueTemplate>> | undefined;
  /** Where rewrite values come from; undefined = no rewrites (the attributes are fixed). */
  readonly rewrites: { readonly query: string | undefined; readonly header: string | undefined } | undefined;
  readonly static: readonly StaticRule[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function only(o: Obj, known: readonly string[], at: string): void {
  const extra = Object.keys(o).filter((k) => !known.includes(k));
  if (extra.length > 0) throw new ConfigError(`unknown field ${at}${extra[0]} (known: ${known.join(', ')})`);
}

function str(o: Obj, k: string, at: string): string {
  const v = ownValue(o, k) ?? '';
  if (typeof v !== 'string') throw new ConfigError(`${at}${k} must be a string`);
  return v;
}

const PLACE = /\{\{\s*\.Value\s*\}\}/;

function template(v: string, at: string, rewrites: boolean): ValueTemplate {
  const parts = v.split(new RegExp(PLACE, 'g'));
  if (parts.length > 1 && !rewrites) throw new ConfigError(`${at}: "{{ .Value }}" needs authorization.rewrites`);
  if (parts.some((p) => p.includes('{{'))) throw new ConfigError(`${at}: only "{{ .Value }}" may be templated`);
  return Object.freeze(parts);
}

function rewritesOf(raw: unknown): ProxyConfig['rewrites'] {
  if (raw === undefined) return undefined;
  if (!isObj(raw)) throw new ConfigError('authorization.rewrites must be a map');
  only(raw, ['byQueryParameter', 'byHttpHeader'], 'authorization.rewrites.');
  const nameOf = (k: string): string | undefined => {
    const v = ownValue(raw, k);
    if (v === undefined) return undefined;
    if (!isObj(v)) throw new ConfigError(`authorization.rewrites.${k} must be a map`);
    only(v, ['name'], `authorization.rewrites.${k}.`);
    const n = str(v, 'name', `authorization.rewrites.${k}.`);
    return n === '' ? undefined : n;
  };
  const query = nameOf('byQueryParameter');
  const header = nameOf('byHttpHeader')?.toLowerCase();
  if (query === undefined && header === undefined) throw new ConfigError('authorization.rewrites names no byQueryParameter or byHttpHeader');
  return Object.freeze({ query, header });
}

function staticOf(raw: unknown): StaticRule[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw)) throw new ConfigError('authorization.static must be a list');
  return raw.map((r, i) => {
    const at = `authorization.static[${i}].`;
    if (!isObj(r)) throw new ConfigError(`${at.slice(0, -1)} must be a map`);
    only(r, ['user', 'verb', 'namespace', 'apiGroup', 'resource', 'subresource', 'name', 'resourceRequest', 'path'], at);
    const u = ownValue(r, 'user') ?? {};
    if (!isObj(u)) throw new ConfigError(`${at}user must be a map`);
    only(u, ['name', 'groups'], `${at}user.`);
    const groups = ownValue(u, 'groups') ?? [];
    if (!Array.isArray(groups) || groups.some((g) => typeof g !== 'string')) throw new ConfigError(`${at}user.groups must be a list of strings`);
    const rr = ownValue(r, 'resourceRequest') ?? false;
    if (typeof rr !== 'boolean') throw new ConfigError(`${at}resourceRequest must be true or false`);
    const path = str(r, 'path', at);
    // kube-rbac-proxy's rule: a resource request has no path, a non-resource one has one.
    if (rr === (path !== ''))
      throw new ConfigError(
        `${at.slice(0, -1)}: ${rr ? 'a resource request must not have a path' : 'a non-resource rule needs a path (or resourceRequest: true)'}`,
      );
    return Object.freeze({
      user: Object.freeze({ name: str(u, 'name', `${at}user.`), groups: Object.freeze([...(groups as string[])]) }),
      verb: str(r, 'verb', at),
      namespace: str(r, 'namespace', at),
      apiGroup: str(r, 'apiGroup', at),
      resource: str(r, 'resource', at),
      subresource: str(r, 'subresource', at),
      name: str(r, 'name', at),
      resourceRequest: rr,
      path,
    });
  });
}

/** Parses the file's text; throws a ConfigError naming the field. */
export function parseProxyConfig(text: string): ProxyConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ConfigError(`not YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (!isObj(doc)) throw new ConfigError('must be a map with authorization (or resourceAttributes at the top)');
  only(doc, ['authorization', 'resourceAttributes'], '');
  const authz = ownValue(doc, 'authorization') ?? { resourceAttributes: ownValue(doc, 'resourceAttributes') };
  if (!isObj(authz)) throw new ConfigError('authorization must be a map');
  only(authz, ['resourceAttributes', 'rewrites', 'static'], 'authorization.');
  const rewrites = rewritesOf(ownValue(authz, 'rewrites'));
  const ra = ownValue(authz, 'resourceAttributes');
  let resourceAttributes: ProxyConfig['resourceAttributes'];
  if (ra !== undefined && ra !== null) {
    if (!isObj(ra)) throw new ConfigError('resourceAttributes must be a map');
    only(ra, RESOURCE_FIELDS, 'resourceAttributes.');
    const out = {} as Record<ResourceField, ValueTemplate>;
    for (const f of RESOURCE_FIELDS) out[f] = template(str(ra, f, 'resourceAttributes.'), `resourceAttributes.${f}`, rewrites !== undefined);
    if (out.resource.join('') === '') throw new ConfigError('resourceAttributes.resource is required');
    resourceAttributes = Object.freeze(out);
  }
  if (rewrites && !resourceAttributes) throw new ConfigError('authorization.rewrites needs authorization.resourceAttributes to fill');
  return Object.freeze({ resourceAttributes, rewrites, static: Object.freeze(staticOf(ownValue(authz, 'static'))) });
}

/** A template with a value in each place. */
export function fill(t: ValueTemplate, value: string): string {
  return t.length === 1 ? t[0]! : t.join(value);
}
