// GET /api/v1 and /apis/<group>/<version>: metav1.APIResourceList, one entry per
// resource and one per subresource (`pods/status`), sorted by name as kube's
// installer does. Subresource entries have an empty singularName and no hash.
import type { Registry, ResourceType, Verb } from '../registry/index.js';
import { storageVersionHashOf } from './storage-version-hash.js';

export interface APIResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  /** Set on subresources whose kind is of another group version (serviceaccounts/token). */
  group?: string;
  version?: string;
  kind: string;
  verbs: Verb[];
  shortNames?: string[];
  categories?: string[];
  storageVersionHash?: string;
}

export interface APIResourceList {
  kind: 'APIResourceList';
  apiVersion?: 'v1';
  groupVersion: string;
  resources: APIResource[];
}

function entries(t: ResourceType): APIResource[] {
  const main: APIResource = { name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: [...t.verbs] };
  // Go's omitempty: empty lists are left out, not sent as [].
  if (t.shortNames.length) main.shortNames = [...t.shortNames];
  if (t.categories.length) main.categories = [...t.categories];
  // Virtual types (reviews, ComponentStatuses) are never stored, so kube-apiserver publishes no hash for them.
  if (t.servedBy !== 'gateway' && !t.computed) main.storageVersionHash = storageVersionHashOf(t);
  const subs = t.subresources.map((s): APIResource => ({
    name: `${t.plural}/${s.name}`,
    singularName: '',
    namespaced: t.namespaced,
    ...(s.group !== undefined ? { group: s.group, version: s.version ?? t.version } : {}),
    kind: s.kind,
    verbs: [...s.verbs],
  }));
  return [main, ...subs];
}

/** Undefined when the group version is not served. */
export function apiResourceList(registry: Registry, group: string, version: string): APIResourceList | undefined {
  if (!registry.hasGroupVersion(group, version)) return undefined;
  const resources = registry
    .resourcesOf(group, version)
    .flatMap(entries)
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  // kube serves the core list without apiVersion and named-group lists with it.
  return group === ''
    ? { kind: 'APIResourceList', groupVersion: version, resources }
    : { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/${version}`, resources };
}
