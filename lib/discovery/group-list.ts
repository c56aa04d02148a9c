// GET /apis (APIGroupList) and GET /apis/<group> (APIGroup), in kube's group order.
import type { GroupVersions, Registry } from '../registry/index.js';

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

export interface APIGroup {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion: GroupVersionForDiscovery;
}

const gv = (group: string, version: string): GroupVersionForDiscovery => ({ groupVersion: `${group}/${version}`, version });

function group(g: GroupVersions): APIGroup {
  return { name: g.name, versions: g.versions.map((v) => gv(g.name, v)), preferredVersion: gv(g.name, g.preferredVersion) };
}

export function apiGroupList(registry: Registry): { kind: 'APIGroupList'; apiVersion: 'v1'; groups: APIGroup[] } {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: registry.groups().map(group) };
}

export function apiGroup(g: GroupVersions): APIGroup & { kind: 'APIGroup'; apiVersion: 'v1' } {
  return { kind: 'APIGroup', apiVersion: 'v1', ...group(g) };
}
