// Merged discovery: /apis, /apis/<group> and aggregated discovery
// (apidiscovery.k8s.io/v2 and v2beta1) list the local groups and those of
// remote APIServices together, in kube-aggregator's order — APIServices by
// groupPriorityMinimum (highest first) then name; a group where its first
// APIService falls; versions by versionPriority (highest first) then
// kube-aware version order. Remote resources come from each backend's own
// discovery (aggregated /apis, else the legacy /apis/<g>/<v> list), fetched
// when an APIService becomes available or changes and every `refreshMs`,
// and cached; an unavailable APIService keeps its last resources, marked
// Stale. Documents are rebuilt on change, never per request.
import type { APIGroupDiscovery, APIResourceDiscovery, APIVersionDiscovery } from '../../lib/discovery/aggregated.js';
import { aggregatedContentType } from '../../lib/discovery/index.js';
import { JSON_TYPE, makeDocument } from '../../lib/discovery/document.js';
import { compareVersions, DEFAULT_GROUP_PRIORITY, groupPriority } from '../../lib/registry/priority.js';
import type { Registry } from '../../lib/registry/index.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import type { DiscoverySource, Document } from '../local/router.js';
import { isAvailable, type ApiServiceInfo } from './apiservice.js';
import type { ApiServiceProxy } from './proxy.js';
import type { ServiceResolver } from './resolver.js';

/** A local group version with its APIService priorities (the ones autoregister writes). */
export interface LocalGroupVersion {
  readonly group: string;
  readonly version: string;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
}

const STABILITY_PRIORITY: Readonly<Record<string, number>> = { ga: 15, beta: 9, alpha: 1 };
/** kube-aggregator's crdregistration controller: every CRD group version at versionPriority 100 (ordered by kube-aware version then). */
export const CRD_VERSION_PRIORITY = 100;

/** Every group version the registry serves, with kube's APIService priorities (core: v1. at 18000; CRD groups 1000/100). */
export function localGroupVersions(registry: Registry): LocalGroupVersion[] {
  const vp = (v: string) => STABILITY_PRIORITY[/alpha/.test(v) ? 'alpha' : /beta/.test(v) ? 'beta' : 'ga']!;
  return [
    ...registry.coreVersions().map((v) => ({ group: '', version: v, groupPriorityMinimum: 18000, versionPriority: 1 })),
    ...registry.groups().flatMap((g) =>
      g.versions.map((v) => {
        const gpm = groupPriority(g.name);
        return { group: g.name, version: v, groupPriorityMinimum: gpm, versionPriority: gpm === DEFAULT_GROUP_PRIORITY ? CRD_VERSION_PRIORITY : vp(v) };
      }),
    ),
  ];
}

interface Entry {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly gpm: number;
  readonly vp: number;
  readonly remote?: ApiServiceInfo;
}

const PROBE_HEADERS = { 'X-Remote-User': 'system:kube-aggregator', 'X-Remote-Group': ['system:masters', 'system:authenticated'] };
const AGGREGATED_ACCEPT =
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json';

/** kube-aggregator's sort: ByGroupPriorityMinimum, then groups in first-appearance order, versions ByVersionPriority. */
export function orderGroups(entries: readonly Entry[]): Array<{ group: string; versions: Entry[] }> {
  const sorted = [...entries].sort((a, b) => b.gpm - a.gpm || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const groups = new Map<string, Entry[]>();
  for (const e of sorted) {
    const list = groups.get(e.group) ?? [];
    if (!list.some((x) => x.version === e.version)) list.push(e);
    groups.set(e.group, list);
  }
  return [...groups].map(([group, versions]) => ({ group, versions: versions.sort((a, b) => b.vp - a.vp || compareVersions(a.version, b.version)) }));
}

export interface MergedDiscoveryOptions {
  readonly local: DiscoverySource;
  /** The registry in force: its group versions are listed as local (documents rebuilt when another is in force). */
  readonly registry: RegistrySource;
  readonly proxies: () => Iterable<ApiServiceProxy>;
  readonly resolver: ServiceResolver;
  readonly log: (msg: string) => void;
  readonly refreshMs?: number;
  readonly fetchTimeoutMs?: number;
}

export class MergedDiscovery implements DiscoverySource {
  readonly version: Document;
  #localAggregated = new Map<string, APIVersionDiscovery>();
  /** The registry the documents were built from. */
  #builtFrom: Registry | undefined;
  readonly #cache = new Map<string, { key: string; versionDiscovery: APIVersionDiscovery }>();
  #apis!: Document;
  #groups = new Map<string, Document>();
  #aggregated = new Map<string, Document>();
  #dirty = false;
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: MergedDiscoveryOptions) {
    this.version = opts.local.version;
    this.#rebuild();
  }

  start(): void {
    this.#timer = setInterval(() => this.refreshAll(), this.opts.refreshMs ?? 60_000);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  /** An APIService was added, changed or removed: documents are rebuilt (coalesced) and its discovery fetched when available. */
  changed(p: ApiServiceProxy | undefined): void {
    if (p && isAvailable(p.info)) void this.fetch(p);
    if (!p) for (const name of [...this.#cache.keys()]) if (![...this.opts.proxies()].some((x) => x.info.name === name)) this.#cache.delete(name);
    this.#schedule();
  }

  refreshAll(): void {
    for (const p of this.opts.proxies()) if (isAvailable(p.info)) void this.fetch(p);
  }

  #schedule(): void {
    if (this.#dirty) return;
    this.#dirty = true;
    queueMicrotask(() => {
      this.#dirty = false;
      this.#rebuild();
    });
  }

  /** Fetches one backend's resources for its group version. */
  async fetch(p: ApiServiceProxy): Promise<void> {
    const { info } = p;
    const target = info.service ? this.opts.resolver.pick(info.service) : undefined;
    if (!target || 'reason' in target) return;
    const timeout = this.opts.fetchTimeoutMs ?? 5000;
    try {
      let found: APIVersionDiscovery | undefined;
      const agg = await p.transport.get(target, '/apis', { ...PROBE_HEADERS, Accept: AGGREGATED_ACCEPT }, timeout);
      if (agg.status === 200 && agg.contentType.includes('as=APIGroupDiscoveryList')) {
        const list = JSON.parse(agg.body.toString('utf8')) as { items?: APIGroupDiscovery[] };
        found = list.items?.find((g) => g.metadata.name === info.group)?.versions.find((v) => v.version === info.version);
      }
      if (!found) {
        const legacy = await p.transport.get(target, `/apis/${info.group}/${info.version}`, { ...PROBE_HEADERS, Accept: 'application/json' }, timeout);
        if (legacy.status !== 200) throw new Error(`GET /apis/${info.group}/${info.version}: ${legacy.status}`);
        found = fromResourceList(info, JSON.parse(legacy.body.toString('utf8')) as ResourceList);
      }
      this.#cache.set(info.name, { key: info.transportKey, versionDiscovery: { ...found, freshness: 'Current' } });
      this.#schedule();
    } catch (err) {
      this.opts.log(`aggregation: discovery of APIService ${info.name} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  #rebuild(): void {
    const registry = this.opts.registry.current;
    this.#builtFrom = registry;
    const localAggregated = new Map<string, APIVersionDiscovery>();
    const agg = this.opts.local.document('/apis', 'v2');
    const items0 = agg ? (JSON.parse(agg.body) as { items: APIGroupDiscovery[] }).items : [];
    for (const g of items0) for (const v of g.versions) localAggregated.set(`${g.metadata.name}/${v.version}`, v);
    this.#localAggregated = localAggregated;
    const entries: Entry[] = localGroupVersions(registry)
      .filter((l) => l.group !== '')
      .map((l) => ({
        name: `${l.version}.${l.group}`,
        group: l.group,
        version: l.version,
        gpm: l.groupPriorityMinimum,
        vp: l.versionPriority,
      }));
    const remote = [...this.opts.proxies()].map((p) => p.info).filter((i) => i.group !== '');
    const remoteNames = new Set(remote.map((r) => r.name));
    const merged: Entry[] = [
      ...entries.filter((e) => !remoteNames.has(e.name)),
      ...remote.map((r) => ({ name: r.name, group: r.group, version: r.version, gpm: r.groupPriorityMinimum, vp: r.versionPriority, remote: r })),
    ];
    const ordered = orderGroups(merged);
    const gv = (group: string, version: string) => ({ groupVersion: `${group}/${version}`, version });
    const groupDocs = new Map<string, Document>();
    const apiGroups = ordered.map(({ group, versions }) => {
      const g = { name: group, versions: versions.map((v) => gv(group, v.version)), preferredVersion: gv(group, versions[0]!.version) };
      groupDocs.set(group, makeDocument({ kind: 'APIGroup', apiVersion: 'v1', ...g }, JSON_TYPE, 'encoded'));
      return g;
    });
    this.#apis = makeDocument({ kind: 'APIGroupList', apiVersion: 'v1', groups: apiGroups }, JSON_TYPE, 'encoded');
    this.#groups = groupDocs;
    const items: APIGroupDiscovery[] = ordered.map(({ group, versions }) => ({
      metadata: { name: group },
      versions: versions.map((v): APIVersionDiscovery => {
        if (!v.remote) return this.#localAggregated.get(`${group}/${v.version}`) ?? { version: v.version, resources: [], freshness: 'Current' };
        const cached = this.#cache.get(v.name)?.versionDiscovery;
        const fresh = isAvailable(v.remote) && cached !== undefined;
        return { version: v.version, resources: cached?.resources ?? [], freshness: fresh ? 'Current' : 'Stale' };
      }),
    }));
    const aggregated = new Map<string, Document>();
    for (const dv of ['v2', 'v2beta1'] as const) {
      aggregated.set(
        dv,
        makeDocument({ kind: 'APIGroupDiscoveryList', apiVersion: `apidiscovery.k8s.io/${dv}`, metadata: {}, items }, aggregatedContentType(dv), 'encoded'),
      );
    }
    this.#aggregated = aggregated;
  }

  document(path: string, aggregated?: 'v2' | 'v2beta1'): Document | undefined {
    // Custom resources came or went: one reference compare per request, a rebuild per registry swap.
    if (this.opts.registry.current !== this.#builtFrom) this.#rebuild();
    const parts = path.split('/').filter(Boolean);
    if (parts[0] !== 'apis') return this.opts.local.document(path, aggregated);
    if (parts.length === 1) return aggregated ? this.#aggregated.get(aggregated) : this.#apis;
    if (parts.length === 2) return this.#groups.get(parts[1]!);
    return this.opts.local.document(path, aggregated);
  }
}

interface ResourceList {
  resources?: Array<{
    name: string;
    singularName?: string;
    namespaced?: boolean;
    kind: string;
    verbs?: string[];
    shortNames?: string[];
    categories?: string[];
    group?: string;
    version?: string;
  }>;
}

/** A legacy APIResourceList as one aggregated version entry (resources, with `x/y` entries as subresources). */
function fromResourceList(info: ApiServiceInfo, list: ResourceList): APIVersionDiscovery {
  const all = list.resources ?? [];
  const resources: APIResourceDiscovery[] = all
    .filter((r) => !r.name.includes('/'))
    .map((r) => {
      const d: APIResourceDiscovery = {
        resource: r.name,
        responseKind: { group: info.group, version: info.version, kind: r.kind },
        scope: r.namespaced ? 'Namespaced' : 'Cluster',
        singularResource: r.singularName || r.kind.toLowerCase(),
        verbs: (r.verbs ?? []) as APIResourceDiscovery['verbs'],
      };
      if (r.shortNames?.length) d.shortNames = r.shortNames;
      if (r.categories?.length) d.categories = r.categories;
      const subs = all.filter((s) => s.name.startsWith(`${r.name}/`));
      if (subs.length) {
        d.subresources = subs.map((s) => ({
          subresource: s.name.slice(r.name.length + 1),
          responseKind: { group: s.group ?? info.group, version: s.version ?? info.version, kind: s.kind },
          verbs: (s.verbs ?? []) as APIResourceDiscovery['verbs'],
        }));
      }
      return d;
    });
  return { version: info.version, resources, freshness: 'Current' };
}
