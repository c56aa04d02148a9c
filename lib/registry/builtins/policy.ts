// policy/v1: PodDisruptionBudgets, stored and served as kube-apiserver 1.33
// does (pkg/registry/policy/poddisruptionbudget, pkg/apis/policy/validation).
// No disruption controller computes their status.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { labelSelectorFromObject } from '../../api/selectors.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, num, str } from '../fields.js';
import { builtinType, statusOf } from './group-type.js';
import { goLabelSelector } from './workload-validation.js';

const intOrPercent = (v: unknown): string => (v === undefined || v === null ? 'N/A' : String(v));

/** ValidatePositiveIntOrPercent and IsValidPercent with the 100% bound. */
function intOrPercentCauses(v: unknown, field: string): StatusCause[] {
  if (v === undefined || v === null) return [];
  if (typeof v === 'number') return v < 0 ? [cause.invalid(field, v, 'must be greater than or equal to 0')] : [];
  const m = typeof v === 'string' ? /^([0-9]+)%$/.exec(v) : null;
  if (!m)
    return [
      cause.invalid(
        field,
        v,
        "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
      ),
    ];
  return Number(m[1]) > 100 ? [cause.invalid(field, v, 'must not be greater than 100%')] : [];
}

function validatePdb(obj: KObject): StatusCause[] {
  const spec = at(obj, 'spec');
  const causes: StatusCause[] = [];
  if (at(spec, 'minAvailable') !== undefined && at(spec, 'maxUnavailable') !== undefined) {
    causes.push({ reason: 'FieldValueInvalid', field: 'spec', message: 'Invalid value: "object": minAvailable and maxUnavailable cannot be both set' });
  }
  causes.push(...intOrPercentCauses(at(spec, 'minAvailable'), 'spec.minAvailable'), ...intOrPercentCauses(at(spec, 'maxUnavailable'), 'spec.maxUnavailable'));
  const selector = at(spec, 'selector');
  if (isPlainObject(selector)) {
    try {
      labelSelectorFromObject(selector);
    } catch (err) {
      causes.push({ reason: 'FieldValueInvalid', field: 'spec.selector', message: `Invalid value: ${goLabelSelector(selector)}: ${(err as Error).message}` });
    }
  }
  const policy = str(spec, 'unhealthyPodEvictionPolicy');
  if (policy !== '' && policy !== 'IfHealthyBudget' && policy !== 'AlwaysAllow') {
    causes.push(cause.notSupported('spec.unhealthyPodEvictionPolicy', policy, ['AlwaysAllow', 'IfHealthyBudget']));
  }
  return causes;
}

export const poddisruptionbudgets = builtinType('policy', 'PodDisruptionBudget', 'poddisruptionbudgets', {
  namespaced: true,
  shortNames: ['pdb'],
  subresources: [statusOf('PodDisruptionBudget')],
  generation: 'spec',
  columns: [
    nameColumn(),
    column('Min Available', 'The minimum number of pods that must be available.', (o) => intOrPercent(at(o, 'spec', 'minAvailable'))),
    column('Max Unavailable', 'The maximum number of pods that may be unavailable.', (o) => intOrPercent(at(o, 'spec', 'maxUnavailable'))),
    column('Allowed Disruptions', 'Calculated number of pods that may be disrupted at this time.', (o) => num(o, 'status', 'disruptionsAllowed'), {
      type: 'integer',
    }),
    ageColumn(),
  ],
  validate: validatePdb,
});

export const POLICY_TYPES: readonly ResourceType[] = [poddisruptionbudgets];
