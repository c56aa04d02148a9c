// The node agents' static grants (kube's bootstrappolicy NodeRules), for the
// requests the graph does not subdivide, and a matcher for them.
import type { Attributes } from '../types.js';

interface Rule {
  readonly verbs: readonly string[];
  readonly groups: readonly string[];
  /** `resource` or `resource/subresource`. */
  readonly resources: readonly string[];
}

const READ = ['get', 'list', 'watch'];
const rule = (verbs: readonly string[], groups: readonly string[], resources: readonly string[]): Rule => Object.freeze({ verbs, groups, resources });

export const NODE_RULES: readonly Rule[] = Object.freeze([
  // Delegated authentication and authorization checks (non-mutating creates).
  rule(['create'], ['authentication.k8s.io'], ['tokenreviews']),
  rule(['create'], ['authorization.k8s.io'], ['subjectaccessreviews', 'localsubjectaccessreviews']),
  // Service environment variables.
  rule(READ, [''], ['services']),
  // Registering the Node object and reporting status (NodeRestriction limits these to the node's own).
  rule(['create', 'get', 'list', 'watch'], [''], ['nodes']),
  rule(['update', 'patch'], [''], ['nodes/status']),
  rule(['update', 'patch'], [''], ['nodes']),
  rule(['create', 'update', 'patch'], [''], ['events']),
  rule(['create', 'update', 'patch'], ['events.k8s.io'], ['events']),
  rule(READ, [''], ['pods']),
  // Mirror pods (NodeRestriction: only bound to the node itself) and pod status.
  rule(['create', 'delete'], [''], ['pods']),
  rule(['update', 'patch'], [''], ['pods/status']),
  rule(['create'], [''], ['pods/eviction']),
  // Narrowed by the graph before these are consulted.
  rule(READ, [''], ['secrets', 'configmaps']),
  rule(['get'], [''], ['persistentvolumeclaims', 'persistentvolumes']),
  rule(['get'], [''], ['endpoints']),
  // TLS bootstrapping: request a client certificate and watch for it to be signed.
  rule(['create', 'get', 'list', 'watch'], ['certificates.k8s.io'], ['certificatesigningrequests']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['coordination.k8s.io'], ['leases']),
  rule(['get'], ['storage.k8s.io'], ['volumeattachments']),
  rule(['create'], [''], ['serviceaccounts/token']),
  rule(['get', 'update', 'patch'], [''], ['persistentvolumeclaims/status']),
  rule(READ, ['storage.k8s.io'], ['csidrivers']),
  rule(['get', 'create', 'update', 'patch', 'delete'], ['storage.k8s.io'], ['csinodes']),
  rule(READ, ['node.k8s.io'], ['runtimeclasses']),
]);

export function rulesAllow(a: Attributes, rules: readonly Rule[]): boolean {
  if (!a.isResourceRequest) return false;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  return rules.some((r) => r.verbs.includes(a.verb) && r.groups.includes(a.apiGroup) && r.resources.includes(resource));
}
