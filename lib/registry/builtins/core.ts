// The core group ("", served under /api/v1). Facts as kube-apiserver 1.33
// serves them (`kubectl api-resources`, pkg/registry/core/*/strategy.go);
// only the subresources Gatehouse serves are listed.
import type { KObject } from '../../api/meta.js';
import { isPlainObject } from '../../api/meta.js';
import type { ResourceType } from '../types.js';
import { builtinType, statusOf } from './group-type.js';
import { bool, str } from '../fields.js';
import {
  CONFIGMAP_COLUMNS,
  ENDPOINTS_COLUMNS,
  NAMESPACE_COLUMNS,
  NODE_COLUMNS,
  PVC_COLUMNS,
  PV_COLUMNS,
  SECRET_COLUMNS,
  SERVICEACCOUNT_COLUMNS,
  SERVICE_COLUMNS,
} from './core-printers.js';
import { POD_COLUMNS, podIP } from './pod-printer.js';
import { defaultPodSpec } from './pod-defaults.js';
import { defaultService } from './service-defaults.js';
import { defaultRequestsFromLimits } from './pod-resources.js';
import { podStatusOnCreate } from './pod-status.js';
import { preparePodUpdate, validatePodCreate, validatePodUpdate } from './pod-updates.js';
import { validatePodSpecUpdate } from './pod-spec-update.js';
import { coreEventView, eventColumns } from './event-printer.js';
import { validateCoreEvent } from './event-validation.js';
import { defaultSecret, validateConfigMap, validateSecret, validatePod } from './core-validation.js';

/** The fields common to every core type; each entry below states what differs. */
export function core(kind: string, plural: string, rest: Partial<ResourceType> & Pick<ResourceType, 'namespaced'>): ResourceType {
  return builtinType('', kind, plural, rest);
}

/** Sets a nested field only when it is absent, creating the parent object if needed. */
function defaultField(obj: KObject, parent: string, field: string, value: unknown): void {
  const p = isPlainObject(obj[parent]) ? obj[parent] : (obj[parent] = {});
  if ((p as Record<string, unknown>)[field] === undefined || (p as Record<string, unknown>)[field] === '') (p as Record<string, unknown>)[field] = value;
}

const boolField = (v: boolean) => (v ? 'true' : 'false');

/** kube's v1.LabelMetadataName. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

export const namespaces = core('Namespace', 'namespaces', {
  namespaced: false,
  shortNames: ['ns'],
  // Namespaces cannot be deleted as a collection.
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  subresources: [{ name: 'finalize', kind: 'Namespace', verbs: ['update'] }, statusOf('Namespace')],
  nameRule: 'label',
  columns: NAMESPACE_COLUMNS,
  fieldSelectors: { 'status.phase': (o) => str(o, 'status', 'phase') },
  // kube's namespaceStrategy.PrepareForCreate: status Active, and the `kubernetes` finalizer added to
  // whatever the client asked for (on create only: it goes once the namespace controller has emptied it).
  prepareForCreate(obj) {
    obj['status'] = { phase: 'Active' };
    const spec = isPlainObject(obj['spec']) ? obj['spec'] : (obj['spec'] = {});
    const finalizers = Array.isArray(spec['finalizers']) ? (spec['finalizers'] as unknown[]) : [];
    if (!finalizers.includes('kubernetes')) spec['finalizers'] = [...finalizers, 'kubernetes'];
  },
  defaults(obj) {
    // SetDefaults_NamespaceStatus.
    defaultField(obj, 'status', 'phase', 'Active');
    // kube's SetDefaults_Namespace: the name as a label on every write (namespaceSelectors match it), never another value.
    const name = obj.metadata.name;
    if (name) obj.metadata.labels = { ...obj.metadata.labels, [NAMESPACE_NAME_LABEL]: name };
  },
});

export const configmaps = core('ConfigMap', 'configmaps', {
  namespaced: true,
  shortNames: ['cm'],
  columns: CONFIGMAP_COLUMNS,
  validate: validateConfigMap,
});

export const secrets = core('Secret', 'secrets', {
  namespaced: true,
  columns: SECRET_COLUMNS,
  fieldSelectors: { type: (o) => str(o, 'type') },
  defaults: defaultSecret,
  validate: validateSecret,
});

export const serviceaccounts = core('ServiceAccount', 'serviceaccounts', {
  namespaced: true,
  shortNames: ['sa'],
  columns: SERVICEACCOUNT_COLUMNS,
  subresources: [{ name: 'token', kind: 'TokenRequest', verbs: ['create'], group: 'authentication.k8s.io', version: 'v1' }],
});

export const pods = core('Pod', 'pods', {
  // kube-apiserver 1.33 and later (KEP-5067).
  generation: 'spec',
  namespaced: true,
  shortNames: ['po'],
  categories: ['all'],
  // pods/proxy is not served: no pod runs here to proxy to.
  subresources: [
    { name: 'attach', kind: 'PodAttachOptions', verbs: ['create', 'get'] },
    { name: 'binding', kind: 'Binding', verbs: ['create'] },
    { name: 'ephemeralcontainers', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    { name: 'eviction', kind: 'Eviction', group: 'policy', version: 'v1', verbs: ['create'] },
    { name: 'exec', kind: 'PodExecOptions', verbs: ['create', 'get'] },
    { name: 'log', kind: 'Pod', verbs: ['get'] },
    { name: 'portforward', kind: 'PodPortForwardOptions', verbs: ['create', 'get'] },
    { name: 'resize', kind: 'Pod', verbs: ['get', 'patch', 'update'] },
    statusOf('Pod'),
  ],
  columns: POD_COLUMNS,
  fieldSelectors: {
    'spec.nodeName': (o) => str(o, 'spec', 'nodeName'),
    'spec.restartPolicy': (o) => str(o, 'spec', 'restartPolicy'),
    'spec.schedulerName': (o) => str(o, 'spec', 'schedulerName'),
    'spec.serviceAccountName': (o) => str(o, 'spec', 'serviceAccountName'),
    'spec.hostNetwork': (o) => boolField(bool(o, 'spec', 'hostNetwork')),
    'status.phase': (o) => str(o, 'status', 'phase'),
    'status.podIP': podIP,
    'status.nominatedNodeName': (o) => str(o, 'status', 'nominatedNodeName'),
  },
  prepareForCreate(obj) {
    const spec = obj['spec'];
    // Defaulting precedes PrepareForCreate in kube: the QoS class sees requests taken from limits.
    defaultRequestsFromLimits(spec);
    obj['status'] = podStatusOnCreate(spec);
  },
  defaults(obj) {
    defaultPodSpec(obj['spec']);
    defaultRequestsFromLimits(obj['spec']);
    // SetDefaults_Pod: service links stay on unless a pod turns them off.
    if (isPlainObject(obj['spec'])) defaultField(obj, 'spec', 'enableServiceLinks', true);
    defaultField(obj, 'status', 'phase', 'Pending');
  },
  prepareForUpdate: preparePodUpdate,
  validate: (obj, old, target) => [
    ...validatePod(obj),
    ...(old === undefined ? validatePodCreate(obj) : target === 'main' ? validatePodSpecUpdate(obj, old) : validatePodUpdate(obj, old)),
  ],
});

export const nodes = core('Node', 'nodes', {
  namespaced: false,
  shortNames: ['no'],
  subresources: [{ name: 'proxy', kind: 'NodeProxyOptions', verbs: ['create', 'delete', 'get', 'patch', 'update'] }, statusOf('Node')],
  columns: NODE_COLUMNS,
  fieldSelectors: { 'spec.unschedulable': (o) => boolField(bool(o, 'spec', 'unschedulable')) },
});

export const services = core('Service', 'services', {
  namespaced: true,
  shortNames: ['svc'],
  categories: ['all'],
  subresources: [statusOf('Service')],
  nameRule: 'dns1035',
  createOnUpdate: true,
  columns: SERVICE_COLUMNS,
  defaults(obj) {
    // Go's Service always has a spec: one left out is defaulted as an empty one.
    if (obj['spec'] === undefined || obj['spec'] === null) obj['spec'] = {};
    defaultService(obj['spec']);
  },
});

export const endpoints = core('Endpoints', 'endpoints', {
  // The singular of endpoints is endpoints.
  namespaced: true,
  singular: 'endpoints',
  shortNames: ['ep'],
  createOnUpdate: true,
  columns: ENDPOINTS_COLUMNS,
});

const involved =
  (field: string) =>
  (o: KObject): string =>
    str(o, 'involvedObject', field);

export const events = core('Event', 'events', {
  namespaced: true,
  shortNames: ['ev'],
  createOnUpdate: true,
  columns: eventColumns(coreEventView),
  fieldSelectors: {
    'involvedObject.kind': involved('kind'),
    'involvedObject.namespace': involved('namespace'),
    'involvedObject.name': involved('name'),
    'involvedObject.uid': involved('uid'),
    'involvedObject.apiVersion': involved('apiVersion'),
    'involvedObject.resourceVersion': involved('resourceVersion'),
    'involvedObject.fieldPath': involved('fieldPath'),
    reason: (o) => str(o, 'reason'),
    reportingComponent: (o) => str(o, 'reportingComponent'),
    source: (o) => str(o, 'source', 'component'),
    type: (o) => str(o, 'type'),
  },
  validate: (obj) => validateCoreEvent(obj),
});

export const persistentvolumes = core('PersistentVolume', 'persistentvolumes', {
  namespaced: false,
  shortNames: ['pv'],
  subresources: [statusOf('PersistentVolume')],
  columns: PV_COLUMNS,
});

export const persistentvolumeclaims = core('PersistentVolumeClaim', 'persistentvolumeclaims', {
  namespaced: true,
  shortNames: ['pvc'],
  subresources: [statusOf('PersistentVolumeClaim')],
  columns: PVC_COLUMNS,
});

export const CORE_TYPES: readonly ResourceType[] = [
  namespaces,
  configmaps,
  secrets,
  serviceaccounts,
  pods,
  nodes,
  services,
  endpoints,
  events,
  persistentvolumes,
  persistentvolumeclaims,
];
