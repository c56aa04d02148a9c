// Store keys of a resource type: `<group|core>/<plural>/[<namespace>/]<name>`.
import type { ResourceType } from '../../lib/registry/types.js';

export function typePrefix(t: Pick<ResourceType, 'group' | 'plural'>): string {
  return `${t.group || 'core'}/${t.plural}/`;
}

/** The key range of a list: one namespace, all namespaces, or a cluster-scoped type. */
export function listPrefix(t: ResourceType, namespace: string): string {
  return t.namespaced && namespace ? `${typePrefix(t)}${namespace}/` : typePrefix(t);
}

export function objectKey(t: ResourceType, namespace: string, name: string): string {
  return t.namespaced ? `${typePrefix(t)}${namespace}/${name}` : `${typePrefix(t)}${name}`;
}
