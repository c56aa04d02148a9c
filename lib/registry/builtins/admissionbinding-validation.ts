// Defaults and validation of ValidatingAdmissionPolicyBinding, after kube's
// admissionregistration v1 defaults and validation: the policy's name, the
// paramRef (name or selector, parameterNotFoundAction), matchResources and
// the validation actions.
import type { KObject } from '../../api/meta.js';
import { isPlainObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { record, str } from '../fields.js';
import { isDNS1123Subdomain, isValidPathSegmentName } from '../names.js';
import { defaultMatchResources } from './admissionpolicy-validation.js';
import { invalidList, validateLabelSelector, validateMatchResources } from './admissionrules-validation.js';

const ACTIONS = ['Audit', 'Deny', 'Warn'];
const NOT_FOUND_ACTIONS = ['Deny', 'Allow'];

export function defaultBinding(obj: KObject): void {
  if (!isPlainObject(obj['spec'])) return;
  const spec = obj['spec'];
  if (isPlainObject(spec['matchResources'])) defaultMatchResources(spec['matchResources']);
  const ref = spec['paramRef'];
  if (isPlainObject(ref) && (ref['parameterNotFoundAction'] === undefined || ref['parameterNotFoundAction'] === null)) ref['parameterNotFoundAction'] = 'Deny';
}

function validateParamRef(ref: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isPlainObject(ref)) return out;
  const name = str(ref, 'name');
  const hasSelector = ref['selector'] !== undefined && ref['selector'] !== null;
  if (name !== '') {
    for (const m of isValidPathSegmentName(name)) out.push(cause.invalid(`${path}.name`, name, m));
    if (hasSelector) out.push(cause.forbidden(`${path}.name`, 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    out.push(...validateLabelSelector(ref['selector'], `${path}.selector`));
    if (name !== '') out.push(cause.forbidden(`${path}.selector`, 'name and selector are mutually exclusive'));
  }
  if (name === '' && !hasSelector) out.push(cause.required(path, 'one of name or selector must be specified'));
  const action = ref['parameterNotFoundAction'];
  if (action === undefined || action === null || action === '') out.push(cause.required(`${path}.parameterNotFoundAction`));
  else if (!NOT_FOUND_ACTIONS.includes(String(action))) out.push(cause.notSupported(`${path}.parameterNotFoundAction`, action, NOT_FOUND_ACTIONS));
  return out;
}

export function validateBinding(obj: KObject): StatusCause[] {
  const out: StatusCause[] = [];
  const spec = record(obj, 'spec');
  const policyName = str(spec, 'policyName');
  if (policyName === '') out.push(cause.required('spec.policyName'));
  else for (const m of isDNS1123Subdomain(policyName)) out.push(cause.invalid('spec.policyName', policyName, m));
  out.push(...validateParamRef(spec['paramRef'], 'spec.paramRef'));
  // kube's path really is spelled so.
  out.push(...validateMatchResources(spec['matchResources'], 'spec.matchResouces'));
  const actions = Array.isArray(spec['validationActions']) ? (spec['validationActions'] as unknown[]).map(String) : [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!ACTIONS.includes(a)) out.push(cause.notSupported(`spec.validationActions[${i}]`, a, ACTIONS));
    if (seen.has(a)) out.push(cause.duplicate(`spec.validationActions[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    out.push(
      invalidList(
        'spec.validationActions',
        actions,
        'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
      ),
    );
  if (seen.size === 0) out.push(cause.required('spec.validationActions', 'at least one validation action is required'));
  return out;
}
