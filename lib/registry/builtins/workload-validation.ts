// The validation people hit on the kinds that keep replicas of a pod template
// (pkg/apis/apps/validation, core's ValidateReplicationController): a selector
// that is required, not empty, valid and matching the template's labels, a
// template whose pods restart Always, replicas that are not negative, and a
// selector that never changes. Values in messages are shown as kube's
// field errors show Go values (`map[string]string{"app":"web"}`), since
// those are the messages people search for.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { labelSelectorFromObject, matchesLabels, type LabelSelector } from '../../api/selectors.js';
import { at, list, record, sameJson, str } from '../fields.js';
import { validatePodSpec } from './core-validation.js';

const goString = (s: unknown) => JSON.stringify(String(s));

/** %#v of a map[string]string: keys sorted. */
export function goStringMap(m: unknown): string {
  if (!isPlainObject(m)) return 'map[string]string(nil)';
  const entries = Object.keys(m)
    .sort()
    .map((k) => `${goString(k)}:${goString(m[k])}`);
  return `map[string]string{${entries.join(', ')}}`;
}

/** %#v of a v1.LabelSelector, as ValidateImmutableField shows it. */
export function goLabelSelector(sel: unknown): string {
  if (!isPlainObject(sel)) return 'null';
  const labels = isPlainObject(sel['matchLabels']) ? goStringMap(sel['matchLabels']) : 'map[string]string(nil)';
  const exprs = Array.isArray(sel['matchExpressions'])
    ? `[]v1.LabelSelectorRequirement{${sel['matchExpressions']
        .map((e) => {
          const values = Array.isArray(at(e, 'values')) ? `[]string{${list(e, 'values').map(goString).join(', ')}}` : '[]string(nil)';
          return `v1.LabelSelectorRequirement{Key:${goString(str(e, 'key'))}, Operator:${goString(str(e, 'operator'))}, Values:${values}}`;
        })
        .join(', ')}}`
    : '[]v1.LabelSelectorRequirement(nil)';
  return `v1.LabelSelector{MatchLabels:${labels}, MatchExpressions:${exprs}}`;
}

const invalidGo = (field: string, shown: string, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${shown}: ${detail}`,
});

/** ValidateNonnegativeField. */
export function nonNegative(obj: unknown, field: string, ...path: string[]): StatusCause[] {
  const v = at(obj, ...path);
  return typeof v === 'number' && v < 0 ? [cause.invalid(field, v, 'must be greater than or equal to 0')] : [];
}

/** The template's labels against an already valid selector, then the template's pod spec (ValidatePodTemplateSpecForReplicaSet). */
function templateCauses(obj: KObject, selector: LabelSelector, restartAlways: boolean): StatusCause[] {
  const template = at(obj, 'spec', 'template');
  if (!isPlainObject(template)) return [cause.required('spec.template')];
  const causes: StatusCause[] = [];
  const labels = record(template, 'metadata', 'labels') as Record<string, string>;
  if (selector.requirements.length > 0 && !matchesLabels(selector, labels)) {
    causes.push(invalidGo('spec.template.metadata.labels', goStringMap(at(template, 'metadata', 'labels')), '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodSpec(template['spec'], 'spec.template.spec'));
  const restart = str(template, 'spec', 'restartPolicy');
  if (restartAlways && restart !== 'Always') causes.push(cause.notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  if (at(template, 'spec', 'activeDeadlineSeconds') !== undefined) {
    causes.push(cause.forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in ReplicaSet is not Supported'));
  }
  return causes;
}

/** A metav1.LabelSelector spec.selector and the template it must match (Deployments, ReplicaSets, StatefulSets, DaemonSets). */
export function selectorAndTemplate(obj: KObject, kind: string): StatusCause[] {
  const raw = at(obj, 'spec', 'selector');
  // Without a selector kube checks no further (ValidateDeploymentSpec and kin).
  if (!isPlainObject(raw)) return [cause.required('spec.selector')];
  const causes: StatusCause[] = [];
  if (Object.keys(record(raw, 'matchLabels')).length + list(raw, 'matchExpressions').length === 0) {
    causes.push(invalidGo('spec.selector', goLabelSelector(raw), `empty selector is invalid for ${kind}`));
  }
  let selector: LabelSelector | undefined;
  try {
    selector = labelSelectorFromObject(raw);
  } catch (err) {
    causes.push(invalidGo('spec.selector', goLabelSelector(raw), (err as Error).message));
  }
  causes.push(...nonNegative(obj, 'spec.replicas', 'spec', 'replicas'), ...nonNegative(obj, 'spec.minReadySeconds', 'spec', 'minReadySeconds'));
  if (selector) causes.push(...templateCauses(obj, selector, true));
  return causes;
}

/** ValidateImmutableField of spec.selector (apps/v1 selectors never change). */
export function immutableSelector(obj: KObject, old: KObject | undefined): StatusCause[] {
  if (!old || sameJson(at(obj, 'spec', 'selector'), at(old, 'spec', 'selector'))) return [];
  return [invalidGo('spec.selector', goLabelSelector(at(obj, 'spec', 'selector')), 'field is immutable')];
}

/** A ReplicationController: a map selector (defaulted from the template's labels), the template matching it. */
export function validateReplicationController(obj: KObject): StatusCause[] {
  const selector = record(obj, 'spec', 'selector');
  const causes: StatusCause[] = [...nonNegative(obj, 'spec.replicas', 'spec', 'replicas')];
  if (Object.keys(selector).length === 0) causes.push(cause.required('spec.selector'));
  const template = at(obj, 'spec', 'template');
  if (!isPlainObject(template)) return [...causes, cause.required('spec.template')];
  const labels = record(template, 'metadata', 'labels');
  if (Object.keys(selector).some((k) => !Object.hasOwn(labels, k) || labels[k] !== selector[k])) {
    causes.push(invalidGo('spec.template.metadata.labels', goStringMap(at(template, 'metadata', 'labels')), '`selector` does not match template `labels`'));
  }
  causes.push(...validatePodSpec(template['spec'], 'spec.template.spec'));
  const restart = str(template, 'spec', 'restartPolicy');
  if (restart !== 'Always') causes.push(cause.notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  return causes;
}
