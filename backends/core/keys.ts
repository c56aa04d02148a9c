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
  if (t !== lastType || namespace !== lastNamespace) {
    lastPrefix = t.namespaced ? `${typePrefix(t)}${namespace}/` : typePrefix(t);
    lastType = t;
    lastNamespace = namespace;
  }
  return lastPrefix + name;
}

// The last key's type and namespace and the prefix they make: writes and reads come one type and namespace
// after another, and the prefix kept is built and flattened once (a key per call: one concatenation, not three).
let lastType: ResourceType | undefined;
let lastNamespace = '';
let lastPrefix = '';
