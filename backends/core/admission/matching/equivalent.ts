// matchPolicy Equivalent: a request also matches a rule written for another
// version of the same resource (kube's EquivalentResourceMapper). Gatehouse
// serves every version of a group from one storage, so the equivalents of a
// resource are its other served versions in the same group (the versions of a
// CustomResourceDefinition, in kube's version order); a subresource counts
// only where that version serves it too.
import type { Registry } from '../../../../lib/registry/index.js';
import { subresourceOf } from '../../../../lib/registry/index.js';
import type { ResourceType } from '../../../../lib/registry/types.js';
import type { GroupVersionKind, GroupVersionResource } from '../types.js';

export interface Equivalent {
  readonly resource: GroupVersionResource;
  readonly kind: GroupVersionKind;
  readonly type: ResourceType;
}

/** The other versions of `group`/`resource` (with `subresource` when given), most preferred first. */
export function equivalentResources(registry: Registry, gvr: GroupVersionResource, subresource: string): Equivalent[] {
  const out: Equivalent[] = [];
  const versions = gvr.group === '' ? registry.coreVersions() : (registry.group(gvr.group)?.versions ?? []);
  for (const version of versions) {
    if (version === gvr.version) continue;
    const t = registry.lookup(gvr.group, version, gvr.resource);
    if (!t) continue;
    let kind: GroupVersionKind = { group: t.group, version: t.version, kind: t.kind };
    if (subresource) {
      const s = subresourceOf(t, subresource);
      if (!s) continue;
      kind = { group: s.group ?? t.group, version: s.version ?? t.version, kind: s.kind };
    }
    out.push({ resource: { group: gvr.group, version, resource: gvr.resource }, kind, type: t });
  }
  return out;
}
