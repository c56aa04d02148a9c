// storage.k8s.io/v1's CSI kinds: CSIDrivers, CSINodes, CSIStorageCapacities
// and VolumeAttachments (with /status), as kube-apiserver 1.33 serves them
// (pkg/registry/storage/*, pkg/apis/storage/v1/defaults.go,
// pkg/apis/storage/validation): kube's defaults, tables and immutable fields.
// No attacher, kubelet or external provisioner acts on them.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { labelSelectorFromObject } from '../../api/selectors.js';
import { storageV1 } from '../../schema/gen/storage-v1.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, record, sameJson, str } from '../fields.js';
import { isDNS1123Subdomain, isQualifiedName, tooLong } from '../names.js';
import { builtinType, statusOf } from './group-type.js';
import { goLabelSelector } from './workload-validation.js';
import { quantityCauses, quantitySign } from './quantities.js';

type Obj = Record<string, unknown>;
const doc = (type: string, field: string): string => storageV1.types[type]?.f[field]?.[1] ?? '';
const present = (o: Obj, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined && o[k] !== null;

function specOf(o: KObject): Obj {
  if (!isPlainObject(o['spec'])) o['spec'] = {};
  return o['spec'] as Obj;
}

/** ValidateCSIDriverName: a DNS-1123 subdomain (case-insensitive) of 63 characters at most. */
function csiDriverName(name: string, field: string): StatusCause[] {
  if (name === '') return [cause.required(field)];
  const causes: StatusCause[] = [];
  if (name.length > 63) causes.push(tooLong(field, 63));
  causes.push(...isDNS1123Subdomain(name.toLowerCase()).map((m) => cause.invalid(field, name, m)));
  return causes;
}

function immutable(next: unknown, prev: unknown, field: string): StatusCause[] {
  return sameJson(next ?? null, prev ?? null) ? [] : [cause.invalid(field, next ?? null, 'field is immutable')];
}

// ---- CSIDriver

/** SetDefaults_CSIDriver (SELinuxMountReadWriteOncePod is on in 1.33). */
function defaultCsiDriver(o: KObject): void {
  const spec = specOf(o);
  const fill = (k: string, v: unknown) => {
    if (!present(spec, k)) spec[k] = v;
  };
  fill('attachRequired', true);
  fill('podInfoOnMount', false);
  fill('storageCapacity', false);
  fill('fsGroupPolicy', 'ReadWriteOnceWithFSType');
  if (!Array.isArray(spec['volumeLifecycleModes']) || spec['volumeLifecycleModes'].length === 0) spec['volumeLifecycleModes'] = ['Persistent'];
  fill('requiresRepublish', false);
  fill('seLinuxMount', false);
}

function validateCsiDriver(o: KObject, old: KObject | undefined): StatusCause[] {
  const spec = record(o, 'spec');
  const causes: StatusCause[] = [];
  for (const f of ['attachRequired', 'podInfoOnMount']) if (!present(spec, f)) causes.push(cause.required(`spec.${f}`));
  const policy = spec['fsGroupPolicy'];
  const policies = ['File', 'None', 'ReadWriteOnceWithFSType'];
  if (present(spec, 'fsGroupPolicy') && !policies.includes(policy as string)) causes.push(cause.notSupported('spec.fsGroupPolicy', policy, policies));
  for (const m of list(spec, 'volumeLifecycleModes'))
    if (m !== 'Persistent' && m !== 'Ephemeral') causes.push(cause.notSupported('spec.volumeLifecycleModes', m, ['Ephemeral', 'Persistent']));
  const audiences = new Set<string>();
  list(spec, 'tokenRequests').forEach((t, i) => {
    const path = `spec.tokenRequests[${i}]`;
    const audience = str(t, 'audience');
    if (audiences.has(audience)) causes.push(cause.duplicate(`${path}.audience`, audience));
    audiences.add(audience);
    const exp = at(t, 'expirationSeconds');
    if (typeof exp === 'number' && exp < 600) causes.push(cause.invalid(`${path}.expirationSeconds`, exp, 'may not specify a duration less than 10 minutes'));
    if (typeof exp === 'number' && exp > 2 ** 32)
      causes.push(cause.invalid(`${path}.expirationSeconds`, exp, 'may not specify a duration larger than 2^32 seconds'));
  });
  if (old) {
    const was = record(old, 'spec');
    // kube names the first field `attachedRequired` (sic).
    causes.push(
      ...immutable(spec['attachRequired'], was['attachRequired'], 'spec.attachedRequired'),
      ...immutable(spec['fsGroupPolicy'], was['fsGroupPolicy'], 'spec.fsGroupPolicy'),
      ...immutable(spec['volumeLifecycleModes'], was['volumeLifecycleModes'], 'spec.volumeLifecycleModes'),
    );
  }
  return causes;
}

const specBool = (field: string, unset: boolean) => (o: KObject) => {
  const v = at(o, 'spec', field);
  return typeof v === 'boolean' ? v : unset;
};

export const csidrivers = builtinType('storage.k8s.io', 'CSIDriver', 'csidrivers', {
  namespaced: false,
  columns: [
    nameColumn(),
    column('AttachRequired', doc('CSIDriverSpec', 'attachRequired'), specBool('attachRequired', true), { type: 'boolean' }),
    column('PodInfoOnMount', doc('CSIDriverSpec', 'podInfoOnMount'), specBool('podInfoOnMount', false), { type: 'boolean' }),
    column('StorageCapacity', doc('CSIDriverSpec', 'storageCapacity'), specBool('storageCapacity', false), { type: 'boolean' }),
    column('TokenRequests', doc('CSIDriverSpec', 'tokenRequests'), (o) =>
      Array.isArray(at(o, 'spec', 'tokenRequests'))
        ? list(o, 'spec', 'tokenRequests')
            .map((t) => str(t, 'audience'))
            .join(',')
        : '<unset>',
    ),
    column('RequiresRepublish', doc('CSIDriverSpec', 'requiresRepublish'), specBool('requiresRepublish', false), { type: 'boolean' }),
    column('Modes', doc('CSIDriverSpec', 'volumeLifecycleModes'), (o) => list(o, 'spec', 'volumeLifecycleModes').map(String).join(',') || '<none>'),
    ageColumn(),
  ],
  defaults: defaultCsiDriver,
  validate: validateCsiDriver,
});

// ---- CSINode

function validateCsiNode(o: KObject, old: KObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const names = new Set<string>();
  list(o, 'spec', 'drivers').forEach((d, i) => {
    const path = `spec.drivers[${i}]`;
    const name = str(d, 'name');
    causes.push(...csiDriverName(name, `${path}.name`));
    if (names.has(name)) causes.push(cause.duplicate(`${path}.name`, name));
    names.add(name);
    const nodeID = str(d, 'nodeID');
    if (nodeID === '') causes.push(cause.required(`${path}.nodeID`));
    else if (nodeID.length > 192) causes.push(tooLong(`${path}.nodeID`, 192));
    const keys = new Set<string>();
    list(d, 'topologyKeys').forEach((k, j) => {
      const key = typeof k === 'string' ? k : '';
      const kp = `${path}.topologyKeys`;
      if (key === '') causes.push(cause.required(`${kp}[${j}]`));
      else causes.push(...isQualifiedName(key).map((m) => cause.invalid(kp, key, m)));
      if (keys.has(key)) causes.push(cause.duplicate(kp, key));
      keys.add(key);
    });
    const count = at(d, 'allocatable', 'count');
    if (typeof count === 'number' && count < 0) causes.push(cause.invalid(`${path}.allocatable.count`, count, 'must be greater than or equal to 0'));
  });
  if (old) {
    // ValidateCSINodeUpdate: a driver's node ID and allocatable stay as registered.
    const before = new Map(list(old, 'spec', 'drivers').map((d) => [str(d, 'name'), d] as const));
    list(o, 'spec', 'drivers').forEach((d, i) => {
      const prev = before.get(str(d, 'name'));
      if (!prev) return;
      causes.push(
        ...immutable(at(d, 'nodeID'), at(prev, 'nodeID'), `spec.drivers[${i}].nodeID`),
        ...immutable(at(d, 'allocatable'), at(prev, 'allocatable'), `spec.drivers[${i}].allocatable`),
      );
    });
  }
  return causes;
}

export const csinodes = builtinType('storage.k8s.io', 'CSINode', 'csinodes', {
  namespaced: false,
  columns: [
    nameColumn(),
    column('Drivers', 'Drivers indicates the number of CSI drivers registered on the node', (o) => list(o, 'spec', 'drivers').length, { type: 'integer' }),
    ageColumn(),
  ],
  validate: validateCsiNode,
});

// ---- CSIStorageCapacity

function validateCapacity(o: KObject, old: KObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const sc = str(o, 'storageClassName');
  if (sc === '') causes.push(cause.required('storageClassName'));
  else causes.push(...isDNS1123Subdomain(sc).map((m) => cause.invalid('storageClassName', sc, m)));
  for (const f of ['capacity', 'maximumVolumeSize']) {
    const v = o[f];
    const bad = quantityCauses(v, f);
    causes.push(...bad);
    if (bad.length === 0 && v !== undefined && v !== null && (quantitySign(v) ?? 0) < 0) causes.push(cause.invalid(f, v, 'must be greater than or equal to 0'));
  }
  const topology = o['nodeTopology'];
  if (isPlainObject(topology)) {
    try {
      labelSelectorFromObject(topology);
    } catch (err) {
      causes.push({ reason: 'FieldValueInvalid', field: 'nodeTopology', message: `Invalid value: ${goLabelSelector(topology)}: ${(err as Error).message}` });
    }
  }
  if (old)
    causes.push(
      ...immutable(o['storageClassName'], old['storageClassName'], 'storageClassName'),
      ...immutable(o['nodeTopology'], old['nodeTopology'], 'nodeTopology'),
    );
  return causes;
}

export const csistoragecapacities = builtinType('storage.k8s.io', 'CSIStorageCapacity', 'csistoragecapacities', {
  namespaced: true,
  columns: [
    nameColumn(),
    column('StorageClassName', doc('CSIStorageCapacity', 'storageClassName'), (o) => str(o, 'storageClassName')),
    column('Capacity', doc('CSIStorageCapacity', 'capacity'), (o) => {
      const c = o['capacity'];
      return typeof c === 'string' || typeof c === 'number' ? String(c) : '<unset>';
    }),
  ],
  validate: validateCapacity,
});

// ---- VolumeAttachment

function validateVolumeAttachment(o: KObject, old: KObject | undefined): StatusCause[] {
  const spec = record(o, 'spec');
  const causes = csiDriverName(str(spec, 'attacher'), 'spec.attacher');
  const node = str(spec, 'nodeName');
  if (node === '') causes.push(cause.required('spec.nodeName'));
  else causes.push(...isDNS1123Subdomain(node).map((m) => cause.invalid('spec.nodeName', node, m)));
  const source = record(spec, 'source');
  const pv = present(source, 'persistentVolumeName');
  const inline = present(source, 'inlineVolumeSpec');
  if (pv === inline) causes.push(cause.required('spec.source', 'must specify exactly one of inlineVolumeSpec and persistentVolumeName'));
  if (pv) {
    const name = str(source, 'persistentVolumeName');
    if (name === '') causes.push(cause.required('spec.source.persistentVolumeName', 'must specify non empty persistentVolumeName'));
    else causes.push(...isDNS1123Subdomain(name).map((m) => cause.invalid('spec.source.persistentVolumeName', name, m)));
  }
  // Only /status may change an attachment once made.
  if (old && !sameJson(o['spec'], old['spec'])) causes.push(cause.invalid('spec', o['spec'], 'field is immutable'));
  return causes;
}

export const volumeattachments = builtinType('storage.k8s.io', 'VolumeAttachment', 'volumeattachments', {
  namespaced: false,
  subresources: [statusOf('VolumeAttachment')],
  columns: [
    nameColumn(),
    { ...column('Attacher', doc('VolumeAttachmentSpec', 'attacher'), (o) => str(o, 'spec', 'attacher')), format: 'name' },
    column('PV', doc('VolumeAttachmentSource', 'persistentVolumeName'), (o) => str(o, 'spec', 'source', 'persistentVolumeName')),
    column('Node', doc('VolumeAttachmentSpec', 'nodeName'), (o) => str(o, 'spec', 'nodeName')),
    column('Attached', doc('VolumeAttachmentStatus', 'attached'), (o) => at(o, 'status', 'attached') === true, { type: 'boolean' }),
    ageColumn(),
  ],
  validate: validateVolumeAttachment,
});

export const STORAGE_CSI_TYPES: readonly ResourceType[] = [csidrivers, csinodes, csistoragecapacities, volumeattachments];
