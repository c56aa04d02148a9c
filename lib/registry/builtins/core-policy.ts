// The core group's namespace policy kinds: LimitRanges (kube's
// SetDefaults_LimitRangeItem and ValidateLimitRange) and ResourceQuotas (with
// /status and kube's REQUEST/LIMIT columns), as kube-apiserver 1.33 serves
// them (pkg/registry/core/limitrange, resourcequota; pkg/apis/core/validation).
// The LimitRanger and ResourceQuota admission plugins and the resourcequota
// controller apply them (backends/core/admission/, backends/core/controllers/).
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, createdAtColumn, nameColumn } from '../columns.js';
import { list, record, str } from '../fields.js';
import { isQualifiedName } from '../names.js';
import { statusOf } from './group-type.js';
import { core } from './core.js';
import { compareQuantities, quantityCauses, quantityOf, quantitySign } from './quantities.js';

type Obj = Record<string, unknown>;
const MAPS = ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'] as const;

/** SetDefaults_LimitRangeItem: a Container item's default limit from max, its default request from the default, else min. */
export function defaultLimitRange(o: KObject): void {
  for (const item of list(o, 'spec', 'limits')) {
    if (!isPlainObject(item) || item['type'] !== 'Container') continue;
    const def: Obj = { ...record(item, 'default') };
    const req: Obj = { ...record(item, 'defaultRequest') };
    for (const [k, v] of Object.entries(record(item, 'max'))) if (!Object.hasOwn(def, k)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!Object.hasOwn(req, k)) req[k] = v;
    for (const [k, v] of Object.entries(record(item, 'min'))) if (!Object.hasOwn(req, k)) req[k] = v;
    // Empty maps are omitted, as Go writes them.
    if (Object.keys(def).length > 0) item['default'] = def;
    if (Object.keys(req).length > 0) item['defaultRequest'] = req;
  }
}

const STANDARD_CONTAINER = new Set(['cpu', 'memory', 'ephemeral-storage']);
const isHugePages = (k: string) => k.startsWith('hugepages-');
/** Resources kube lets a container's request be lower than its limit (helper.IsOvercommitAllowed). */
const overcommits = (k: string) => (STANDARD_CONTAINER.has(k) || !k.includes('/')) && !isHugePages(k);

/** validateLimitRangeResourceName: a qualified name, and for pod and container items a container resource. */
function resourceNameCauses(type: string, name: string, field: string): StatusCause[] {
  const causes = isQualifiedName(name).map((m) => cause.invalid(field, name, m));
  if (causes.length > 0) return causes;
  if (name.includes('/')) return [];
  if (type === 'PersistentVolumeClaim') return name === 'storage' ? [] : [cause.invalid(field, name, 'must be a standard resource type or fully qualified')];
  if (type === 'Container' || type === 'Pod')
    return STANDARD_CONTAINER.has(name) || isHugePages(name) ? [] : [cause.invalid(field, name, 'must be a standard resource for containers')];
  return [];
}

const text = (v: unknown): string => String(v);

/** ValidateLimitRange. */
function validateLimitRange(o: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  list(o, 'spec', 'limits').forEach((raw, i) => {
    const item = isPlainObject(raw) ? raw : {};
    const path = `spec.limits[${i}]`;
    const type = str(item, 'type');
    causes.push(...isQualifiedName(type).map((m) => cause.invalid(`${path}.type`, type, m)));
    if (seen.has(type)) causes.push(cause.duplicate(`${path}.type`, type));
    seen.add(type);
    const maps: Record<string, Obj> = {};
    const keys = new Set<string>();
    for (const m of MAPS) {
      maps[m] = { ...record(item, m) };
      if (type === 'Pod' && (m === 'default' || m === 'defaultRequest')) {
        if (Object.keys(maps[m]).length > 0) causes.push(cause.forbidden(`${path}.${m}`, "may not be specified when `type` is 'Pod'"));
        maps[m] = {};
        continue;
      }
      for (const [k, v] of Object.entries(maps[m])) {
        const field = `${path}.${m}[${k}]`;
        causes.push(...resourceNameCauses(type, k, field), ...quantityCauses(v, field));
        if (quantityOf(v) === undefined) delete maps[m][k];
        keys.add(k);
      }
    }
    if (type === 'PersistentVolumeClaim' && !Object.hasOwn(record(item, 'min'), 'storage') && !Object.hasOwn(record(item, 'max'), 'storage'))
      causes.push(cause.required(`${path}.limits`, 'either minimum or maximum storage value is required, but neither was provided'));
    for (const k of [...keys].sort()) {
      const [max, min, def, req, ratio] = MAPS.map((m) => (Object.hasOwn(maps[m]!, k) ? maps[m]![k] : undefined));
      const gt = (a: unknown, b: unknown) => a !== undefined && b !== undefined && (compareQuantities(a, b) ?? 0) > 0;
      if (gt(min, max)) causes.push(cause.invalid(`${path}.min[${k}]`, min, `min value ${text(min)} is greater than max value ${text(max)}`));
      if (gt(min, req))
        causes.push(cause.invalid(`${path}.defaultRequest[${k}]`, req, `min value ${text(min)} is greater than default request value ${text(req)}`));
      if (gt(req, max))
        causes.push(cause.invalid(`${path}.defaultRequest[${k}]`, req, `default request value ${text(req)} is greater than max value ${text(max)}`));
      if (gt(req, def))
        causes.push(cause.invalid(`${path}.defaultRequest[${k}]`, req, `default request value ${text(req)} is greater than default limit value ${text(def)}`));
      if (gt(min, def)) causes.push(cause.invalid(`${path}.default[${k}]`, min, `min value ${text(min)} is greater than default value ${text(def)}`));
      if (gt(def, max)) causes.push(cause.invalid(`${path}.default[${k}]`, max, `default value ${text(def)} is greater than max value ${text(max)}`));
      if (ratio !== undefined && (compareQuantities(ratio, 1) ?? 0) < 0)
        causes.push(cause.invalid(`${path}.maxLimitRequestRatio[${k}]`, ratio, `ratio ${text(ratio)} is less than 1`));
      if (!overcommits(k) && def !== undefined && req !== undefined && compareQuantities(def, req) !== 0)
        causes.push(
          cause.invalid(`${path}.defaultRequest[${k}]`, req, `default value ${text(def)} must equal to defaultRequest value ${text(req)} in ${type}`),
        );
    }
  });
  return causes;
}

export const limitranges = core('LimitRange', 'limitranges', {
  namespaced: true,
  shortNames: ['limits'],
  columns: [nameColumn(), createdAtColumn()],
  defaults: defaultLimitRange,
  validate: validateLimitRange,
});

// ---- ResourceQuotas

/** Quota resources counted in whole objects (helper.IsIntegerResourceName). */
const INTEGER_QUOTA = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'configmaps',
  'persistentvolumeclaims',
  'services.nodeports',
  'services.loadbalancers',
]);
/** helper.IsStandardQuotaResourceName, beside the hugepages prefixes checked where used. */
const STANDARD_QUOTA = new Set([
  ...INTEGER_QUOTA,
  ...['cpu', 'memory', 'storage', 'ephemeral-storage'].flatMap((r) => [r, `requests.${r}`, ...(r === 'storage' ? [] : [`limits.${r}`])]),
]);
const SCOPES = ['Terminating', 'NotTerminating', 'BestEffort', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity', 'VolumeAttributesClass'];

function quotaMapCauses(m: unknown, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(isPlainObject(m) ? m : {})) {
    const field = `${path}[${k}]`;
    const bad = isQualifiedName(k).map((msg) => cause.invalid(field, k, msg));
    if (bad.length === 0 && !k.includes('/') && !STANDARD_QUOTA.has(k) && !k.startsWith('hugepages-') && !k.startsWith('requests.hugepages-'))
      bad.push(cause.invalid(field, k, 'must be a standard resource for quota'));
    causes.push(...bad);
    const q = quantityCauses(v, field);
    if (q.length > 0) {
      causes.push(...q);
      continue;
    }
    if ((quantitySign(v) ?? 0) < 0) causes.push(cause.invalid(field, v, 'must be greater than or equal to 0'));
    const a = quantityOf(v)!;
    if ((INTEGER_QUOTA.has(k) || k.startsWith('count/')) && a.e < 0) causes.push(cause.invalid(field, v, 'must be an integer'));
  }
  return causes;
}

/** ValidateResourceQuota (spec and status). */
function validateResourceQuota(o: KObject): StatusCause[] {
  const causes = [
    ...quotaMapCauses(record(o, 'spec')['hard'], 'spec.hard'),
    ...quotaMapCauses(record(o, 'status')['hard'], 'status.hard'),
    ...quotaMapCauses(record(o, 'status')['used'], 'status.used'),
  ];
  for (const s of list(o, 'spec', 'scopes'))
    if (typeof s !== 'string' || !SCOPES.includes(s)) causes.push(cause.invalid('spec.scopes', s, 'unsupported scope'));
  for (const [i, sel] of list(o, 'spec', 'scopeSelector', 'matchExpressions').entries()) {
    const name = str(sel, 'scopeName');
    if (!SCOPES.includes(name)) causes.push(cause.invalid(`spec.scopeSelector.matchExpressions[${i}].scopeName`, name, 'unsupported scope'));
    const op = str(sel, 'operator');
    if (!['In', 'NotIn', 'Exists', 'DoesNotExist'].includes(op))
      causes.push(cause.notSupported(`spec.scopeSelector.matchExpressions[${i}].operator`, op, ['In', 'NotIn', 'Exists', 'DoesNotExist']));
  }
  return causes;
}

/** printResourceQuota: `<resource>: <used>/<hard>` of each hard limit, `limits.*` in the Limit column, names sorted. */
function quotaCells(o: KObject): [string, string] {
  const hard = record(o, 'status', 'hard');
  const used = record(o, 'status', 'used');
  const request: string[] = [];
  const limit: string[] = [];
  for (const k of Object.keys(hard).sort()) {
    const cell = `${k}: ${text(used[k] ?? '0')}/${text(hard[k])}`;
    (k.split('.').length > 1 && k.split('.')[0] === 'limits' ? limit : request).push(cell);
  }
  return [request.join(', '), limit.join(', ')];
}

export const resourcequotas = core('ResourceQuota', 'resourcequotas', {
  namespaced: true,
  shortNames: ['quota'],
  subresources: [statusOf('ResourceQuota')],
  columns: [
    nameColumn(),
    ageColumn(),
    column('Request', 'Request represents a minimum amount of cpu/memory that a container may consume.', (o) => quotaCells(o)[0]),
    column('Limit', 'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.', (o) => quotaCells(o)[1]),
  ],
  validate: validateResourceQuota,
});

export const CORE_POLICY_TYPES: readonly ResourceType[] = [limitranges, resourcequotas];
