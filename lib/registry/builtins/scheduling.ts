// scheduling.k8s.io/v1: PriorityClasses, as kube-apiserver 1.33 serves them
// (pkg/registry/scheduling/priorityclass, pkg/apis/scheduling/validation).
// The two system classes are created at start by the backend's
// `scheduling/bootstrap-system-priority-classes` hook.
import type { KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { schedulingV1 } from '../../schema/gen/scheduling-v1.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, bool, num, str } from '../fields.js';
import { builtinType } from './group-type.js';

const doc = (field: string): string => schedulingV1.types['PriorityClass']?.f[field]?.[1] ?? '';

/** kube's SystemPriorityClasses, the only names allowed the `system-` prefix. */
export const SYSTEM_PRIORITY_CLASSES: readonly KObject[] = [
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-node-critical' },
    value: 2000001000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name: 'system-cluster-critical' },
    value: 2000000000,
    description: 'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

/** scheduling.HighestUserDefinablePriority. */
const HIGHEST_USER_PRIORITY = 1_000_000_000;
const PREEMPTION_POLICIES = ['Never', 'PreemptLowerPriority'];

/** IsKnownSystemPriorityClass's error, or undefined for a known class with its value and globalDefault. */
function systemClassError(obj: KObject): string | undefined {
  const name = obj.metadata.name ?? '';
  const known = SYSTEM_PRIORITY_CLASSES.find((c) => c.metadata.name === name);
  if (!known) return `${name} is not a known system priority class`;
  if (obj['value'] !== known['value']) return `value of ${name} PriorityClass must be ${String(known['value'])}`;
  if (bool(obj, 'globalDefault')) return `globalDefault of ${name} PriorityClass must be false`;
  return undefined;
}

function validatePriorityClass(obj: KObject, old: KObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  if ((obj.metadata.name ?? '').startsWith('system-')) {
    const err = systemClassError(obj);
    if (err) causes.push(cause.forbidden('metadata.name', `priority class names with 'system-' prefix are reserved for system use only. error: ${err}`));
  } else if (num(obj, 'value') > HIGHEST_USER_PRIORITY) {
    causes.push(cause.forbidden('value', `maximum allowed value of a user defined priority is ${HIGHEST_USER_PRIORITY}`));
  }
  const policy = str(obj, 'preemptionPolicy');
  if (!PREEMPTION_POLICIES.includes(policy)) causes.push(cause.notSupported('preemptionPolicy', policy, PREEMPTION_POLICIES));
  if (old) {
    if (at(obj, 'value') !== at(old, 'value')) causes.push(cause.forbidden('value', 'may not be changed in an update.'));
    if (policy !== str(old, 'preemptionPolicy')) causes.push(cause.invalid('preemptionPolicy', policy, 'field is immutable'));
  }
  return causes;
}

export const priorityclasses = builtinType('scheduling.k8s.io', 'PriorityClass', 'priorityclasses', {
  namespaced: false,
  shortNames: ['pc'],
  columns: [
    nameColumn(),
    column('Value', doc('value'), (o) => num(o, 'value'), { type: 'integer' }),
    column('Global-Default', doc('globalDefault'), (o) => bool(o, 'globalDefault'), { type: 'boolean' }),
    ageColumn(),
    column('PreemptionPolicy', doc('preemptionPolicy'), (o) => str(o, 'preemptionPolicy')),
  ],
  defaults(obj) {
    if (obj['preemptionPolicy'] === undefined || obj['preemptionPolicy'] === null || obj['preemptionPolicy'] === '')
      obj['preemptionPolicy'] = 'PreemptLowerPriority';
  },
  validate: validatePriorityClass,
});

export const SCHEDULING_TYPES: readonly ResourceType[] = [priorityclasses];
