// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy (with /status,
// written by the typeChecking controller) and ValidatingAdmissionPolicyBinding:
// CEL validations the core backend's admission runs on writes
// (backends/core/admission/policies). The webhook configurations of the same
// group are in admissionregistration.ts.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, str } from '../fields.js';
import { defaultBinding, validateBinding } from './admissionbinding-validation.js';
import { defaultPolicy, validatePolicy, validatePolicyStatus } from './admissionpolicy-validation.js';
import { labelSelectorText } from './admissionrules-validation.js';

const GROUP = 'admissionregistration.k8s.io';

/** kube's ParamKind cell: `<apiVersion>/<kind>`, `<unset>` without one. */
function paramKindCell(o: KObject): string {
  const pk = at(o, 'spec', 'paramKind');
  return pk === undefined || pk === null ? '<unset>' : `${str(pk, 'apiVersion')}/${str(pk, 'kind')}`;
}

/** kube's ParamRef cell: `ns/name` (`*` for the namespace when none is set), the selector, or `<unset>`. */
function paramRefCell(o: KObject): string {
  const ref = at(o, 'spec', 'paramRef');
  if (ref === undefined || ref === null) return '<unset>';
  const name = str(ref, 'name');
  if (name !== '') return `${str(ref, 'namespace') || '*'}/${name}`;
  const sel = at(ref, 'selector');
  return sel === undefined || sel === null ? '<unset>' : labelSelectorText(sel);
}

export const validatingadmissionpolicies: ResourceType = {
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicy',
  listKind: 'ValidatingAdmissionPolicyList',
  plural: 'validatingadmissionpolicies',
  singular: 'validatingadmissionpolicy',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'ValidatingAdmissionPolicy', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec',
  columns: [
    nameColumn(),
    column('Validations', 'Validations indicates the number of validation rules defined in this configuration', (o) => list(o, 'spec', 'validations').length, {
      type: 'integer',
    }),
    column('ParamKind', 'ParamKind specifies the kind of resources used to parameterize this policy', paramKindCell),
    ageColumn(),
  ],
  fieldSelectors: {},
  defaults: defaultPolicy,
  validate: (obj, old) => [...validatePolicy(obj, old), ...validatePolicyStatus(obj)],
};

export const validatingadmissionpolicybindings: ResourceType = {
  group: GROUP,
  version: 'v1',
  kind: 'ValidatingAdmissionPolicyBinding',
  listKind: 'ValidatingAdmissionPolicyBindingList',
  plural: 'validatingadmissionpolicybindings',
  singular: 'validatingadmissionpolicybinding',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  verbs: ALL_VERBS,
  subresources: [],
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec',
  columns: [
    nameColumn(),
    column('PolicyName', 'PolicyName indicates the policy definition which the policy binding binded to', (o) => str(o, 'spec', 'policyName')),
    column('ParamRef', 'ParamRef indicates the param resource which sets the configration param', paramRefCell),
    ageColumn(),
  ],
  fieldSelectors: {},
  defaults: defaultBinding,
  validate: (obj) => validateBinding(obj),
};

export const ADMISSION_POLICY_TYPES: readonly ResourceType[] = [validatingadmissionpolicies, validatingadmissionpolicybindings];
