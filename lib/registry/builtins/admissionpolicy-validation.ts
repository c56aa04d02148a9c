// Defaults and validation of ValidatingAdmissionPolicy (its bindings: admissionbinding-validation.ts), after
// kube's admissionregistration v1 defaults and validation: every CEL
// expression is compiled at write in the environment it will run in (params
// only with a paramKind, variables only when the policy has some, no
// authorizer in message expressions), with kube's field paths and details.
import { compileAdmission, RETURNS_BOOL, RETURNS_STRING, RETURNS_STRING_OR_NULL, type AdmissionDeclarations } from '../../cel/admission.js';
import { DYN, type CelT } from '../../cel/types.js';
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { RESERVED } from '../../crdschema/celschema.js';
import { at, list, record, sameJson, str } from '../fields.js';
import { isDNS1035Label, isDNS1123Subdomain, isQualifiedName } from '../names.js';
import { validateMatchConditions, validateMatchResources } from './admissionrules-validation.js';

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const REASONS = ['Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const MAX_AUDIT_ANNOTATIONS = 20;
const MAX_AUDIT_VALUE_EXPRESSION = 5 * 1024;
const CEL_IDENTIFIER = /^[_a-zA-Z][_a-zA-Z0-9]*$/;

/** kube's SetDefaults_MatchResources and SetDefaults_Rule (scope `*`). */
export function defaultMatchResources(mr: Record<string, unknown>): void {
  if (mr['matchPolicy'] === undefined || mr['matchPolicy'] === null) mr['matchPolicy'] = 'Equivalent';
  if (mr['namespaceSelector'] === undefined || mr['namespaceSelector'] === null) mr['namespaceSelector'] = {};
  if (mr['objectSelector'] === undefined || mr['objectSelector'] === null) mr['objectSelector'] = {};
  for (const k of ['resourceRules', 'excludeResourceRules']) {
    const rules = mr[k];
    if (!Array.isArray(rules)) continue;
    for (const r of rules) if (isPlainObject(r) && (r['scope'] === undefined || r['scope'] === null)) r['scope'] = '*';
  }
}

export function defaultPolicy(obj: KObject): void {
  if (!isPlainObject(obj['spec'])) return;
  const spec = obj['spec'];
  if (spec['failurePolicy'] === undefined || spec['failurePolicy'] === null) spec['failurePolicy'] = 'Fail';
  if (isPlainObject(spec['matchConstraints'])) defaultMatchResources(spec['matchConstraints']);
}

function validateParamKind(pk: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const apiVersion = str(pk, 'apiVersion');
  if (apiVersion === '') out.push(cause.required(`${path}.apiVersion`));
  else if (apiVersion.split('/').length > 2) out.push(cause.invalid(`${path}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  else if (apiVersion !== '/') {
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
    if (group) {
      const errs = isDNS1123Subdomain(group!);
      if (errs.length) out.push(cause.invalid(`${path}.apiVersion`, group, errs.join(',')));
    }
    if (!version) out.push(cause.invalid(`${path}.apiVersion`, apiVersion, 'version must be specified'));
    else {
      const errs = isDNS1035Label(version);
      if (errs.length) out.push(cause.invalid(`${path}.apiVersion`, version, errs.join(',')));
    }
  }
  const kind = str(pk, 'kind');
  if (kind === '') out.push(cause.required(`${path}.kind`));
  else {
    const errs = isDNS1035Label(kind.toLowerCase());
    if (errs.length) out.push(cause.invalid(`${path}.kind`, kind, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
  }
  return out;
}

const isCelIdentifier = (s: string) => CEL_IDENTIFIER.test(s) && !RESERVED.has(s);

function validateSpec(obj: KObject, spec: Record<string, unknown>, old: KObject | undefined): StatusCause[] {
  const out: StatusCause[] = [];
  const fp = spec['failurePolicy'];
  if (fp === undefined || fp === null) out.push(cause.required('spec.failurePolicy'));
  else if (!FAILURE_POLICIES.includes(String(fp))) out.push(cause.notSupported('spec.failurePolicy', fp, FAILURE_POLICIES));
  const hasParams = spec['paramKind'] !== undefined && spec['paramKind'] !== null;
  if (hasParams) out.push(...validateParamKind(spec['paramKind'], 'spec.paramKind'));
  const mc = spec['matchConstraints'];
  if (mc === undefined || mc === null) out.push(cause.required('spec.matchConstraints'));
  else {
    out.push(...validateMatchResources(mc, 'spec.matchConstraints'));
    if (list(mc, 'resourceRules').length === 0) out.push(cause.required('spec.matchConstraints.resourceRules'));
  }
  // kube skips match conditions an update leaves as they were (with the same paramKind).
  const oldSpec = old ? record(old, 'spec') : undefined;
  const keepConditions =
    oldSpec !== undefined && sameJson(oldSpec['paramKind'], spec['paramKind']) && sameJson(oldSpec['matchConditions'], spec['matchConditions']);
  if (!keepConditions)
    out.push(...validateMatchConditions(list(spec, 'matchConditions'), { params: hasParams, authorizer: true, variables: false }, 'spec.matchConditions'));
  const variables = list(spec, 'variables');
  const composed = variables.length > 0;
  const decls: AdmissionDeclarations = { params: hasParams, authorizer: true, variables: composed };
  const types = new Map<string, CelT>();
  variables.forEach((v, i) => {
    const p = `spec.variables[${i}]`;
    const name = str(v, 'name');
    if (name.trim() === '') out.push(cause.required(`${p}.name`, 'name is not specified'));
    else if (!isCelIdentifier(name)) out.push(cause.invalid(`${p}.name`, name, 'name is not a valid CEL identifier'));
    const expr = str(v, 'expression');
    let type: CelT = DYN;
    if (expr.trim() === '') out.push(cause.required(`${p}.expression`, 'expression is not specified'));
    else {
      const r = compileAdmission(expr, decls, 'any', { variables: types });
      if ('error' in r) out.push(cause.invalid(`${p}.expression`, expr, r.error));
      else type = r.type;
    }
    types.set(name, type);
  });
  const validations = list(spec, 'validations');
  const annotations = list(spec, 'auditAnnotations');
  if (validations.length === 0 && annotations.length === 0) {
    out.push(cause.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
    out.push(cause.required('spec.auditAnnotations', 'validations or auditAnnotations must contain at least one item'));
    return out;
  }
  validations.forEach((v, i) => out.push(...validateValidation(v, `spec.validations[${i}]`, decls, types)));
  if (annotations.length > MAX_AUDIT_ANNOTATIONS)
    out.push(cause.invalid('spec.auditAnnotations', '…', `must not have more than ${MAX_AUDIT_ANNOTATIONS} auditAnnotations`));
  const keys = new Set<string>();
  const policyName = str(obj, 'metadata', 'name');
  annotations.forEach((a, i) => {
    const p = `spec.auditAnnotations[${i}]`;
    const key = str(a, 'key');
    if (policyName !== '') for (const m of isQualifiedName(`${policyName}/${key}`)) out.push(cause.invalid(`${p}.key`, `${policyName}/${key}`, m));
    else out.push(cause.invalid(`${p}.key`, key, 'requires metadata.name be non-empty'));
    const value = str(a, 'valueExpression');
    const trimmed = value.trim();
    if (trimmed === '') out.push(cause.required(`${p}.valueExpression`, 'valueExpression is not specified'));
    else if (trimmed.length > MAX_AUDIT_VALUE_EXPRESSION)
      out.push(cause.required(`${p}.valueExpression`, `must not exceed ${MAX_AUDIT_VALUE_EXPRESSION} bytes in length`));
    else {
      const r = compileAdmission(trimmed, decls, RETURNS_STRING_OR_NULL, { variables: types });
      if ('error' in r) out.push(cause.invalid(`${p}.valueExpression`, value, r.error));
    }
    if (keys.has(key)) out.push(cause.duplicate(`${p}.key`, key));
    keys.add(key);
  });
  return out;
}

function validateValidation(v: unknown, p: string, decls: AdmissionDeclarations, types: ReadonlyMap<string, CelT>): StatusCause[] {
  const out: StatusCause[] = [];
  const expr = str(v, 'expression');
  if (expr.trim() === '') out.push(cause.required(`${p}.expression`, 'expression is not specified'));
  else {
    const r = compileAdmission(expr, decls, RETURNS_BOOL, { variables: types });
    if ('error' in r) out.push(cause.invalid(`${p}.expression`, expr, r.error));
  }
  const me = str(v, 'messageExpression');
  if (me.length > 0 && me.trim() === '') out.push(cause.invalid(`${p}.messageExpression`, me, 'must be non-empty if specified'));
  else if (me.trim() !== '') {
    // kube compiles message expressions without the authorizer.
    const r = compileAdmission(me, { ...decls, authorizer: false }, RETURNS_STRING, { variables: types });
    if ('error' in r) out.push(cause.invalid(`${p}.messageExpression`, me, r.error));
  }
  const msg = str(v, 'message');
  if (msg.length > 0 && msg.trim() === '') out.push(cause.invalid(`${p}.message`, msg, 'message must be non-empty if specified'));
  else if (/[\n\r]/.test(msg.trim())) out.push(cause.invalid(`${p}.message`, msg, 'message must not contain line breaks'));
  const reason = at(v, 'reason');
  if (reason !== undefined && reason !== null && !REASONS.includes(String(reason))) out.push(cause.notSupported(`${p}.reason`, reason, REASONS));
  return out;
}

export function validatePolicy(obj: KObject, old: KObject | undefined): StatusCause[] {
  const spec = obj['spec'];
  return validateSpec(obj, isPlainObject(spec) ? spec : {}, old);
}

/** The status as the typeChecking controller writes it: each warning names its field and says something. */
export function validatePolicyStatus(obj: KObject): StatusCause[] {
  const out: StatusCause[] = [];
  list(obj, 'status', 'typeChecking', 'expressionWarnings').forEach((w, i) => {
    const p = `status.typeChecking.expressionWarnings[${i}]`;
    if (str(w, 'warning') === '') out.push(cause.required(`${p}.warning`));
    if (str(w, 'fieldRef').trim() === '') out.push(cause.required(`${p}.fieldRef`));
  });
  return out;
}
