// NodeRestriction (--enable-admission-plugins=NodeRestriction), after kube's
// plugin/pkg/admission/noderestriction: a node agent (system:node:<name> in
// system:nodes) may write only its own Node object — not its taints, owner
// references or restricted labels — create only mirror pods bound to itself
// that reference no secrets, config maps, claims or service accounts, update
// the status of and delete only pods bound to itself, and touch only its own
// lease. Users who are not node agents are not restricted here. It judges the
// object the store will keep (a PATCH or an apply by the object it produced)
// against the stored one.
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { forbidden, type GroupResource } from '../../../lib/api/status.js';
import { podRefs } from '../../../lib/node/refs.js';
import { nodeIdentity } from '../../../lib/node/identity.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';
const NODE_LEASE_NAMESPACE = 'kube-node-lease';

/** Labels a kubelet may set on its Node inside the kubernetes.io / k8s.io namespaces (kubeletapis.IsKubeletLabel). */
const KUBELET_LABELS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
]);
const KUBELET_LABEL_NAMESPACES = ['kubelet.kubernetes.io', 'node.kubernetes.io'];
const RESTRICTED_NAMESPACE = 'node-restriction.kubernetes.io';

function labelNamespace(label: string): string {
  const slash = label.indexOf('/');
  return slash < 0 ? '' : label.slice(0, slash);
}

const inNamespace = (ns: string, base: string): boolean => ns === base || ns.endsWith(`.${base}`);

function isKubeletLabel(label: string): boolean {
  if (KUBELET_LABELS.has(label)) return true;
  const ns = labelNamespace(label);
  return KUBELET_LABEL_NAMESPACES.some((b) => inNamespace(ns, b));
}

/** Labels of `next` that are new or changed against `prev`, or removed from it. */
function modifiedLabels(next: Record<string, string>, prev: Record<string, string>): string[] {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(next)) if (prev[k] !== v) out.add(k);
  for (const k of Object.keys(prev)) if (!Object.hasOwn(next, k)) out.add(k);
  return [...out];
}

function forbiddenLabels(labels: readonly string[]): string[] {
  return labels
    .filter((l) => {
      const ns = labelNamespace(l);
      if (inNamespace(ns, RESTRICTED_NAMESPACE)) return true;
      return (inNamespace(ns, 'kubernetes.io') || inNamespace(ns, 'k8s.io')) && !isKubeletLabel(l);
    })
    .sort();
}

const labelsOf = (o: KObject | undefined): Record<string, string> => (isPlainObject(o?.metadata?.labels) ? o.metadata.labels : {});
const canon = (v: unknown): string => JSON.stringify(v ?? null);

type Refuse = (name: string, why: string) => never;

function pods(node: string, a: AdmissionAttributes, refuse: Refuse): void {
  if (a.subresource === '' && a.operation === 'CREATE') {
    const pod = a.object!;
    const name = a.name;
    if (!Object.hasOwn(pod.metadata.annotations ?? {}, MIRROR_POD_ANNOTATION)) {
      refuse(name, `pod does not have "${MIRROR_POD_ANNOTATION}" annotation, node "${node}" can only create mirror pods`);
    }
    const spec = isPlainObject(pod['spec']) ? pod['spec'] : {};
    if (spec['nodeName'] !== node) refuse(name, `node "${node}" can only create pods with spec.nodeName set to itself`);
    const owners = pod.metadata.ownerReferences ?? [];
    if (owners.length > 1) refuse(name, `node "${node}" can only create pods with a single owner reference set to itself`);
    if (owners.length === 1) {
      const o = owners[0]!;
      if (o.apiVersion !== 'v1' || o.kind !== 'Node' || o.name !== node)
        refuse(name, `node "${node}" can only create pods with an owner reference set to itself`);
    }
    if (typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '')
      refuse(name, `node "${node}" can not create pods that reference a service account`);
    const refs = podRefs(pod);
    if (refs.secrets.length > 0) refuse(name, `node "${node}" can not create pods that reference secrets`);
    if (refs.configmaps.length > 0) refuse(name, `node "${node}" can not create pods that reference configmaps`);
    if (refs.pvcs.length > 0) refuse(name, `node "${node}" can not create pods that reference persistentvolumeclaims`);
    return;
  }
  if ((a.subresource === '' && a.operation === 'DELETE') || (a.subresource === 'status' && a.operation === 'UPDATE')) {
    const bound = (a.oldObject?.['spec'] as { nodeName?: unknown } | undefined)?.nodeName;
    if (bound !== node) {
      refuse(
        a.name,
        a.operation === 'DELETE'
          ? `node "${node}" can only delete pods with spec.nodeName set to itself`
          : `node "${node}" can only update pod status for pods with spec.nodeName set to itself`,
      );
    }
    return;
  }
  if (a.subresource === '' || a.subresource === 'status')
    refuse(a.name, `unexpected operation "${a.operation}", node "${node}" can only create and delete mirror pods`);
}

function nodes(node: string, a: AdmissionAttributes, refuse: Refuse): void {
  if (a.operation === 'DELETE') refuse(a.name, `node "${node}" is not allowed to delete nodes`);
  if (a.operation === 'CREATE') {
    const obj = a.object!;
    if (a.name !== node) refuse(a.name, `node "${node}" is not allowed to modify node "${a.name}"`);
    const bad = forbiddenLabels(modifiedLabels(labelsOf(obj), {}));
    if (bad.length > 0) refuse(a.name, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
    return;
  }
  if (a.name !== node) refuse(a.name, `node "${node}" is not allowed to modify node "${a.name}"`);
  if (a.operation !== 'UPDATE') return;
  const obj = a.object!;
  const old = a.oldObject!;
  if (canon(obj.metadata.ownerReferences) !== canon(old.metadata.ownerReferences)) refuse(a.name, `node "${node}" is not allowed to modify ownerReferences`);
  if (a.subresource === '') {
    const bad = forbiddenLabels(modifiedLabels(labelsOf(obj), labelsOf(old)));
    if (bad.length > 0) refuse(a.name, `is not allowed to modify labels: ${bad.join(', ')}`);
    const taints = (o: KObject): unknown => (isPlainObject(o['spec']) ? o['spec']['taints'] : undefined);
    if (canon(taints(obj)) !== canon(taints(old))) refuse(a.name, `node "${node}" is not allowed to modify taints`);
  }
}

function leases(a: AdmissionAttributes, node: string, refuse: Refuse): void {
  if (a.namespace !== NODE_LEASE_NAMESPACE) refuse(a.name, `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
  if (a.name !== node) refuse(a.name, 'can only access node lease with the same name as the requesting node');
}

export const nodeRestriction: ValidatingPlugin = {
  name: 'NodeRestriction',
  validate(a) {
    const node = nodeIdentity(a.user);
    if (node === undefined) return;
    const gr: GroupResource = { group: a.resource.group, resource: a.resource.resource };
    const refuse: Refuse = (name, why) => {
      throw forbidden(gr, name, why);
    };
    if (node === '') refuse(a.name, `could not determine node from user "${a.user.username}"`);
    if (gr.group === '' && gr.resource === 'pods') return pods(node, a, refuse);
    if (gr.group === '' && gr.resource === 'nodes') return nodes(node, a, refuse);
    if (gr.group === 'coordination.k8s.io' && gr.resource === 'leases') return leases(a, node, refuse);
  },
};
