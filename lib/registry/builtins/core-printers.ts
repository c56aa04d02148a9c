// Tables of the core types other than Pod and Event, after kube's printers
// (pkg/printers/internalversion/printers.go): same columns, same placeholders.
import type { KObject } from '../../api/meta.js';
import type { Column } from '../types.js';
import { ageColumn, column, joinOr, nameColumn } from '../columns.js';
import { at, bool, list, num, record, str, strings } from '../fields.js';

const count = (o: KObject, field: string) => Object.keys(record(o, field)).length;

export const NAMESPACE_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Status', 'The status of the namespace', (o) => str(o, 'status', 'phase')),
  ageColumn(),
];

export const CONFIGMAP_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Data', 'Data contains the configuration data.', (o) => count(o, 'data') + count(o, 'binaryData'), { type: 'string' }),
  ageColumn(),
];

export const SECRET_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Type', 'The type of the secret', (o) => str(o, 'type')),
  column('Data', 'The number of entries in the secret', (o) => count(o, 'data')),
  ageColumn(),
];

export const SERVICEACCOUNT_COLUMNS: readonly Column[] = [
  nameColumn(),
  column(
    'Secrets',
    'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.',
    (o) => list(o, 'secrets').length,
  ),
  ageColumn(),
];

/** findNodeRoles: `node-role.kubernetes.io/<role>` label keys and the `kubernetes.io/role` value. */
function nodeRoles(o: KObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/') && k.length > 'node-role.kubernetes.io/'.length) roles.add(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
  }
  return joinOr([...roles].sort());
}

function nodeStatus(o: KObject): string {
  const ready = list(o, 'status', 'conditions').find((c) => str(c, 'type') === 'Ready');
  const status = [ready === undefined ? 'Unknown' : str(ready, 'status') === 'True' ? 'Ready' : 'NotReady'];
  if (bool(o, 'spec', 'unschedulable')) status.push('SchedulingDisabled');
  return status.join(',');
}

function nodeAddress(o: KObject, type: string): string {
  const a = list(o, 'status', 'addresses').find((x) => str(x, 'type') === type);
  return a === undefined ? '<none>' : str(a, 'address');
}

const nodeInfo = (field: string) => (o: KObject) => str(o, 'status', 'nodeInfo', field) || '<unknown>';

export const NODE_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Status', 'The status of the node', nodeStatus),
  column('Roles', 'The roles of the node', nodeRoles),
  ageColumn(),
  column('Version', 'Kubelet Version reported by the node.', (o) => str(o, 'status', 'nodeInfo', 'kubeletVersion')),
  column('Internal-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', (o) => nodeAddress(o, 'InternalIP'), {
    priority: 1,
  }),
  column('External-IP', 'List of addresses reachable to the node. Queried from cloud provider, if available.', (o) => nodeAddress(o, 'ExternalIP'), {
    priority: 1,
  }),
  column('OS-Image', 'OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).', nodeInfo('osImage'), { priority: 1 }),
  column('Kernel-Version', "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).", nodeInfo('kernelVersion'), { priority: 1 }),
  column(
    'Container-Runtime',
    'ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).',
    nodeInfo('containerRuntimeVersion'),
    { priority: 1 },
  ),
];

function serviceExternalIP(o: KObject): string {
  const externalIPs = strings(o, 'spec', 'externalIPs');
  switch (str(o, 'spec', 'type')) {
    case 'ClusterIP':
    case 'NodePort':
      return joinOr(externalIPs);
    case 'LoadBalancer': {
      const lb = list(o, 'status', 'loadBalancer', 'ingress')
        .map((i) => str(i, 'ip') || str(i, 'hostname'))
        .filter((s) => s !== '');
      const all = [...lb, ...externalIPs];
      return all.length ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return str(o, 'spec', 'externalName');
    default:
      return '<unknown>';
  }
}

function servicePorts(o: KObject): string {
  return joinOr(
    list(o, 'spec', 'ports').map((p) => {
      const proto = str(p, 'protocol') || 'TCP';
      const nodePort = num(p, 'nodePort');
      return nodePort > 0 ? `${num(p, 'port')}:${nodePort}/${proto}` : `${num(p, 'port')}/${proto}`;
    }),
  );
}

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
export function formatLabels(m: Readonly<Record<string, unknown>>): string {
  return joinOr(
    Object.keys(m)
      .sort()
      .map((k) => `${k}=${String(m[k])}`),
  );
}

export const SERVICE_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Type', 'The type of the service', (o) => str(o, 'spec', 'type')),
  column('Cluster-IP', 'The internal IP address of the service', (o) => strings(o, 'spec', 'clusterIPs')[0] ?? (str(o, 'spec', 'clusterIP') || '<none>')),
  column('External-IP', 'The external IP address of the service', serviceExternalIP),
  column('Port(s)', 'The ports of the service', servicePorts),
  ageColumn(),
  column(
    'Selector',
    'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/',
    (o) => formatLabels(record(o, 'spec', 'selector')),
    { priority: 1 },
  ),
];

/** `a,b,c + N more...` after the first three, as kube's endpoint printers abbreviate. */
export function firstThree(items: readonly string[], total: number, empty: string): string {
  const shown = items.slice(0, 3).join(',');
  if (total > 3) return `${shown} + ${total - 3} more...`;
  return shown === '' ? empty : shown;
}

function formatEndpoints(o: KObject): string {
  const subsets = list(o, 'subsets');
  if (subsets.length === 0) return '<none>';
  const shown: string[] = [];
  let total = 0;
  for (const ss of subsets) {
    const ips = list(ss, 'addresses').map((a) => str(a, 'ip'));
    const ports = list(ss, 'ports');
    // Headless services may have addresses without ports.
    const entries =
      ports.length === 0 ? ips : ports.flatMap((p) => ips.map((ip) => (ip.includes(':') ? `[${ip}]:${num(p, 'port')}` : `${ip}:${num(p, 'port')}`)));
    total += entries.length;
    for (const e of entries) if (shown.length < 3) shown.push(e);
  }
  return firstThree(shown, total, '');
}

export const ENDPOINTS_COLUMNS: readonly Column[] = [nameColumn(), column('Endpoints', 'Endpoints of the endpoints', formatEndpoints), ageColumn()];

const ACCESS_MODES: ReadonlyArray<readonly [string, string]> = [
  ['ReadWriteOnce', 'RWO'],
  ['ReadOnlyMany', 'ROX'],
  ['ReadWriteMany', 'RWX'],
  ['ReadWriteOncePod', 'RWOP'],
];

function accessModes(modes: readonly string[]): string {
  return ACCESS_MODES.filter(([m]) => modes.includes(m))
    .map(([, short]) => short)
    .join(',');
}

/** The storage class, from the beta annotation first, as kube's helpers still read it. */
function storageClass(o: KObject): string {
  return o.metadata.annotations?.['volume.beta.kubernetes.io/storage-class'] ?? str(o, 'spec', 'storageClassName');
}

const phaseOrTerminating = (o: KObject) => (o.metadata.deletionTimestamp ? 'Terminating' : str(o, 'status', 'phase'));
const quantity = (o: KObject, ...path: string[]) => str(o, ...path) || '0';
const unset = (v: string) => v || '<unset>';

export const PV_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Capacity', "capacity is the description of the persistent volume's resources and capacity.", (o) => quantity(o, 'spec', 'capacity', 'storage')),
  column('Access Modes', 'accessModes contains all ways the volume can be mounted.', (o) => accessModes(strings(o, 'spec', 'accessModes'))),
  column('Reclaim Policy', 'persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.', (o) =>
    str(o, 'spec', 'persistentVolumeReclaimPolicy'),
  ),
  column('Status', 'phase indicates if a volume is available, bound to a claim, or released by a claim.', phaseOrTerminating),
  column('Claim', 'claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.', (o) =>
    at(o, 'spec', 'claimRef') === undefined ? '' : `${str(o, 'spec', 'claimRef', 'namespace')}/${str(o, 'spec', 'claimRef', 'name')}`,
  ),
  column('StorageClass', 'storageClassName is the name of StorageClass to which this persistent volume belongs.', storageClass),
  column('VolumeAttributesClass', 'Name of VolumeAttributesClass to which this persistent volume belongs.', (o) =>
    unset(str(o, 'spec', 'volumeAttributesClassName')),
  ),
  column('Reason', 'reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.', (o) =>
    str(o, 'status', 'reason'),
  ),
  ageColumn(),
  column(
    'VolumeMode',
    'volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.',
    (o) => unset(str(o, 'spec', 'volumeMode')),
    { priority: 1 },
  ),
];

export const PVC_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Status', 'phase represents the current phase of PersistentVolumeClaim.', phaseOrTerminating),
  column('Volume', 'volumeName is the binding reference to the PersistentVolume backing this claim.', (o) => str(o, 'spec', 'volumeName')),
  // Capacity and modes are those of the bound volume, so they stay empty until the claim is bound.
  column('Capacity', 'capacity represents the actual resources of the underlying volume.', (o) =>
    str(o, 'spec', 'volumeName') ? quantity(o, 'status', 'capacity', 'storage') : '',
  ),
  column('Access Modes', 'accessModes contains the actual access modes the volume backing the PVC has.', (o) =>
    str(o, 'spec', 'volumeName') ? accessModes(strings(o, 'status', 'accessModes')) : '',
  ),
  column('StorageClass', 'storageClassName is the name of the StorageClass required by the claim.', storageClass),
  column('VolumeAttributesClass', 'currentVolumeAttributesClassName is the current name of the VolumeAttributesClass the PVC is using.', (o) =>
    unset(str(o, 'status', 'currentVolumeAttributesClassName')),
  ),
  ageColumn(),
  column('VolumeMode', 'volumeMode defines what type of volume is required by the claim.', (o) => unset(str(o, 'spec', 'volumeMode')), { priority: 1 }),
];
