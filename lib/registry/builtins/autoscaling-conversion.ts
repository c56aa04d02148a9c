// HorizontalPodAutoscalers between autoscaling/v1 and autoscaling/v2, as
// kube's pkg/apis/autoscaling/v1/conversion.go converts them through the
// internal (v2-shaped) type. v1 has only the CPU utilization target; what else
// a v2 object holds (its other metrics, the current metrics, the behavior and
// the conditions) travels in `autoscaling.alpha.kubernetes.io/*` annotations,
// so a v1 client that reads and writes an object back loses nothing. Objects
// are stored in v2. Both directions work on JSON and never write into their input.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { at, list } from '../fields.js';
import { setOwn } from '../../api/own.js';

type Json = Record<string, unknown>;

const METRICS = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR = 'autoscaling.alpha.kubernetes.io/behavior';
const SCALE_DOWN_TOLERANCE = 'autoscaling.alpha.kubernetes.io/scale-down-tolerance';
const SCALE_UP_TOLERANCE = 'autoscaling.alpha.kubernetes.io/scale-up-tolerance';
/** kube's DropRoundTripHorizontalPodAutoscalerAnnotations removes these on every conversion. */
const ROUND_TRIP = [METRICS, BEHAVIOR, SCALE_DOWN_TOLERANCE, SCALE_UP_TOLERANCE, CURRENT_METRICS, CONDITIONS];
/** autoscaling.DefaultCPUUtilization: v1's implicit target when it names none. */
export const DEFAULT_CPU_UTILIZATION = 80;

const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});
const has = (o: Json, k: string): boolean => Object.hasOwn(o, k) && o[k] !== undefined && o[k] !== null;
/** Sets `to[k]` from `from[f]` when present (a Go pointer or omitempty field). */
function copyIf(to: Json, k: string, from: Json, f = k): void {
  if (has(from, f)) to[k] = from[f];
}
/** A non-pointer Quantity: Go writes its zero as "0". */
const quantity = (from: Json, f: string): unknown => (has(from, f) ? from[f] : '0');

function withoutRoundTrip(annotations: unknown): Record<string, string> | undefined {
  if (!isPlainObject(annotations)) return undefined;
  const out: Record<string, string> = {};
  // A client's annotation keys are data (`__proto__` included).
  for (const [k, v] of Object.entries(annotations)) if (!ROUND_TRIP.includes(k)) setOwn(out, k, v as string);
  return Object.keys(out).length > 0 ? out : undefined;
}

function metadataWith(meta: unknown, annotations: Record<string, string> | undefined): Json {
  const m = { ...obj(meta) };
  if (annotations) m['annotations'] = annotations;
  else delete m['annotations'];
  return m;
}

const ref = (r: unknown): Json => {
  const o = obj(r);
  const out: Json = { kind: o['kind'] ?? '', name: o['name'] ?? '' };
  copyIf(out, 'apiVersion', o);
  return out;
};

const isCpu = (m: Json, part: 'target' | 'current'): boolean =>
  m['type'] === 'Resource' && at(m, 'resource', 'name') === 'cpu' && has(obj(at(m, 'resource', part)), 'averageUtilization');

// v2 metric → v1 MetricSpec (the v2beta1 shape), field order as Go writes it.
function metricToV1(m: Json): Json {
  const out: Json = { type: m['type'] ?? '' };
  const o = obj(m['object']);
  if (has(m, 'object')) {
    const t = obj(o['target']);
    const v: Json = { target: ref(o['describedObject']), metricName: at(o, 'metric', 'name') ?? '', targetValue: quantity(t, 'value') };
    copyIf(v, 'selector', obj(o['metric']));
    copyIf(v, 'averageValue', t);
    out['object'] = v;
  }
  if (has(m, 'pods')) {
    const p = obj(m['pods']);
    const v: Json = { metricName: at(p, 'metric', 'name') ?? '', targetAverageValue: quantity(obj(p['target']), 'averageValue') };
    copyIf(v, 'selector', obj(p['metric']));
    out['pods'] = v;
  }
  for (const key of ['resource', 'containerResource']) {
    if (!has(m, key)) continue;
    const r = obj(m[key]);
    const t = obj(r['target']);
    const v: Json = { name: r['name'] ?? '' };
    copyIf(v, 'targetAverageUtilization', t, 'averageUtilization');
    copyIf(v, 'targetAverageValue', t, 'averageValue');
    if (key === 'containerResource') v['container'] = r['container'] ?? '';
    out[key] = v;
  }
  if (has(m, 'external')) {
    const e = obj(m['external']);
    const t = obj(e['target']);
    const v: Json = { metricName: at(e, 'metric', 'name') ?? '' };
    copyIf(v, 'metricSelector', obj(e['metric']), 'selector');
    copyIf(v, 'targetValue', t, 'value');
    copyIf(v, 'targetAverageValue', t, 'averageValue');
    out['external'] = v;
  }
  return out;
}

function identifier(from: Json, selectorKey: string): Json {
  const id: Json = { name: from['metricName'] ?? '' };
  copyIf(id, 'selector', from, selectorKey);
  return id;
}

// v1 MetricSpec → v2 metric.
function metricToV2(m: Json): Json {
  const out: Json = { type: m['type'] ?? '' };
  if (has(m, 'object')) {
    const o = obj(m['object']);
    const target: Json = { type: has(o, 'averageValue') ? 'AverageValue' : 'Value', value: quantity(o, 'targetValue') };
    copyIf(target, 'averageValue', o);
    out['object'] = { describedObject: ref(o['target']), target, metric: identifier(o, 'selector') };
  }
  if (has(m, 'pods')) {
    const p = obj(m['pods']);
    out['pods'] = { metric: identifier(p, 'selector'), target: { type: 'AverageValue', averageValue: quantity(p, 'targetAverageValue') } };
  }
  for (const key of ['resource', 'containerResource']) {
    if (!has(m, key)) continue;
    const r = obj(m[key]);
    const target: Json = { type: has(r, 'targetAverageUtilization') ? 'Utilization' : 'AverageValue' };
    copyIf(target, 'averageUtilization', r, 'targetAverageUtilization');
    copyIf(target, 'averageValue', r, 'targetAverageValue');
    out[key] = key === 'containerResource' ? { name: r['name'] ?? '', target, container: r['container'] ?? '' } : { name: r['name'] ?? '', target };
  }
  if (has(m, 'external')) {
    const e = obj(m['external']);
    const target: Json = { type: has(e, 'targetValue') ? 'Value' : 'AverageValue' };
    copyIf(target, 'value', e, 'targetValue');
    copyIf(target, 'averageValue', e, 'targetAverageValue');
    out['external'] = { metric: identifier(e, 'metricSelector'), target };
  }
  return out;
}

// v2 MetricStatus → v1 MetricStatus.
function statusToV1(m: Json): Json {
  const out: Json = { type: m['type'] ?? '' };
  if (has(m, 'object')) {
    const o = obj(m['object']);
    const c = obj(o['current']);
    const v: Json = { target: ref(o['describedObject']), metricName: at(o, 'metric', 'name') ?? '', currentValue: quantity(c, 'value') };
    copyIf(v, 'selector', obj(o['metric']));
    copyIf(v, 'averageValue', c);
    out['object'] = v;
  }
  if (has(m, 'pods')) {
    const p = obj(m['pods']);
    const v: Json = { metricName: at(p, 'metric', 'name') ?? '', currentAverageValue: quantity(obj(p['current']), 'averageValue') };
    copyIf(v, 'selector', obj(p['metric']));
    out['pods'] = v;
  }
  for (const key of ['resource', 'containerResource']) {
    if (!has(m, key)) continue;
    const r = obj(m[key]);
    const c = obj(r['current']);
    const v: Json = { name: r['name'] ?? '' };
    copyIf(v, 'currentAverageUtilization', c, 'averageUtilization');
    v['currentAverageValue'] = quantity(c, 'averageValue');
    if (key === 'containerResource') v['container'] = r['container'] ?? '';
    out[key] = v;
  }
  if (has(m, 'external')) {
    const e = obj(m['external']);
    const c = obj(e['current']);
    const v: Json = { metricName: at(e, 'metric', 'name') ?? '' };
    copyIf(v, 'metricSelector', obj(e['metric']), 'selector');
    v['currentValue'] = quantity(c, 'value');
    copyIf(v, 'currentAverageValue', c, 'averageValue');
    out['external'] = v;
  }
  return out;
}

// v1 MetricStatus → v2 MetricStatus.
function statusToV2(m: Json): Json {
  const out: Json = { type: m['type'] ?? '' };
  if (has(m, 'object')) {
    const o = obj(m['object']);
    const current: Json = { value: quantity(o, 'currentValue') };
    copyIf(current, 'averageValue', o);
    out['object'] = { metric: identifier(o, 'selector'), current, describedObject: ref(o['target']) };
  }
  if (has(m, 'pods')) {
    const p = obj(m['pods']);
    out['pods'] = { metric: identifier(p, 'selector'), current: { averageValue: quantity(p, 'currentAverageValue') } };
  }
  for (const key of ['resource', 'containerResource']) {
    if (!has(m, key)) continue;
    const r = obj(m[key]);
    const current: Json = { averageValue: quantity(r, 'currentAverageValue') };
    copyIf(current, 'averageUtilization', r, 'currentAverageUtilization');
    out[key] = key === 'containerResource' ? { name: r['name'] ?? '', current, container: r['container'] ?? '' } : { name: r['name'] ?? '', current };
  }
  if (has(m, 'external')) {
    const e = obj(m['external']);
    const current: Json = { value: quantity(e, 'currentValue') };
    copyIf(current, 'averageValue', e, 'currentAverageValue');
    out['external'] = { metric: identifier(e, 'metricSelector'), current };
  }
  return out;
}

// kube marshals its internal behavior type, which has no json tags: Go's field
// names, nil pointers as null. Tolerances go to annotations of their own.
function behaviorToGo(b: Json): Json {
  const rules = (r: unknown): unknown => {
    if (!isPlainObject(r)) return null;
    return {
      StabilizationWindowSeconds: r['stabilizationWindowSeconds'] ?? null,
      SelectPolicy: r['selectPolicy'] ?? null,
      Policies: Array.isArray(r['policies'])
        ? r['policies'].map((p) => ({ Type: at(p, 'type') ?? '', Value: at(p, 'value') ?? 0, PeriodSeconds: at(p, 'periodSeconds') ?? 0 }))
        : null,
    };
  };
  return { ScaleUp: rules(b['scaleUp']), ScaleDown: rules(b['scaleDown']) };
}

/** encoding/json matches keys exactly, else case-insensitively. */
function goField(o: Json, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(o)) if (k.toLowerCase() === lower) return o[k];
  return undefined;
}

function behaviorFromGo(b: Json): Json | undefined {
  const rules = (r: unknown): Json | undefined => {
    if (!isPlainObject(r)) return undefined;
    const out: Json = {};
    const w = goField(r, 'StabilizationWindowSeconds');
    if (w !== undefined && w !== null) out['stabilizationWindowSeconds'] = w;
    const s = goField(r, 'SelectPolicy');
    if (s !== undefined && s !== null) out['selectPolicy'] = s;
    const p = goField(r, 'Policies');
    if (Array.isArray(p))
      out['policies'] = p.map((x) => {
        const o = obj(x);
        return { type: goField(o, 'Type') ?? '', value: goField(o, 'Value') ?? 0, periodSeconds: goField(o, 'PeriodSeconds') ?? 0 };
      });
    return out;
  };
  const out: Json = {};
  const up = rules(goField(b, 'ScaleUp'));
  const down = rules(goField(b, 'ScaleDown'));
  if (up) out['scaleUp'] = up;
  if (down) out['scaleDown'] = down;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** An annotation's JSON; undefined when absent or not JSON (kube fails the read; here the annotation is ignored). */
function annotationJson(annotations: unknown, key: string): unknown {
  const raw = isPlainObject(annotations) ? annotations[key] : undefined;
  if (typeof raw !== 'string') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** A stored autoscaling/v2 HorizontalPodAutoscaler as autoscaling/v1 serves it. */
export function hpaToV1(v2: KObject): KObject {
  const spec = obj(v2['spec']);
  const status = obj(v2['status']);
  const metrics = list(spec, 'metrics').map(obj);
  const current = list(status, 'currentMetrics').map(obj);
  const conditions = list(status, 'conditions');

  const outSpec: Json = { scaleTargetRef: ref(spec['scaleTargetRef']) };
  copyIf(outSpec, 'minReplicas', spec);
  outSpec['maxReplicas'] = spec['maxReplicas'] ?? 0;
  const cpu = metrics.find((m) => m['type'] === 'Resource' && at(m, 'resource', 'name') === 'cpu');
  if (cpu && has(obj(at(cpu, 'resource', 'target')), 'averageUtilization'))
    outSpec['targetCPUUtilizationPercentage'] = at(cpu, 'resource', 'target', 'averageUtilization');

  const outStatus: Json = {};
  copyIf(outStatus, 'observedGeneration', status);
  copyIf(outStatus, 'lastScaleTime', status);
  outStatus['currentReplicas'] = status['currentReplicas'] ?? 0;
  outStatus['desiredReplicas'] = status['desiredReplicas'] ?? 0;
  // No break in kube's loop: the last CPU utilization wins.
  for (const m of current) if (isCpu(m, 'current')) outStatus['currentCPUUtilizationPercentage'] = at(m, 'resource', 'current', 'averageUtilization');

  const annotations: Record<string, string> = { ...withoutRoundTrip(v2.metadata.annotations) };
  const other = metrics.filter((m) => !isCpu(m, 'target')).map(metricToV1);
  if (other.length > 0) annotations[METRICS] = JSON.stringify(other);
  if (current.length > 0) annotations[CURRENT_METRICS] = JSON.stringify(current.map(statusToV1));
  if (isPlainObject(spec['behavior'])) {
    annotations[BEHAVIOR] = JSON.stringify(behaviorToGo(spec['behavior']));
    const down = at(spec, 'behavior', 'scaleDown', 'tolerance');
    const up = at(spec, 'behavior', 'scaleUp', 'tolerance');
    if (typeof down === 'string') annotations[SCALE_DOWN_TOLERANCE] = down;
    if (typeof up === 'string') annotations[SCALE_UP_TOLERANCE] = up;
  }
  if (conditions.length > 0) annotations[CONDITIONS] = JSON.stringify(conditions);

  const out: KObject = {
    ...v2,
    apiVersion: 'autoscaling/v1',
    metadata: metadataWith(v2.metadata, Object.keys(annotations).length > 0 ? annotations : undefined) as KObject['metadata'],
  };
  out['spec'] = outSpec;
  out['status'] = outStatus;
  return out;
}

/** An autoscaling/v1 HorizontalPodAutoscaler as the autoscaling/v2 object it stands for. */
export function hpaToV2(v1: KObject): KObject {
  const spec = obj(v1['spec']);
  const status = obj(v1['status']);
  const annotations = v1.metadata.annotations;

  const outSpec: Json = { scaleTargetRef: ref(spec['scaleTargetRef']) };
  copyIf(outSpec, 'minReplicas', spec);
  outSpec['maxReplicas'] = spec['maxReplicas'] ?? 0;
  let metrics: Json[] = [];
  if (has(spec, 'targetCPUUtilizationPercentage'))
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: spec['targetCPUUtilizationPercentage'] } } });
  const other = annotationJson(annotations, METRICS);
  // The CPU target from the spec comes after the annotation's metrics, as kube orders them.
  if (Array.isArray(other)) metrics = [...other.map((m) => metricToV2(obj(m))), ...metrics];
  if (metrics.length === 0)
    metrics.push({ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION } } });
  outSpec['metrics'] = metrics;
  const behavior = annotationJson(annotations, BEHAVIOR);
  const b = isPlainObject(behavior) ? behaviorFromGo(behavior) : undefined;
  if (b) {
    for (const [dir, key] of [
      ['scaleDown', SCALE_DOWN_TOLERANCE],
      ['scaleUp', SCALE_UP_TOLERANCE],
    ] as const) {
      const t = isPlainObject(annotations) ? annotations[key] : undefined;
      if (typeof t === 'string' && isPlainObject(b[dir])) b[dir] = { ...b[dir], tolerance: t };
    }
    outSpec['behavior'] = b;
  }

  const outStatus: Json = {};
  copyIf(outStatus, 'observedGeneration', status);
  copyIf(outStatus, 'lastScaleTime', status);
  // omitempty in v2, not in v1.
  if (has(status, 'currentReplicas') && status['currentReplicas'] !== 0) outStatus['currentReplicas'] = status['currentReplicas'];
  outStatus['desiredReplicas'] = status['desiredReplicas'] ?? 0;
  const currentMetrics = annotationJson(annotations, CURRENT_METRICS);
  // The annotation's statuses carry more than the CPU percentage: they win.
  if (Array.isArray(currentMetrics)) outStatus['currentMetrics'] = currentMetrics.map((m) => statusToV2(obj(m)));
  else if (has(status, 'currentCPUUtilizationPercentage'))
    outStatus['currentMetrics'] = [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: status['currentCPUUtilizationPercentage'] } } }];
  const conditions = annotationJson(annotations, CONDITIONS);
  if (Array.isArray(conditions)) outStatus['conditions'] = conditions;

  const out: KObject = { ...v1, apiVersion: 'autoscaling/v2', metadata: metadataWith(v1.metadata, withoutRoundTrip(annotations)) as KObject['metadata'] };
  out['spec'] = outSpec;
  out['status'] = outStatus;
  return out;
}

/**
 * A v1 write that is not to /status keeps the stored status: v1 carries part of
 * it in annotations, so those are the stored object's too (kube restores the
 * internal status after conversion, to the same effect).
 */
export function keepStatusAnnotations(next: KObject, old: KObject): void {
  const was = isPlainObject(old.metadata.annotations) ? old.metadata.annotations : {};
  const now: Record<string, string> = { ...(isPlainObject(next.metadata.annotations) ? next.metadata.annotations : {}) };
  for (const k of [CURRENT_METRICS, CONDITIONS]) {
    if (typeof was[k] === 'string') now[k] = was[k];
    else delete now[k];
  }
  if (Object.keys(now).length > 0) next.metadata.annotations = now;
  else delete next.metadata.annotations;
}

/** The HorizontalPodAutoscaler `o` in `apiVersion` (autoscaling/v1 or autoscaling/v2). */
export function convertHpa(o: KObject, apiVersion: string): KObject {
  if (o.apiVersion === apiVersion) return o;
  return apiVersion === 'autoscaling/v1' ? hpaToV1(o) : hpaToV2(o);
}
