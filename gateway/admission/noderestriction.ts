// NodeRestriction (--enable-admission-plugins=NodeRestriction), after kube's
// plugin/pkg/admission/noderestriction: a node agent (system:node:<name> in
// system:nodes) may write only its own Node object — not its taints, owner
// references or restricted labels — create only mirror pods bound to itself
// that reference no secrets, config maps, claims or service accounts, update
// the status of and delete only pods bound to itself, and touch only its own
// lease. Users who are not node agents are not restricted here.
import { isPlainObject, type KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { forbidden, type GroupResource } from '../../lib/api/status.js';
import { decodeObject, readBody } from '../../lib/http/body.js';
import { negotiateInput } from '../../lib/http/negotiate.js';
import { podRefs } from '../authz/node/refs.js';
import { nodeIdentity } from '../authz/node/identity.js';
import type { AdmissionPlugin } from '../pipeline/admission.js';
import type { RequestContext } from '../pipeline/context.js';
import { objectAfterPatch } from './patched.js';
import type { RegistrySource } from '../../lib/registry/live.js';

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

export interface NodeRestrictionOptions {
  readonly objects: ObjectSource;
  readonly registry: RegistrySource;
  readonly bodyLimit: number;
  /** The CBORServingAndStorage gate: application/cbor bodies are read (off: the 415 of negotiateInput). */
  readonly cbor?: boolean;
}

export function nodeRestriction(opts: NodeRestrictionOptions): AdmissionPlugin {
  const body = async (ctx: RequestContext): Promise<KObject> => {
    ctx.body ??= await readBody(ctx.req, opts.bodyLimit);
    const o = decodeObject(ctx.body, negotiateInput(ctx.req.headers['content-type'], opts.cbor));
    return { ...o, metadata: isPlainObject(o['metadata']) ? o['metadata'] : {} } as KObject;
  };

  const pods = async (node: string, ctx: RequestContext, refuse: (name: string, why: string) => never): Promise<void> => {
    const i = ctx.info;
    if (i.subresource === '' && i.verb === 'create') {
      const pod = await body(ctx);
      const name = i.name || (pod.metadata.name ?? '');
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
    if ((i.subresource === '' && i.verb === 'delete') || (i.subresource === 'status' && (i.verb === 'update' || i.verb === 'patch'))) {
      const existing = await opts.objects.get('', 'pods', i.namespace, i.name);
      // A missing pod is the backend's 404 to give.
      if (!existing) return;
      const bound = (existing['spec'] as { nodeName?: unknown } | undefined)?.nodeName;
      if (bound !== node) {
        refuse(
          i.name,
          i.verb === 'delete'
            ? `node "${node}" can only delete pods with spec.nodeName set to itself`
            : `node "${node}" can only update pod status for pods with spec.nodeName set to itself`,
        );
      }
      return;
    }
    if (i.subresource === '' || i.subresource === 'status')
      refuse(i.name, `unexpected operation "${i.verb}", node "${node}" can only create and delete mirror pods`);
  };

  const nodes = async (node: string, ctx: RequestContext, refuse: (name: string, why: string) => never): Promise<void> => {
    const i = ctx.info;
    if (i.verb === 'delete' || i.verb === 'deletecollection') refuse(i.name, `node "${node}" is not allowed to delete nodes`);
    if (i.verb === 'create') {
      const obj = await body(ctx);
      const name = obj.metadata.name ?? '';
      if (name !== node) refuse(name, `node "${node}" is not allowed to modify node "${name}"`);
      const bad = forbiddenLabels(modifiedLabels(labelsOf(obj), {}));
      if (bad.length > 0) refuse(name, `node "${node}" is not allowed to set the following labels: ${bad.join(', ')}`);
      return;
    }
    if (i.name !== node) refuse(i.name, `node "${node}" is not allowed to modify node "${i.name}"`);
    if (i.verb !== 'update' && i.verb !== 'patch') return;
    // A PATCH is judged by the object it would produce, like the update it amounts to.
    const obj = i.verb === 'patch' ? await objectAfterPatch(ctx, opts.objects, opts.registry, opts.bodyLimit) : await body(ctx);
    const old = await opts.objects.get('', 'nodes', '', i.name);
    if (!obj || !old) return;
    if (canon(obj.metadata.ownerReferences) !== canon(old.metadata.ownerReferences)) refuse(i.name, `node "${node}" is not allowed to modify ownerReferences`);
    if (i.subresource === '') {
      const bad = forbiddenLabels(modifiedLabels(labelsOf(obj), labelsOf(old)));
      if (bad.length > 0) refuse(i.name, `is not allowed to modify labels: ${bad.join(', ')}`);
      const taints = (o: KObject): unknown => (isPlainObject(o['spec']) ? o['spec']['taints'] : undefined);
      if (canon(taints(obj)) !== canon(taints(old))) refuse(i.name, `node "${node}" is not allowed to modify taints`);
    }
  };

  const leases = async (node: string, ctx: RequestContext, refuse: (name: string, why: string) => never): Promise<void> => {
    const i = ctx.info;
    if (i.namespace !== NODE_LEASE_NAMESPACE) refuse(i.name, `can only access leases in the "${NODE_LEASE_NAMESPACE}" system namespace`);
    const name = i.verb === 'create' ? ((await body(ctx)).metadata.name ?? '') : i.name;
    if (name !== node) refuse(name, 'can only access node lease with the same name as the requesting node');
  };

  return {
    name: 'NodeRestriction',
    async admit(ctx) {
      const node = nodeIdentity(ctx.user);
      if (node === undefined) return;
      const i = ctx.info;
      const gr: GroupResource = { group: i.apiGroup, resource: i.resource };
      const refuse = (name: string, why: string): never => {
        throw forbidden(gr, name, why);
      };
      if (node === '') refuse(i.name, `could not determine node from user "${ctx.user.username}"`);
      if (i.apiGroup === '' && i.resource === 'pods') return pods(node, ctx, refuse);
      if (i.apiGroup === '' && i.resource === 'nodes') return nodes(node, ctx, refuse);
      if (i.apiGroup === 'coordination.k8s.io' && i.resource === 'leases') return leases(node, ctx, refuse);
    },
  };
}
