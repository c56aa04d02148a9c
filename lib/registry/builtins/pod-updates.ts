// The two pod subresources that write part of the spec, as kube-apiserver
// 1.33's pod strategies do: /ephemeralcontainers takes only
// spec.ephemeralContainers from the request (dropNonEphemeralContainerUpdates),
// /resize only the containers' resources and resizePolicy
// (dropNonResizeUpdates); both bump the generation when the spec changes.
// Their checks: an ephemeral container once added never changes or goes,
// a new one carries none of the fields kube forbids it, and a resize keeps
// the pod's QoS class.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { at, list, sameJson, str } from '../fields.js';
import { isDNS1123Label } from '../names.js';
import { defaultPodSpec } from './pod-defaults.js';
import { podQosClass } from './pod-resources.js';

type Obj = Record<string, unknown>;

/** The fields an ephemeral container may not set (validateEphemeralContainers). */
const NOT_FOR_EPHEMERAL = ['ports', 'livenessProbe', 'readinessProbe', 'startupProbe', 'lifecycle', 'resources', 'resizePolicy', 'restartPolicy'];

function specOf(o: unknown): Obj {
  const s = at(o, 'spec');
  return isPlainObject(s) ? s : {};
}

/** The pod type's prepareForUpdate: narrows `next` (old with the request's spec) to what the subresource may change. */
export function preparePodUpdate(next: KObject, old: KObject, target: string): void {
  if (target !== 'ephemeralcontainers' && target !== 'resize') return;
  const oldSpec = specOf(old);
  const asked = specOf(next);
  const spec: Obj = { ...oldSpec };
  if (target === 'ephemeralcontainers') {
    if (asked['ephemeralContainers'] === undefined || asked['ephemeralContainers'] === null) delete spec['ephemeralContainers'];
    else spec['ephemeralContainers'] = asked['ephemeralContainers'];
  } else {
    for (const group of ['initContainers', 'containers'] as const) {
      const wanted = new Map(
        list(asked, group)
          .filter(isPlainObject)
          .map((c) => [str(c, 'name'), c]),
      );
      if (!Array.isArray(oldSpec[group])) continue;
      spec[group] = (oldSpec[group] as unknown[]).map((c) => {
        const w = isPlainObject(c) ? wanted.get(str(c, 'name')) : undefined;
        if (!isPlainObject(c) || !w) return c;
        const out: Obj = { ...c };
        for (const f of ['resources', 'resizePolicy']) {
          if (w[f] === undefined) delete out[f];
          else out[f] = w[f];
        }
        return out;
      });
    }
  }
  defaultPodSpec(spec);
  next['spec'] = spec;
  if (!sameJson(spec, oldSpec)) next.metadata.generation = (old.metadata.generation ?? 1) + 1;
}

/** ValidatePodCreate: ephemeral containers come only through /ephemeralcontainers. */
export function validatePodCreate(obj: KObject): StatusCause[] {
  return list(obj, 'spec', 'ephemeralContainers').length > 0 ? [cause.forbidden('spec.ephemeralContainers', 'cannot be set on create')] : [];
}

/** ValidatePodEphemeralContainersUpdate and the QoS rule of ValidatePodResize; `old` is the stored pod. */
export function validatePodUpdate(obj: KObject, old: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  const field = 'spec.ephemeralContainers';
  const now = new Map(list(spec, 'ephemeralContainers').map((c) => [str(c, 'name'), c]));
  const before = new Set<string>();
  for (const c of list(oldSpec, 'ephemeralContainers')) {
    const name = str(c, 'name');
    before.add(name);
    const n = now.get(name);
    if (n === undefined) causes.push(cause.forbidden(field, `existing ephemeral containers "${name}" may not be removed`));
    else if (!sameJson(c, n)) causes.push(cause.forbidden(field, `existing ephemeral containers "${name}" may not be changed`));
  }
  const names = new Set([...list(spec, 'initContainers'), ...list(spec, 'containers')].map((c) => str(c, 'name')));
  for (const [i, c] of list(spec, 'ephemeralContainers').entries()) {
    if (before.has(str(c, 'name'))) continue;
    causes.push(...validateNewEphemeral(c, `${field}[${i}]`, names));
    names.add(str(c, 'name'));
  }
  const was = str(old, 'status', 'qosClass') || podQosClass(oldSpec);
  const qos = podQosClass(spec);
  if (qos !== was) causes.push(cause.invalid('spec', qos, 'Pod QOS Class may not change as a result of resizing'));
  return causes;
}

/** Go's zero value of the field (what kube's allow-list check lets through), as JSON shows it. */
function isZero(v: unknown): boolean {
  return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) || (isPlainObject(v) && Object.values(v).every(isZero));
}

function validateNewEphemeral(c: unknown, field: string, names: ReadonlySet<string>): StatusCause[] {
  const causes: StatusCause[] = [];
  const name = str(c, 'name');
  if (name === '') causes.push(cause.required(`${field}.name`));
  else for (const m of isDNS1123Label(name)) causes.push(cause.invalid(`${field}.name`, name, m));
  if (name !== '' && names.has(name)) causes.push(cause.duplicate(`${field}.name`, name));
  if (str(c, 'image').trim() === '') causes.push(cause.required(`${field}.image`));
  for (const f of NOT_FOR_EPHEMERAL) {
    const v = at(c, f);
    if (!isZero(v)) causes.push(cause.forbidden(`${field}.${f}`, 'cannot be set for an Ephemeral Container'));
  }
  const target = str(c, 'targetContainerName');
  if (target !== '' && !names.has(target))
    causes.push({ reason: 'FieldValueNotFound', field: `${field}.targetContainerName`, message: `Not found: ${JSON.stringify(target)}` });
  return causes;
}
