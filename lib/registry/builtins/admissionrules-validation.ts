// kube's validation of what admission configurations share
// (pkg/apis/admissionregistration/validation): rules with operations,
// label selectors (metav1validation.ValidateLabelSelector, strict), the
// policies' matchResources and CEL match conditions.
import { compileAdmission, RETURNS_BOOL, type AdmissionDeclarations } from '../../cel/admission.js';
import { isPlainObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { at, list, record, str } from '../fields.js';
import { isQualifiedName, isValidLabelValue, isValidPathSegmentName } from '../names.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MATCH_POLICIES = ['Equivalent', 'Exact'];
const SELECTOR_OPERATORS = new Set(['In', 'NotIn', 'Exists', 'DoesNotExist']);

/** Go's %#v of a []string, as kube prints a list value. */
export function goStrings(v: readonly unknown[]): string {
  return `[]string{${v.map((x) => JSON.stringify(String(x))).join(', ')}}`;
}

export const invalidList = (field: string, v: readonly unknown[], detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  field,
  message: `Invalid value: ${goStrings(v)}: ${detail}`,
});

const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : '')) : []);

function validateResources(resources: string[], path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (resources.length === 0) out.push(cause.required(path));
  const withWildcardSub = new Set<string>();
  const subWithWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let plain = false;
  resources.forEach((r, i) => {
    if (r === '') {
      out.push(cause.required(`${path}[${i}]`));
      return;
    }
    if (r === '*/*') doubleWildcard = true;
    if (r === '*') singleWildcard = true;
    const slash = r.indexOf('/');
    if (slash < 0) {
      plain = r !== '*';
      return;
    }
    const res = r.slice(0, slash);
    const sub = r.slice(slash + 1);
    if (withWildcardSub.has(res)) out.push(cause.invalid(`${path}[${i}]`, r, `if '${res}/*' is present, must not specify ${r}`));
    if (subWithWildcardRes.has(sub)) out.push(cause.invalid(`${path}[${i}]`, r, `if '*/${sub}' is present, must not specify ${r}`));
    if (sub === '*') withWildcardSub.add(res);
    if (res === '*') subWithWildcardRes.add(sub);
  });
  if (resources.length > 1 && doubleWildcard) out.push(invalidList(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && plain) out.push(invalidList(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return out;
}

/** kube's validateRuleWithOperations; `path` is the rule's own path. */
export function validateRuleWithOperations(rule: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const ops = strs(at(rule, 'operations'));
  if (ops.length === 0) out.push(cause.required(`${path}.operations`));
  if (ops.length > 1 && ops.includes('*')) out.push(invalidList(`${path}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((o, i) => {
    if (!OPERATIONS.includes(o)) out.push(cause.notSupported(`${path}.operations[${i}]`, o, OPERATIONS));
  });
  const groups = strs(at(rule, 'apiGroups'));
  if (groups.length === 0) out.push(cause.required(`${path}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) out.push(invalidList(`${path}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions = strs(at(rule, 'apiVersions'));
  if (versions.length === 0) out.push(cause.required(`${path}.apiVersions`));
  if (versions.length > 1 && versions.includes('*'))
    out.push(invalidList(`${path}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') out.push(cause.required(`${path}.apiVersions[${i}]`));
  });
  out.push(...validateResources(strs(at(rule, 'resources')), `${path}.resources`));
  const scope = at(rule, 'scope');
  if (scope !== undefined && scope !== null && !SCOPES.includes(String(scope))) out.push(cause.notSupported(`${path}.scope`, scope, SCOPES));
  return out;
}

/** metav1validation.ValidateLabelSelector without AllowInvalidLabelValueInSelector. */
export function validateLabelSelector(sel: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isPlainObject(sel)) return out;
  list(sel, 'matchExpressions').forEach((e, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    const op = str(e, 'operator');
    const values = strs(at(e, 'values'));
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0) out.push(cause.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0) out.push(cause.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else if (!SELECTOR_OPERATORS.has(op)) {
      out.push(cause.invalid(`${p}.operator`, op, 'not a valid selector operator'));
    }
    for (const m of isQualifiedName(str(e, 'key'))) out.push(cause.invalid(`${p}.key`, str(e, 'key'), m));
    values.forEach((v, j) => {
      for (const m of isValidLabelValue(v)) out.push(cause.invalid(`${p}.values[${j}]`, v, m));
    });
  });
  const labels = record(sel, 'matchLabels');
  for (const k of Object.keys(labels)) {
    for (const m of isQualifiedName(k)) out.push(cause.invalid(`${path}.matchLabels`, k, m));
    const v = typeof labels[k] === 'string' ? (labels[k] as string) : '';
    for (const m of isValidLabelValue(v)) out.push(cause.invalid(`${path}.matchLabels`, v, m));
  }
  return out;
}

function validateNamedRule(rule: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  strs(at(rule, 'resourceNames')).forEach((n, i) => {
    for (const m of isValidPathSegmentName(n)) out.push(cause.invalid(`${path}.resourceNames[${i}]`, n, m));
    if (seen.has(n)) out.push(cause.duplicate(`${path}.resourceNames[${i}]`, n));
    seen.add(n);
  });
  return [...out, ...validateRuleWithOperations(rule, path)];
}

/** kube's validateMatchResources (a policy's matchConstraints, a binding's matchResources). */
export function validateMatchResources(mr: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isPlainObject(mr)) return out;
  const policy = mr['matchPolicy'];
  if (policy === undefined || policy === null) out.push(cause.required(`${path}.matchPolicy`));
  else if (!MATCH_POLICIES.includes(String(policy))) out.push(cause.notSupported(`${path}.matchPolicy`, policy, MATCH_POLICIES));
  for (const s of ['namespaceSelector', 'objectSelector']) {
    if (mr[s] === undefined || mr[s] === null) out.push(cause.required(`${path}.${s}`));
    else out.push(...validateLabelSelector(mr[s], `${path}.${s}`));
  }
  list(mr, 'resourceRules').forEach((r, i) => out.push(...validateNamedRule(r, `${path}.resourceRules[${i}]`)));
  list(mr, 'excludeResourceRules').forEach((r, i) => out.push(...validateNamedRule(r, `${path}.excludeResourceRules[${i}]`)));
  return out;
}

/** kube's validateMatchConditions: at most 64, names qualified and unique, expressions compiled (bool). */
export function validateMatchConditions(conditions: readonly unknown[], decls: AdmissionDeclarations, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (conditions.length > 64) out.push({ reason: 'FieldValueTooMany', field: path, message: `Too many: ${conditions.length}: must have at most 64 items` });
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const expr = str(c, 'expression').trim();
    if (expr === '') out.push(cause.required(`${p}.expression`));
    else {
      const r = compileAdmission(expr, { ...decls, variables: false }, RETURNS_BOOL);
      if ('error' in r) out.push(cause.invalid(`${p}.expression`, expr, r.error));
    }
    const name = str(c, 'name');
    if (name === '') out.push(cause.required(`${p}.name`));
    else for (const m of isQualifiedName(name)) out.push(cause.invalid(`${p}.name`, name, m));
    if (name !== '') {
      if (names.has(name)) out.push(cause.duplicate(`${p}.name`, name));
      names.add(name);
    }
  });
  return out;
}

/** metav1.FormatLabelSelector: `a=b,c in (x,y),!d`; `<none>` for the empty selector. */
export function labelSelectorText(sel: unknown): string {
  const parts: string[] = [];
  const labels = record(sel, 'matchLabels');
  for (const k of Object.keys(labels).sort()) parts.push(`${k}=${String(labels[k])}`);
  for (const e of list(sel, 'matchExpressions')) {
    const key = str(e, 'key');
    const values = strs(at(e, 'values')).sort().join(',');
    const op = str(e, 'operator');
    if (op === 'In') parts.push(`${key} in (${values})`);
    else if (op === 'NotIn') parts.push(`${key} notin (${values})`);
    else if (op === 'Exists') parts.push(key);
    else if (op === 'DoesNotExist') parts.push(`!${key}`);
  }
  return parts.length ? parts.join(',') : '<none>';
}
