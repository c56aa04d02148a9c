// autoscaling/v1 and autoscaling/v2 HorizontalPodAutoscalers, as
// kube-apiserver 1.33 serves them (pkg/registry/autoscaling/horizontalpodautoscaler,
// pkg/apis/autoscaling/{v1,v2}/defaults.go, pkg/apis/autoscaling/validation):
// both versions over one storage in v2, converted as kube converts them
// (autoscaling-conversion). Validation and the table read the v2 form, as
// kube's read its internal type. No controller scales anything.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { builtinSchemaOf } from '../../schema/index.js';
import { autoscalingV2 } from '../../schema/gen/autoscaling-v2.js';
import type { Column, ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, num, str } from '../fields.js';
import { isDNS1123Label, isValidPathSegmentName } from '../names.js';
import { builtinType, statusOf } from './group-type.js';
import { convertHpa, hpaToV2, keepStatusAnnotations } from './autoscaling-conversion.js';
import { quantityCauses, quantitySign } from './quantities.js';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const present = (o: Obj, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined && o[k] !== null;

// SetDefaults_HorizontalPodAutoscalerBehavior's rules, copied for each object.
const scaleUpDefaults = (): Obj => ({
  stabilizationWindowSeconds: 0,
  selectPolicy: 'Max',
  policies: [
    { type: 'Pods', value: 4, periodSeconds: 15 },
    { type: 'Percent', value: 100, periodSeconds: 15 },
  ],
});
const scaleDownDefaults = (): Obj => ({ selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] });

/** GenerateHPAScale{Up,Down}Rules: the defaults, overridden by what the client set (an empty policy list included). */
function rulesWithDefaults(given: unknown, defaults: Obj): Obj {
  if (!isPlainObject(given)) return defaults;
  const out: Obj = { ...defaults };
  for (const k of ['stabilizationWindowSeconds', 'selectPolicy', 'policies', 'tolerance']) if (present(given, k)) out[k] = given[k];
  // Go's struct order, which the stored JSON keeps.
  const ordered: Obj = {};
  for (const k of ['stabilizationWindowSeconds', 'selectPolicy', 'policies', 'tolerance']) if (out[k] !== undefined) ordered[k] = out[k];
  return ordered;
}

function specOf(o: KObject): Obj {
  if (!isPlainObject(o['spec'])) o['spec'] = {};
  return o['spec'] as Obj;
}

/** autoscaling/v2 SetDefaults_HorizontalPodAutoscaler. */
function defaultV2(o: KObject): void {
  const spec = specOf(o);
  if (!present(spec, 'minReplicas')) spec['minReplicas'] = 1;
  if (!Array.isArray(spec['metrics']) || spec['metrics'].length === 0)
    spec['metrics'] = [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  const b = spec['behavior'];
  if (isPlainObject(b))
    spec['behavior'] = { scaleUp: rulesWithDefaults(b['scaleUp'], scaleUpDefaults()), scaleDown: rulesWithDefaults(b['scaleDown'], scaleDownDefaults()) };
}

/**
 * The HPAConfigurableTolerance gate is alpha in 1.33 and off: a tolerance is
 * dropped unless the stored object already has one (dropDisabledFields).
 */
function dropTolerance(o: KObject, old: KObject | undefined): void {
  const oldHas = ['scaleUp', 'scaleDown'].some((d) => at(old, 'spec', 'behavior', d, 'tolerance') !== undefined);
  if (oldHas) return;
  for (const d of ['scaleUp', 'scaleDown']) {
    const r = at(o, 'spec', 'behavior', d);
    if (isPlainObject(r)) delete r['tolerance'];
  }
}

// ---- validation (the v2 form, field paths as kube's internal type names them)

function crossVersionRef(ref: unknown, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const f of ['kind', 'name']) {
    const v = str(ref, f);
    if (v === '') causes.push(cause.required(`${path}.${f}`));
    else causes.push(...isValidPathSegmentName(v).map((m) => cause.invalid(`${path}.${f}`, v, m)));
  }
  return causes;
}

function metricTarget(t: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const type = str(t, 'type');
  if (type === '') causes.push(cause.required(`${path}.type`, 'must specify a metric target type'));
  if (type !== 'Utilization' && type !== 'Value' && type !== 'AverageValue')
    causes.push(cause.invalid(`${path}.type`, type, 'must be either Utilization, Value, or AverageValue'));
  for (const f of ['value', 'averageValue']) {
    if (!present(t, f)) continue;
    const bad = quantityCauses(t[f], `${path}.${f}`);
    if (bad.length > 0) causes.push(...bad);
    else if (quantitySign(t[f]) !== 1) causes.push(cause.invalid(`${path}.${f}`, t[f], 'must be positive'));
  }
  const u = t['averageUtilization'];
  if (typeof u === 'number' && u < 1) causes.push(cause.invalid(`${path}.averageUtilization`, u, 'must be greater than 0'));
  return causes;
}

function metricIdentifier(m: unknown, path: string): StatusCause[] {
  const name = str(m, 'name');
  if (name === '') return [cause.required(`${path}.name`, 'must specify a metric name')];
  return isValidPathSegmentName(name).map((msg) => cause.invalid(`${path}.name`, name, msg));
}

function resourceSource(src: Obj, path: string, container: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  if (str(src, 'name') === '') causes.push(cause.required(`${path}.name`, 'must specify a resource name'));
  if (container) {
    const c = str(src, 'container');
    if (c === '') causes.push(cause.required(`${path}.container`, 'must specify a container'));
    else causes.push(...isDNS1123Label(c).map((m) => cause.invalid(`${path}.container`, c, m)));
  }
  const t = obj(src['target']);
  causes.push(...metricTarget(t, `${path}.target`));
  if (!present(t, 'averageUtilization') && !present(t, 'averageValue'))
    causes.push(cause.required(`${path}.target.averageUtilization`, 'must set either a target raw value or a target utilization'));
  if (present(t, 'averageUtilization') && present(t, 'averageValue'))
    causes.push(cause.forbidden(`${path}.target.averageValue`, 'may not set both a target raw value and a target utilization'));
  return causes;
}

const SOURCE_TYPES = ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'];
const SOURCE_FIELD: Readonly<Record<string, string>> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  ContainerResource: 'containerResource',
  External: 'external',
};

function metricSpec(m: Obj, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  const type = str(m, 'type');
  if (type === '') causes.push(cause.required(`${path}.type`, 'must specify a metric source type'));
  if (!SOURCE_TYPES.includes(type)) causes.push(cause.notSupported(`${path}.type`, type, SOURCE_TYPES));
  const sources = ['object', 'pods', 'resource', 'containerResource', 'external'].filter((f) => present(m, f));
  const first = sources[0];
  if (first) {
    const src = obj(m[first]);
    const p = `${path}.${first}`;
    if (first === 'object') {
      causes.push(...crossVersionRef(src['describedObject'], `${p}.describedObject`), ...metricIdentifier(src['metric'], `${p}.metric`));
      const t = obj(src['target']);
      causes.push(...metricTarget(t, `${p}.target`));
      if (!present(t, 'value') && !present(t, 'averageValue'))
        causes.push(cause.required(`${p}.target.value`, 'must set either a target value or averageValue'));
    } else if (first === 'pods') {
      causes.push(...metricIdentifier(src['metric'], `${p}.metric`));
      const t = obj(src['target']);
      causes.push(...metricTarget(t, `${p}.target`));
      if (!present(t, 'averageValue')) causes.push(cause.required(`${p}.target.averageValue`, 'must specify a positive target averageValue'));
    } else if (first === 'external') {
      causes.push(...metricIdentifier(src['metric'], `${p}.metric`));
      const t = obj(src['target']);
      causes.push(...metricTarget(t, `${p}.target`));
      if (!present(t, 'value') && !present(t, 'averageValue'))
        causes.push(cause.required(`${p}.target.value`, 'must set either a target value for metric or a per-pod target'));
      if (present(t, 'value') && present(t, 'averageValue'))
        causes.push(cause.forbidden(`${p}.target.value`, 'may not set both a target value for metric and a per-pod target'));
    } else causes.push(...resourceSource(src, p, first === 'containerResource'));
  }
  const expected = SOURCE_FIELD[type];
  if (expected && !present(m, expected)) causes.push(cause.required(`${path}.${expected}`, 'must populate information for the given metric source'));
  if (sources.length !== 1)
    for (const f of sources) if (f !== expected) causes.push(cause.forbidden(`${path}.${f}`, 'must populate the given metric source only'));
  return causes;
}

function scalingRules(rules: unknown, path: string): StatusCause[] {
  if (!isPlainObject(rules)) return [];
  const causes: StatusCause[] = [];
  const w = rules['stabilizationWindowSeconds'];
  if (typeof w === 'number' && w < 0) causes.push(cause.invalid(`${path}.stabilizationWindowSeconds`, w, 'must be greater than or equal to zero'));
  if (typeof w === 'number' && w > 3600) causes.push(cause.invalid(`${path}.stabilizationWindowSeconds`, w, 'must be less than or equal to 3600'));
  const sp = rules['selectPolicy'];
  if (present(rules, 'selectPolicy') && !['Disabled', 'Max', 'Min'].includes(sp as string))
    causes.push(cause.notSupported(`${path}.selectPolicy`, sp, ['Disabled', 'Max', 'Min']));
  const policies = list(rules, 'policies');
  if (policies.length === 0) causes.push(cause.required(`${path}.policies`, 'must specify at least one Policy'));
  policies.forEach((p, i) => {
    const pp = `${path}.policies[${i}]`;
    const type = str(p, 'type');
    if (type !== 'Pods' && type !== 'Percent') causes.push(cause.notSupported(`${pp}.type`, type, ['Percent', 'Pods']));
    const value = at(p, 'value');
    if (typeof value !== 'number' || value <= 0) causes.push(cause.invalid(`${pp}.value`, value ?? 0, 'must be greater than zero'));
    const period = at(p, 'periodSeconds');
    if (typeof period !== 'number' || period <= 0) causes.push(cause.invalid(`${pp}.periodSeconds`, period ?? 0, 'must be greater than zero'));
    else if (period > 1800) causes.push(cause.invalid(`${pp}.periodSeconds`, period, 'must be less than or equal to 1800'));
  });
  return causes;
}

/** ValidateHorizontalPodAutoscaler (and its status update's counts) on the v2 form. */
export function validateHpa(o: KObject): StatusCause[] {
  const spec = obj(o['spec']);
  const causes: StatusCause[] = [];
  const min = spec['minReplicas'];
  const max = typeof spec['maxReplicas'] === 'number' ? spec['maxReplicas'] : 0;
  // HPAScaleToZero is alpha and off: at least one replica.
  if (typeof min === 'number' && min < 1) causes.push(cause.invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) causes.push(cause.invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (typeof min === 'number' && max < min) causes.push(cause.invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  causes.push(...crossVersionRef(spec['scaleTargetRef'], 'spec.scaleTargetRef'));
  list(spec, 'metrics').forEach((m, i) => causes.push(...metricSpec(obj(m), `spec.metrics[${i}]`)));
  const b = spec['behavior'];
  if (isPlainObject(b)) causes.push(...scalingRules(b['scaleUp'], 'spec.behavior.scaleUp'), ...scalingRules(b['scaleDown'], 'spec.behavior.scaleDown'));
  for (const f of ['currentReplicas', 'desiredReplicas']) {
    const v = at(o, 'status', f);
    if (typeof v === 'number' && v < 0) causes.push(cause.invalid(`status.${f}`, v, 'must be greater than or equal to 0'));
  }
  return causes;
}

// ---- the table (kube's printHorizontalPodAutoscaler, on the v2 form)

const quantityText = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '0');

/** formatHPAMetrics: `current/target` per metric, two at most and `+ N more...`. */
export function hpaTargets(o: KObject): string {
  const specs = list(o, 'spec', 'metrics');
  const statuses = list(o, 'status', 'currentMetrics');
  if (specs.length === 0) return '<none>';
  const parts = specs.map((s, i) => {
    const st = statuses[i];
    const type = str(s, 'type');
    switch (type) {
      case 'External':
      case 'Object': {
        const key = type === 'External' ? 'external' : 'object';
        const target = obj(at(s, key, 'target'));
        if (present(target, 'averageValue')) {
          const cur = at(st, key, 'current', 'averageValue');
          return `${cur === undefined ? '<unknown>' : quantityText(cur)}/${quantityText(target['averageValue'])} (avg)`;
        }
        const cur = isPlainObject(at(st, key)) ? quantityText(at(st, key, 'current', 'value')) : '<unknown>';
        return `${cur}/${quantityText(target['value'])}`;
      }
      case 'Pods': {
        const cur = isPlainObject(at(st, 'pods')) ? quantityText(at(st, 'pods', 'current', 'averageValue')) : '<unknown>';
        return `${cur}/${quantityText(at(s, 'pods', 'target', 'averageValue'))}`;
      }
      case 'Resource':
      case 'ContainerResource': {
        const key = type === 'Resource' ? 'resource' : 'containerResource';
        const name = str(s, key, 'name');
        const target = obj(at(s, key, 'target'));
        if (present(target, 'averageValue')) {
          const cur = isPlainObject(at(st, key)) ? quantityText(at(st, key, 'current', 'averageValue')) : '<unknown>';
          return `${name}: ${cur}/${quantityText(target['averageValue'])}`;
        }
        const u = at(st, key, 'current', 'averageUtilization');
        const t = target['averageUtilization'];
        return `${name}: ${typeof u === 'number' ? `${u}%` : '<unknown>'}/${typeof t === 'number' ? `${t}%` : '<auto>'}`;
      }
      default:
        return '<unknown type>';
    }
  });
  return parts.length > 2 ? `${parts.slice(0, 2).join(', ')} + ${parts.length - 2} more...` : parts.join(', ');
}

const specDoc = (f: string): string => autoscalingV2.types['HorizontalPodAutoscalerSpec']?.f[f]?.[1] ?? '';
const statusDoc = (f: string): string => autoscalingV2.types['HorizontalPodAutoscalerStatus']?.f[f]?.[1] ?? '';

function hpaColumns(asV2: (o: KObject) => KObject): Column[] {
  return [
    nameColumn(),
    column('Reference', specDoc('scaleTargetRef'), (o) => `${str(o, 'spec', 'scaleTargetRef', 'kind')}/${str(o, 'spec', 'scaleTargetRef', 'name')}`),
    column('Targets', specDoc('metrics'), (o) => hpaTargets(asV2(o))),
    column('MinPods', specDoc('minReplicas'), (o) => {
      const m = at(o, 'spec', 'minReplicas');
      return typeof m === 'number' ? String(m) : '<unset>';
    }),
    column('MaxPods', specDoc('maxReplicas'), (o) => num(o, 'spec', 'maxReplicas'), { type: 'integer' }),
    column('Replicas', statusDoc('currentReplicas'), (o) => num(o, 'status', 'currentReplicas'), { type: 'integer' }),
    ageColumn(),
  ];
}

const STORAGE = { group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler' };
const versionSchemas = new Map([
  ['autoscaling/v1', builtinSchemaOf('autoscaling', 'v1', 'HorizontalPodAutoscaler')],
  ['autoscaling/v2', builtinSchemaOf('autoscaling', 'v2', 'HorizontalPodAutoscaler')],
]);
const shared: Partial<ResourceType> & Pick<ResourceType, 'namespaced'> = {
  namespaced: true,
  shortNames: ['hpa'],
  categories: ['all'],
  subresources: [statusOf('HorizontalPodAutoscaler')],
  storageVersion: STORAGE,
  versionSchemas,
  convert: convertHpa,
};

export const hpaV2 = builtinType(
  'autoscaling',
  'HorizontalPodAutoscaler',
  'horizontalpodautoscalers',
  {
    ...shared,
    columns: hpaColumns((o) => o),
    defaults: defaultV2,
    prepareForUpdate(next, old) {
      dropTolerance(next, old);
    },
    prepareForCreate(o) {
      dropTolerance(o, undefined);
    },
    validate: (o) => validateHpa(o),
  },
  'v2',
);

export const hpaV1 = builtinType('autoscaling', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers', {
  ...shared,
  columns: hpaColumns(hpaToV2),
  // autoscaling/v1 SetDefaults_HorizontalPodAutoscaler; the CPU target default comes with conversion.
  defaults(o) {
    const spec = specOf(o);
    if (!present(spec, 'minReplicas')) spec['minReplicas'] = 1;
  },
  prepareForUpdate(next, old, target) {
    if (target === 'main') keepStatusAnnotations(next, old);
  },
  // kube validates the internal object: the fields a v1 write fails on are named as v2 names them.
  validate: (o) => validateHpa(hpaToV2(o)),
});

export const AUTOSCALING_TYPES: readonly ResourceType[] = [hpaV2, hpaV1];
