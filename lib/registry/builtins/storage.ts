// storage.k8s.io/v1 StorageClasses and node.k8s.io/v1 RuntimeClasses, as
// kube-apiserver 1.33 serves them (pkg/registry/storage/storageclass,
// pkg/registry/node/runtimeclass and their validation). No provisioner or
// kubelet reads them.
import type { KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { storageV1 } from '../../schema/gen/storage-v1.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, sameJson, str } from '../fields.js';
import { isDNS1123Label } from '../names.js';
import { builtinType } from './group-type.js';

const doc = (field: string): string => storageV1.types['StorageClass']?.f[field]?.[1] ?? '';
const DEFAULT_CLASS = ['storageclass.kubernetes.io/is-default-class', 'storageclass.beta.kubernetes.io/is-default-class'];

/** The name, with ` (default)` for the default class (storageutil.IsDefaultAnnotation). */
function scName(o: KObject): string {
  const isDefault = DEFAULT_CLASS.some((a) => o.metadata.annotations?.[a] === 'true');
  return `${o.metadata.name ?? ''}${isDefault ? ' (default)' : ''}`;
}

function supported(obj: KObject, field: string, allowed: readonly string[]): StatusCause[] {
  const v = str(obj, field);
  return allowed.includes(v) ? [] : [cause.notSupported(field, v, allowed)];
}

/** ValidateStorageClass and ValidateStorageClassUpdate as people meet them. */
function validateStorageClass(obj: KObject, old: KObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  if (str(obj, 'provisioner') === '') causes.push(cause.required('provisioner'));
  causes.push(...supported(obj, 'reclaimPolicy', ['Delete', 'Retain']), ...supported(obj, 'volumeBindingMode', ['Immediate', 'WaitForFirstConsumer']));
  if (old) {
    if (!sameJson(at(obj, 'parameters') ?? {}, at(old, 'parameters') ?? {})) causes.push(cause.forbidden('parameters', 'updates to parameters are forbidden.'));
    if (str(obj, 'provisioner') !== str(old, 'provisioner')) causes.push(cause.forbidden('provisioner', 'updates to provisioner are forbidden.'));
    if (str(obj, 'reclaimPolicy') !== str(old, 'reclaimPolicy')) causes.push(cause.forbidden('reclaimPolicy', 'updates to reclaimPolicy are forbidden.'));
    if (str(obj, 'volumeBindingMode') !== str(old, 'volumeBindingMode'))
      causes.push(cause.invalid('volumeBindingMode', str(obj, 'volumeBindingMode'), 'field is immutable'));
  }
  return causes;
}

export const storageclasses = builtinType('storage.k8s.io', 'StorageClass', 'storageclasses', {
  namespaced: false,
  shortNames: ['sc'],
  columns: [
    { ...nameColumn(), cell: scName },
    column('Provisioner', doc('provisioner'), (o) => str(o, 'provisioner')),
    column('ReclaimPolicy', doc('reclaimPolicy'), (o) => str(o, 'reclaimPolicy') || 'Delete'),
    column('VolumeBindingMode', doc('volumeBindingMode'), (o) => str(o, 'volumeBindingMode') || 'Immediate'),
    column('AllowVolumeExpansion', doc('allowVolumeExpansion'), (o) => at(o, 'allowVolumeExpansion') === true),
    ageColumn(),
  ],
  // SetDefaults_StorageClass.
  defaults(obj) {
    if (typeof obj['reclaimPolicy'] !== 'string' || obj['reclaimPolicy'] === '') obj['reclaimPolicy'] = 'Delete';
    if (typeof obj['volumeBindingMode'] !== 'string' || obj['volumeBindingMode'] === '') obj['volumeBindingMode'] = 'Immediate';
  },
  validate: validateStorageClass,
});

export const runtimeclasses = builtinType('node.k8s.io', 'RuntimeClass', 'runtimeclasses', {
  namespaced: false,
  columns: [nameColumn(), column('Handler', 'Handler is the name of the underlying runtime and configuration', (o) => str(o, 'handler')), ageColumn()],
  validate(obj, old) {
    const handler = str(obj, 'handler');
    const causes: StatusCause[] = handler === '' ? [cause.required('handler')] : isDNS1123Label(handler).map((m) => cause.invalid('handler', handler, m));
    if (old && handler !== str(old, 'handler')) causes.push(cause.invalid('handler', handler, 'field is immutable'));
    return causes;
  },
});

export const STORAGE_TYPES: readonly ResourceType[] = [storageclasses];
export const NODE_TYPES: readonly ResourceType[] = [runtimeclasses];
