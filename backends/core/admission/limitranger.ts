// LimitRanger, kube's default-on plugin (plugin/pkg/admission/limitranger),
// over the LimitRanges of the write's namespace (a watch-fed cache, so it
// never waits): mutating, a new pod's containers and init containers get the
// `default` limits and `defaultRequest` requests of each Container item they
// do not state, noted in the `kubernetes.io/limit-ranger` annotation;
// validating, min / max / maxLimitRequestRatio of Container and Pod items on
// a new pod, and min / max of PersistentVolumeClaim items on a claim's create
// and update. Quantities compare as kube's do: in thousandths when every
// value fits, rounded up.
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { forbidden } from '../../../lib/api/status.js';
import { quantityString, scaledCeil, type Quantity } from '../../../lib/registry/builtins/quantities.js';
import { list, record, str } from '../../../lib/registry/fields.js';
import type { CoreEnv } from '../env.js';
import { podResources } from '../quota/evaluators.js';
import { resourceListOf, type ResourceList } from '../quota/resources.js';
import type { AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from './types.js';

const ANNOTATION = 'kubernetes.io/limit-ranger';

/** Pods on create, claims on create and update; never a subresource or an object being deleted (SupportsAttributes). */
function kindOf(a: AdmissionAttributes): 'pod' | 'pvc' | undefined {
  if (a.subresource !== '' || a.resource.group !== '' || !a.object) return undefined;
  if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return undefined;
  if (a.oldObject?.metadata.deletionTimestamp) return undefined;
  if (a.resource.resource === 'pods') return a.operation === 'CREATE' ? 'pod' : undefined;
  return a.resource.resource === 'persistentvolumeclaims' ? 'pvc' : undefined;
}

function limitRanges(a: AdmissionAttributes, env: CoreEnv): readonly KObject[] {
  return env.namespacePolicies?.limitRanges(a.namespace) ?? [];
}

const items = (lr: KObject) => list(lr, 'spec', 'limits').filter(isPlainObject);

export const limitRangerDefaults: MutatingPlugin = {
  name: 'LimitRanger',
  admit(a, env) {
    if (kindOf(a) !== 'pod') return undefined;
    const ranges = limitRanges(a, env);
    if (ranges.length === 0) return undefined;
    let pod: KObject | undefined;
    for (const lr of ranges) {
      const containerItems = items(lr).filter((i) => i['type'] === 'Container');
      // defaultContainerResourceRequirements: the Container items' maps merged in order.
      let limits: Record<string, unknown> = {};
      let requests: Record<string, unknown> = {};
      for (const i of containerItems) {
        limits = { ...limits, ...record(i, 'default') };
        requests = { ...requests, ...record(i, 'defaultRequest') };
      }
      if (Object.keys(limits).length === 0 && Object.keys(requests).length === 0) continue;
      pod ??= structuredClone(a.object!);
      mergeDefaults(pod, limits, requests);
    }
    return pod;
  },
};

/** mergePodResourceRequirements: what each container lacks, and the annotation naming it. */
function mergeDefaults(pod: KObject, limits: Record<string, unknown>, requests: Record<string, unknown>): void {
  const notes: string[] = [];
  const spec = record(pod, 'spec') as Record<string, unknown>;
  for (const [field, what] of [
    ['containers', 'container'],
    ['initContainers', 'init container'],
  ] as const) {
    for (const c of list(spec, field)) {
      if (!isPlainObject(c)) continue;
      const res: Record<string, unknown> = isPlainObject(c['resources']) ? c['resources'] : (c['resources'] = {});
      const set = (key: 'limits' | 'requests', defaults: Record<string, unknown>): string[] => {
        const cur: Record<string, unknown> = isPlainObject(res[key]) ? res[key] : {};
        const added = Object.keys(defaults).filter((k) => !Object.hasOwn(cur, k));
        if (added.length > 0) res[key] = { ...cur, ...Object.fromEntries(added.map((k) => [k, defaults[k]])) };
        return added.sort();
      };
      const setLimits = set('limits', limits);
      const setRequests = set('requests', requests);
      const name = typeof c['name'] === 'string' ? c['name'] : '';
      if (setRequests.length > 0) notes.push(`${setRequests.join(', ')} request for ${what} ${name}`);
      if (setLimits.length > 0) notes.push(`${setLimits.join(', ')} limit for ${what} ${name}`);
    }
  }
  if (notes.length > 0) pod.metadata.annotations = { ...pod.metadata.annotations, [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}` };
}

export const limitRangerValidation: ValidatingPlugin = {
  name: 'LimitRanger',
  validate(a, env) {
    const kind = kindOf(a);
    if (!kind) return;
    const ranges = limitRanges(a, env);
    if (ranges.length === 0) return;
    const errs: string[] = [];
    for (const lr of ranges) errs.push(...(kind === 'pod' ? podErrors(lr, a.object!) : claimErrors(lr, a.object!)));
    if (errs.length === 0) return;
    // utilerrors.NewAggregate: one message alone, several in brackets, each once.
    const unique = [...new Set(errs)];
    throw forbidden({ group: '', resource: a.resource.resource }, a.name, unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`);
  },
};

/** Each item's map of enforced values, names sorted (kube ranges over a Go map). */
function enforced(item: Record<string, unknown>, key: string): Array<[string, Quantity]> {
  return [...resourceListOf(item[key])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const MAX_MILLI = 2n ** 63n / 1000n;

/** requestLimitEnforcedValues: the three at one precision, thousandths when all fit. */
function values(req: Quantity | undefined, lim: Quantity | undefined, enf: Quantity): [bigint, bigint, bigint] {
  const v = (q: Quantity | undefined, scale: number) => (q ? scaledCeil(q.amount, scale) : 0n);
  const whole: [bigint, bigint, bigint] = [v(req, 0), v(lim, 0), v(enf, 0)];
  if (whole.every((x) => x <= MAX_MILLI)) return [v(req, 3), v(lim, 3), v(enf, 3)];
  return whole;
}

const text = quantityString;

function minError(type: string, name: string, enf: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = values(req, lim, enf);
  if (!req) return `minimum ${name} usage per ${type} is ${text(enf)}.  No request is specified`;
  if (r < e) return `minimum ${name} usage per ${type} is ${text(enf)}, but request is ${text(req)}`;
  if (lim && l < e) return `minimum ${name} usage per ${type} is ${text(enf)}, but limit is ${text(lim)}`;
  return undefined;
}

function maxError(type: string, name: string, enf: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l, e] = values(req, lim, enf);
  if (!lim) return `maximum ${name} usage per ${type} is ${text(enf)}.  No limit is specified`;
  if (l > e) return `maximum ${name} usage per ${type} is ${text(enf)}, but limit is ${text(lim)}`;
  if (req && r > e) return `maximum ${name} usage per ${type} is ${text(enf)}, but request is ${text(req)}`;
  return undefined;
}

function ratioError(type: string, name: string, enf: Quantity, requests: ResourceList, limits: ResourceList): string | undefined {
  const req = requests.get(name);
  const lim = limits.get(name);
  const [r, l] = values(req, lim, enf);
  if (!req || r === 0n) return `${name} max limit to request ratio per ${type} is ${text(enf)}, but no request is specified or request is 0`;
  if (!lim || l === 0n) return `${name} max limit to request ratio per ${type} is ${text(enf)}, but no limit is specified or limit is 0`;
  const observed = Number(l) / Number(r);
  const whole = scaledCeil(enf.amount, 0);
  const [ratio, max] = whole <= MAX_MILLI ? [observed * 1000, Number(scaledCeil(enf.amount, 3))] : [observed, Number(whole)];
  // Go's %f: six decimals.
  if (ratio > max) return `${name} max limit to request ratio per ${type} is ${text(enf)}, but provided ratio is ${observed.toFixed(6)}`;
  return undefined;
}

function checks(type: string, item: Record<string, unknown>, requests: ResourceList, limits: ResourceList): string[] {
  const out: Array<string | undefined> = [];
  for (const [k, v] of enforced(item, 'min')) out.push(minError(type, k, v, requests, limits));
  for (const [k, v] of enforced(item, 'max')) out.push(maxError(type, k, v, requests, limits));
  for (const [k, v] of enforced(item, 'maxLimitRequestRatio')) out.push(ratioError(type, k, v, requests, limits));
  return out.filter((e): e is string => e !== undefined);
}

/** PodValidateLimitFunc: each container and init container against Container items, the pod's totals against Pod items. */
function podErrors(lr: KObject, pod: KObject): string[] {
  const errs: string[] = [];
  for (const item of items(lr)) {
    const type = str(item, 'type');
    if (type === 'Container') {
      for (const c of [...list(pod, 'spec', 'containers'), ...list(pod, 'spec', 'initContainers')]) {
        const res = record(c, 'resources');
        errs.push(...checks(type, item, resourceListOf(res['requests']), resourceListOf(res['limits'])));
      }
    } else if (type === 'Pod') {
      errs.push(...checks(type, item, podResources(pod, 'requests'), podResources(pod, 'limits')));
    }
  }
  return errs;
}

/** PersistentVolumeClaimValidateLimitFunc: min against the requests, max against the requests alone. */
function claimErrors(lr: KObject, pvc: KObject): string[] {
  const errs: Array<string | undefined> = [];
  const requests = resourceListOf(record(pvc, 'spec', 'resources')['requests']);
  for (const item of items(lr)) {
    const type = str(item, 'type');
    if (type !== 'PersistentVolumeClaim') continue;
    for (const [k, v] of enforced(item, 'min')) errs.push(minError(type, k, v, requests, new Map()));
    for (const [k, v] of enforced(item, 'max')) {
      const req = requests.get(k);
      const [r, , e] = values(req, undefined, v);
      if (!req) errs.push(`maximum ${k} usage per ${type} is ${text(v)}.  No request is specified`);
      else if (r > e) errs.push(`maximum ${k} usage per ${type} is ${text(v)}, but request is ${text(req)}`);
    }
  }
  return errs.filter((e): e is string => e !== undefined);
}
