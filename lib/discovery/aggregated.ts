// Aggregated discovery (apidiscovery.k8s.io/v2, KEP-3352): every group,
// version and resource in one APIGroupDiscoveryList, so kubectl needs two
// requests (/api and /apis) instead of one per group version. The shapes are
// those client-go's aggregated discovery decoder reads; v2beta1 has the same
// shape and is still asked for by kubectl before 1.30.
import type { GroupVersions, Registry, ResourceType, Verb } from '../registry/index.js';

export type DiscoveryVersion = 'v2' | 'v2beta1';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface APISubresourceDiscovery {
  subresource: string;
  responseKind: GroupVersionKind;
  verbs: Verb[];
}

export interface APIResourceDiscovery {
  resource: string;
  responseKind: GroupVersionKind;
  scope: 'Namespaced' | 'Cluster';
  singularResource: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  subresources?: APISubresourceDiscovery[];
}

export interface APIVersionDiscovery {
  version: string;
  resources: APIResourceDiscovery[];
  freshness: 'Current' | 'Stale';
}

export interface APIGroupDiscovery {
  metadata: { name?: string };
  versions: APIVersionDiscovery[];
}

export interface APIGroupDiscoveryList {
  kind: 'APIGroupDiscoveryList';
  apiVersion: `apidiscovery.k8s.io/${DiscoveryVersion}`;
  metadata: Record<string, never>;
  items: APIGroupDiscovery[];
}

export function aggregatedContentType(v: DiscoveryVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;
}

function resource(t: ResourceType): APIResourceDiscovery {
  const r: APIResourceDiscovery = {
    resource: t.plural,
    responseKind: { group: t.group, version: t.version, kind: t.kind },
    scope: t.namespaced ? 'Namespaced' : 'Cluster',
    singularResource: t.singular,
    verbs: [...t.verbs],
  };
  if (t.shortNames.length) r.shortNames = [...t.shortNames];
  if (t.categories.length) r.categories = [...t.categories];
  if (t.subresources.length) {
    r.subresources = t.subresources.map((s) => ({
      subresource: s.name,
      responseKind: { group: s.group ?? t.group, version: s.version ?? t.version, kind: s.kind },
      verbs: [...s.verbs],
    }));
  }
  return r;
}

function versions(registry: Registry, group: string, vs: readonly string[]): APIVersionDiscovery[] {
  // Local types are always current; Stale is for aggregated servers that stopped answering.
  return vs.map((v) => ({ version: v, resources: registry.resourcesOf(group, v).map(resource), freshness: 'Current' }));
}

function list(items: APIGroupDiscovery[], v: DiscoveryVersion): APIGroupDiscoveryList {
  return { kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${v}`, metadata: {}, items };
}

/** The document for /api: the core group only, which has no name. */
export function aggregatedCore(registry: Registry, v: DiscoveryVersion = 'v2'): APIGroupDiscoveryList {
  const core = registry.coreVersions();
  return list(core.length ? [{ metadata: {}, versions: versions(registry, '', core) }] : [], v);
}

/** The document for /apis: named groups in /apis order, versions most preferred first. */
export function aggregatedGroups(registry: Registry, v: DiscoveryVersion = 'v2'): APIGroupDiscoveryList {
  return list(
    registry.groups().map((g: GroupVersions) => ({ metadata: { name: g.name }, versions: versions(registry, g.name, g.versions) })),
    v,
  );
}

/**
 * The aggregated version an Accept header asks for, or undefined for the legacy
 * documents. Entries are taken in order, as kube's negotiation does when no
 * q-values differ; protobuf entries are skipped because Gatehouse serves JSON.
 */
export function negotiateAggregated(accept: string | undefined): DiscoveryVersion | undefined {
  if (!accept) return undefined;
  for (const entry of accept.split(',')) {
    const [type, ...params] = entry.split(';').map((s) => s.trim());
    if (type !== 'application/json') continue;
    const p = new Map(
      params.map((kv) => {
        const i = kv.indexOf('=');
        return [kv.slice(0, i).trim(), kv.slice(i + 1).trim()] as const;
      }),
    );
    if (p.get('q') === '0') continue;
    if (!p.has('g') && !p.has('v') && !p.has('as')) return undefined; // plain JSON first: the legacy document
    if (p.get('g') !== 'apidiscovery.k8s.io' || p.get('as') !== 'APIGroupDiscoveryList') continue;
    const v = p.get('v');
    if (v === 'v2' || v === 'v2beta1') return v;
  }
  return undefined;
}
