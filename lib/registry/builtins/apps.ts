// apps/v1: the workload kinds, stored and served as kube-apiserver 1.33 does
// (pkg/registry/apps/*/strategy.go, pkg/apis/apps/v1/defaults.go). Gatehouse
// runs no workload controllers: nothing creates ReplicaSets or Pods from these
// objects, and status changes only when a client writes /status.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import type { ResourceType, ScalePaths, Subresource } from '../types.js';
import { builtinType, statusOf, SUBRESOURCE_VERBS } from './group-type.js';
import { at, record, sameJson, str } from '../fields.js';
import { CONTROLLERREVISION_COLUMNS, DAEMONSET_COLUMNS, DEPLOYMENT_COLUMNS, REPLICASET_COLUMNS, STATEFULSET_COLUMNS } from './apps-printers.js';
import { defaultPodTemplate } from './pod-defaults.js';
import { labelSelectorText } from './selector-text.js';
import { immutableSelector, nonNegative, selectorAndTemplate } from './workload-validation.js';

type Obj = Record<string, unknown>;
export const SCALE: Subresource = { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUBRESOURCE_VERBS };

/** spec.replicas ↔ status.replicas, status.selector from the structured spec.selector (scaleFromDeployment and kin). */
export const REPLICAS_SCALE: ScalePaths = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  selector: (o) => labelSelectorText(at(o, 'spec', 'selector')),
};

function apps(kind: string, plural: string, rest: Partial<ResourceType>): ResourceType {
  return builtinType('apps', kind, plural, { namespaced: true, ...rest });
}

function fill(o: Obj, field: string, value: unknown): void {
  if (o[field] === undefined || o[field] === null || o[field] === '') o[field] = value;
}

/** The object's spec, created when absent, so defaults have somewhere to go. */
function specOf(obj: KObject): Obj {
  if (!isPlainObject(obj['spec'])) obj['spec'] = {};
  return obj['spec'] as Obj;
}

function child(o: Obj, field: string): Obj {
  if (!isPlainObject(o[field])) o[field] = {};
  return o[field] as Obj;
}

/** What every workload's strategy shares: generation from the spec. A new object's zero status is the schema table's (prepareCreate resets status; asKubeEncodes writes Go's zero struct). */
const WORKLOAD: Partial<ResourceType> = { generation: 'spec', categories: ['all'] };

/** A selector matching the pod template, and never changing. */
const workloadCauses = (kind: string) => (obj: KObject, old: KObject | undefined) => [...selectorAndTemplate(obj, kind), ...immutableSelector(obj, old)];

const deploymentBase = workloadCauses('deployment');
export const deployments = apps('Deployment', 'deployments', {
  ...WORKLOAD,
  shortNames: ['deploy'],
  subresources: [SCALE, statusOf('Deployment')],
  scale: REPLICAS_SCALE,
  columns: DEPLOYMENT_COLUMNS,
  defaults(obj) {
    const spec = specOf(obj);
    fill(spec, 'replicas', 1);
    const strategy = child(spec, 'strategy');
    fill(strategy, 'type', 'RollingUpdate');
    if (strategy['type'] === 'RollingUpdate') {
      const rolling = child(strategy, 'rollingUpdate');
      fill(rolling, 'maxUnavailable', '25%');
      fill(rolling, 'maxSurge', '25%');
    }
    fill(spec, 'revisionHistoryLimit', 10);
    fill(spec, 'progressDeadlineSeconds', 600);
    defaultPodTemplate(spec);
  },
  validate: (obj, old) => [...deploymentBase(obj, old), ...deploymentSpec(obj)],
});

const isZero = (v: unknown) => v === undefined || v === 0 || v === '0%';

/** validateDeploymentStrategy, revisionHistoryLimit and progressDeadlineSeconds. */
function deploymentSpec(obj: KObject): StatusCause[] {
  const causes: StatusCause[] = [...nonNegative(obj, 'spec.revisionHistoryLimit', 'spec', 'revisionHistoryLimit')];
  const type = str(obj, 'spec', 'strategy', 'type');
  const rolling = at(obj, 'spec', 'strategy', 'rollingUpdate');
  if (type === 'Recreate') {
    if (rolling !== undefined) causes.push(cause.forbidden('spec.strategy.rollingUpdate', "may not be specified when strategy `type` is 'Recreate'"));
  } else if (type === 'RollingUpdate') {
    if (isZero(at(rolling, 'maxUnavailable')) && isZero(at(rolling, 'maxSurge'))) {
      causes.push(cause.invalid('spec.strategy.rollingUpdate.maxUnavailable', at(rolling, 'maxUnavailable') ?? 0, 'may not be 0 when `maxSurge` is 0'));
    }
  } else causes.push(cause.notSupported('spec.strategy.type', type, ['Recreate', 'RollingUpdate']));
  const deadline = at(obj, 'spec', 'progressDeadlineSeconds');
  if (typeof deadline === 'number') {
    causes.push(...nonNegative(obj, 'spec.progressDeadlineSeconds', 'spec', 'progressDeadlineSeconds'));
    const minReady = at(obj, 'spec', 'minReadySeconds');
    if (deadline <= (typeof minReady === 'number' ? minReady : 0))
      causes.push(cause.invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds'));
  }
  return causes;
}

const replicaSetBase = workloadCauses('replicaset');
export const replicasets = apps('ReplicaSet', 'replicasets', {
  ...WORKLOAD,
  shortNames: ['rs'],
  subresources: [SCALE, statusOf('ReplicaSet')],
  scale: REPLICAS_SCALE,
  columns: REPLICASET_COLUMNS,
  defaults(obj) {
    const spec = specOf(obj);
    fill(spec, 'replicas', 1);
    defaultPodTemplate(spec);
  },
  validate: replicaSetBase,
});

/** The spec fields a StatefulSet update may change (ValidateStatefulSetUpdate). */
const STATEFULSET_MUTABLE = new Set(['replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']);

function statefulSetUpdate(obj: KObject, old: KObject | undefined): StatusCause[] {
  if (!old) return [];
  const fixed = (o: KObject) => Object.fromEntries(Object.entries(record(o, 'spec')).filter(([k]) => !STATEFULSET_MUTABLE.has(k)));
  if (sameJson(fixed(obj), fixed(old))) return [];
  return [
    cause.forbidden(
      'spec',
      "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
    ),
  ];
}

const statefulSetBase = workloadCauses('statefulset');
export const statefulsets = apps('StatefulSet', 'statefulsets', {
  ...WORKLOAD,
  // kube's ValidateStatefulSetName: a DNS label (its pods' hostnames), checked on create only.
  nameRule: 'label',
  shortNames: ['sts'],
  subresources: [SCALE, statusOf('StatefulSet')],
  scale: REPLICAS_SCALE,
  columns: STATEFULSET_COLUMNS,
  defaults(obj) {
    const spec = specOf(obj);
    fill(spec, 'podManagementPolicy', 'OrderedReady');
    const strategy = child(spec, 'updateStrategy');
    if (strategy['type'] === undefined || strategy['type'] === '') {
      strategy['type'] = 'RollingUpdate';
      child(strategy, 'rollingUpdate');
    }
    if (strategy['type'] === 'RollingUpdate' && isPlainObject(strategy['rollingUpdate'])) fill(strategy['rollingUpdate'], 'partition', 0);
    const retention = child(spec, 'persistentVolumeClaimRetentionPolicy');
    fill(retention, 'whenDeleted', 'Retain');
    fill(retention, 'whenScaled', 'Retain');
    fill(spec, 'replicas', 1);
    fill(spec, 'revisionHistoryLimit', 10);
    for (const pvc of Array.isArray(spec['volumeClaimTemplates']) ? spec['volumeClaimTemplates'].filter(isPlainObject) : []) {
      fill(child(pvc, 'spec'), 'volumeMode', 'Filesystem');
      fill(child(pvc, 'status'), 'phase', 'Pending');
    }
    defaultPodTemplate(spec);
  },
  validate: (obj, old) => [...statefulSetBase(obj, old), ...statefulSetUpdate(obj, old)],
});

const TEMPLATE_GENERATION = 'deprecated.daemonset.template.generation';

const daemonSetBase = workloadCauses('daemonset');
export const daemonsets = apps('DaemonSet', 'daemonsets', {
  ...WORKLOAD,
  shortNames: ['ds'],
  subresources: [statusOf('DaemonSet')],
  columns: DAEMONSET_COLUMNS,
  // The v1 form of the internal templateGeneration: 1 on create, one more whenever the template changes.
  prepareForCreate(obj) {
    obj.metadata.annotations = { ...obj.metadata.annotations, [TEMPLATE_GENERATION]: '1' };
  },
  prepareForUpdate(next, old, target) {
    if (target !== 'main') return;
    const was = Number(old.metadata.annotations?.[TEMPLATE_GENERATION] ?? '0') || 0;
    const now = sameJson(at(next, 'spec', 'template'), at(old, 'spec', 'template')) ? was : was + 1;
    if (was > 0 || now > 0) next.metadata.annotations = { ...next.metadata.annotations, [TEMPLATE_GENERATION]: String(now) };
  },
  defaults(obj) {
    const spec = specOf(obj);
    const strategy = child(spec, 'updateStrategy');
    fill(strategy, 'type', 'RollingUpdate');
    if (strategy['type'] === 'RollingUpdate') {
      const rolling = child(strategy, 'rollingUpdate');
      fill(rolling, 'maxUnavailable', 1);
      if (rolling['maxSurge'] === undefined || rolling['maxSurge'] === null) rolling['maxSurge'] = 0;
    }
    fill(spec, 'revisionHistoryLimit', 10);
    defaultPodTemplate(spec);
  },
  validate: daemonSetBase,
});

export const controllerrevisions = apps('ControllerRevision', 'controllerrevisions', {
  columns: CONTROLLERREVISION_COLUMNS,
  validate(obj, old) {
    const causes = nonNegative(obj, 'revision', 'revision');
    if (old && !sameJson(obj['data'], old['data'])) causes.push(cause.invalid('data', '', 'field is immutable'));
    return causes;
  },
});

export const APPS_TYPES: readonly ResourceType[] = [deployments, statefulsets, daemonsets, replicasets, controllerrevisions];
