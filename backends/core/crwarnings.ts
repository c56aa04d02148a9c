// The warnings kube's custom resource strategy gives a write that passed
// validation (WarningsOnCreate, WarningsOnUpdate): each finalizer the write
// adds whose name is not domain-qualified. Built-in types have none here.
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';

export function customResourceWarnings(t: ResourceType, obj: KObject, old?: KObject): string[] {
  if (t.crd === undefined) return [];
  const added = obj.metadata.finalizers;
  if (!added || added.length === 0) return [];
  const before = new Set(old?.metadata.finalizers ?? []);
  // kube walks the added names as a sorted set.
  return [...new Set(added)]
    .filter((f) => !before.has(f) && !f.includes('/'))
    .sort()
    .map(
      (f) =>
        `metadata.finalizers: ${JSON.stringify(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
    );
}
