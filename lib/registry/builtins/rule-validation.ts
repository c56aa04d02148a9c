// kube's validateRuleWithOperations: the admission rules of webhooks and of
// policies' matchResources, with kube's paths and words.
import { cause, type StatusCause } from '../../api/status.js';
import { at, list } from '../fields.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];

const strs = (v: readonly unknown[]) => v.map((x) => (typeof x === 'string' ? x : String(x)));

/** validateResources (subresources allowed). */
function validateResources(resources: string[], path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (resources.length === 0) causes.push(cause.required(path));
  const wildSub = new Set<string>();
  const wildRes = new Set<string>();
  let doubleWild = false;
  let singleWild = false;
  let plain = false;
  resources.forEach((rs, i) => {
    if (rs === '') {
      causes.push(cause.required(`${path}[${i}]`));
      return;
    }
    if (rs === '*/*') doubleWild = true;
    if (rs === '*') singleWild = true;
    const slash = rs.indexOf('/');
    if (slash < 0) {
      plain = rs !== '*';
      return;
    }
    const res = rs.slice(0, slash);
    const sub = rs.slice(slash + 1);
    if (wildSub.has(res)) causes.push(cause.invalid(`${path}[${i}]`, rs, `if '${res}/*' is present, must not specify ${rs}`));
    if (wildRes.has(sub)) causes.push(cause.invalid(`${path}[${i}]`, rs, `if '*/${sub}' is present, must not specify ${rs}`));
    if (sub === '*') wildSub.add(res);
    if (res === '*') wildRes.add(sub);
  });
  if (resources.length > 1 && doubleWild) causes.push(cause.invalid(path, resources, "if '*/*' is present, must not specify other resources"));
  if (singleWild && plain) causes.push(cause.invalid(path, resources, "if '*' is present, must not specify other resources without subresources"));
  return causes;
}

export function validateRuleWithOperations(rule: unknown, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const ops = strs(list(rule, 'operations'));
  if (ops.length === 0) causes.push(cause.required(`${path}.operations`));
  if (ops.length > 1 && ops.includes('*')) causes.push(cause.invalid(`${path}.operations`, ops, "if '*' is present, must not specify other operations"));
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) causes.push(cause.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strs(list(rule, 'apiGroups'));
  if (groups.length === 0) causes.push(cause.required(`${path}.apiGroups`));
  if (groups.length > 1 && groups.includes('*'))
    causes.push(cause.invalid(`${path}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  const versions = strs(list(rule, 'apiVersions'));
  if (versions.length === 0) causes.push(cause.required(`${path}.apiVersions`));
  if (versions.length > 1 && versions.includes('*'))
    causes.push(cause.invalid(`${path}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  versions.forEach((v, i) => {
    if (v === '') causes.push(cause.required(`${path}.apiVersions[${i}]`));
  });
  causes.push(...validateResources(strs(list(rule, 'resources')), `${path}.resources`));
  const scope = at(rule, 'scope');
  if (scope !== undefined && scope !== null && !SCOPES.includes(String(scope))) causes.push(cause.notSupported(`${path}.scope`, scope, SCOPES));
  return causes;
}
