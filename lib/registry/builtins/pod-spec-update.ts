// kube-apiserver 1.33's ValidatePodUpdate: what an update of a Pod itself (not
// a subresource) may change in its spec. Images, a lower or new
// activeDeadlineSeconds, added tolerations (tolerationSeconds may move),
// removed scheduling gates, a negative grace period set to 1, and — while the
// pod is gated — additions to its node selector and required node affinity;
// anything else is refused with kube's message, followed by what differs.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { at, list, record, str } from '../fields.js';
import { compareQuantities } from './quantities.js';

type Obj = Record<string, unknown>;

/** kube's updatablePodSpecFields, joined as its message joins them. */
export const POD_UPDATE_FORBIDDEN =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,' +
  '`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

const INT32_MAX = 2147483647;

function specOf(o: unknown): Obj {
  const s = at(o, 'spec');
  return isPlainObject(s) ? s : {};
}

/** ValidatePodUpdate's spec rules for an update of the pod itself; `obj` has been defaulted as the stored `old` was. */
export function validatePodSpecUpdate(obj: KObject, old: KObject): StatusCause[] {
  const spec = specOf(obj);
  const oldSpec = specOf(old);
  const causes: StatusCause[] = [];
  for (const group of ['containers', 'initContainers'] as const) {
    const now = list(spec, group);
    if (now.length !== list(oldSpec, group).length) return [...causes, cause.forbidden(`spec.${group}`, 'pod updates may not add or remove containers')];
    for (const [i, c] of now.entries()) {
      const image = str(c, 'image');
      if (image === '') causes.push(cause.required(`spec.${group}[${i}].image`));
      if (image.trim() !== image) causes.push(cause.invalid(`spec.${group}[${i}].image`, image, 'must not have leading or trailing whitespace'));
    }
  }
  const deadline = spec['activeDeadlineSeconds'];
  const oldDeadline = oldSpec['activeDeadlineSeconds'];
  if (typeof deadline === 'number') {
    if (deadline < 0 || deadline > INT32_MAX)
      return [...causes, cause.invalid('spec.activeDeadlineSeconds', deadline, `must be between 0 and ${INT32_MAX}, inclusive`)];
    if (typeof oldDeadline === 'number' && oldDeadline < deadline)
      return [...causes, cause.invalid('spec.activeDeadlineSeconds', deadline, 'must be less than or equal to previous value')];
  } else if (typeof oldDeadline === 'number') {
    causes.push(cause.invalid('spec.activeDeadlineSeconds', null, 'must not update from a positive integer to nil value'));
  }
  causes.push(...onlyAddedTolerations(list(spec, 'tolerations'), list(oldSpec, 'tolerations')));
  causes.push(...onlyDeletedGates(list(spec, 'schedulingGates'), list(oldSpec, 'schedulingGates')));
  if (semanticEqual(spec, oldSpec)) return causes;

  const munged: Obj = { ...spec };
  for (const group of ['containers', 'initContainers'] as const) {
    const before = list(oldSpec, group);
    if (Array.isArray(spec[group])) munged[group] = (spec[group] as unknown[]).map((c, i) => (isPlainObject(c) ? { ...c, image: at(before[i], 'image') } : c));
  }
  for (const f of ['activeDeadlineSeconds', 'schedulingGates', 'tolerations']) {
    if (oldSpec[f] === undefined) delete munged[f];
    else munged[f] = oldSpec[f];
  }
  const grace = oldSpec['terminationGracePeriodSeconds'];
  if (typeof grace === 'number' && grace < 0 && munged['terminationGracePeriodSeconds'] === 1) munged['terminationGracePeriodSeconds'] = grace;
  if (list(oldSpec, 'schedulingGates').length > 0) causes.push(...mungeGatedPlacement(munged, oldSpec));

  const diff: string[] = [];
  differences(oldSpec, munged, '', diff);
  if (diff.length > 0) causes.push(cause.forbidden('spec', `${POD_UPDATE_FORBIDDEN}\n${diff.join('\n')}`));
  return causes;
}

/** validateOnlyAddedTolerations: each old toleration still present, tolerationSeconds aside. */
function onlyAddedTolerations(now: readonly unknown[], before: readonly unknown[]): StatusCause[] {
  const bare = (t: unknown): unknown => {
    if (!isPlainObject(t)) return t;
    const { tolerationSeconds: _, ...rest } = t;
    return rest;
  };
  const current = now.map(bare);
  for (const t of before) {
    const b = bare(t);
    if (!current.some((c) => semanticEqual(c, b)))
      return [cause.forbidden('spec.tolerations', 'existing toleration can not be modified except its tolerationSeconds')];
  }
  return [];
}

/** validateOnlyDeletedSchedulingGates: a gate not in the old list is refused (kube's order is Go's map order; here the list's). */
function onlyDeletedGates(now: readonly unknown[], before: readonly unknown[]): StatusCause[] {
  const had = new Set(before.map((g) => str(g, 'name')));
  const added = new Map<string, number>();
  for (const [i, g] of now.entries()) added.set(str(g, 'name'), i);
  const causes: StatusCause[] = [];
  for (const [name, i] of added) {
    if (!had.has(name)) causes.push(cause.forbidden(`spec.schedulingGates[${i}].name`, `only deletion is allowed, but found new scheduling gate '${name}'`));
  }
  return causes;
}

/**
 * A gated pod's node selector and required node affinity may gain entries
 * (validateNodeSelectorMutation, validateNodeAffinityMutation); checked here,
 * then set back to the old values in `munged` so the final comparison skips them.
 */
function mungeGatedPlacement(munged: Obj, oldSpec: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  const selector = record(munged, 'nodeSelector');
  const oldSelector = record(oldSpec, 'nodeSelector');
  if (!semanticEqual(selector, oldSelector)) {
    for (const [k, v] of Object.entries(oldSelector)) {
      if (!Object.hasOwn(selector, k) || selector[k] !== v) {
        causes.push(cause.invalid('spec.nodeSelector', selector, 'only additions to spec.nodeSelector are allowed (no mutations or deletions)'));
        break;
      }
    }
    if (oldSpec['nodeSelector'] === undefined) delete munged['nodeSelector'];
    else munged['nodeSelector'] = oldSpec['nodeSelector'];
  }
  const oldNA = at(oldSpec, 'affinity', 'nodeAffinity');
  const newNA = at(munged, 'affinity', 'nodeAffinity');
  if (semanticEqual(oldNA, newNA)) return causes;
  const termsField = 'spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms';
  const oldTerms = list(oldNA, 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms');
  const newTerms = list(newNA, 'requiredDuringSchedulingIgnoredDuringExecution', 'nodeSelectorTerms');
  if (at(oldNA, 'requiredDuringSchedulingIgnoredDuringExecution') !== undefined) {
    if (oldTerms.length > 0 && oldTerms.length !== newTerms.length) {
      causes.push(cause.invalid(termsField, newTerms, 'no additions/deletions to non-empty NodeSelectorTerms list are allowed'));
    } else {
      for (const [i, t] of oldTerms.entries()) {
        const n = newTerms[i];
        const kept = (f: string) => list(t, f).every((r) => list(n, f).some((x) => semanticEqual(x, r)));
        if (!kept('matchExpressions') || !kept('matchFields'))
          causes.push(cause.invalid(`${termsField}[${i}]`, n, 'only additions are allowed (no mutations or deletions)'));
      }
    }
  }
  const affinity = at(munged, 'affinity');
  const oldAffinity = at(oldSpec, 'affinity');
  if (!isPlainObject(affinity)) {
    if (oldNA !== undefined) munged['affinity'] = { nodeAffinity: oldNA };
  } else if (oldAffinity === undefined && affinity['podAffinity'] === undefined && affinity['podAntiAffinity'] === undefined) {
    delete munged['affinity'];
  } else {
    const next: Obj = { ...affinity };
    if (oldNA === undefined) delete next['nodeAffinity'];
    else next['nodeAffinity'] = oldNA;
    munged['affinity'] = next;
  }
  return causes;
}

/** Go's zero value as JSON shows it: apimachinery's semantic equality reads an empty list or map as nil, and an omitted field as its zero. */
function isEmpty(v: unknown): boolean {
  return (
    v === undefined ||
    v === null ||
    v === false ||
    v === 0 ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (isPlainObject(v) && Object.keys(v).length === 0)
  );
}

/** apiequality.Semantic.DeepEqual on JSON: zero values equal absence, quantities compare by amount. */
function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b || (isEmpty(a) && isEmpty(b))) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => semanticEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) if (!semanticEqual(a[k], b[k])) return false;
    return true;
  }
  return typeof a === 'string' && typeof b === 'string' && compareQuantities(a, b) === 0 && looksLikeQuantity(a) && looksLikeQuantity(b);
}

/** A string that only a Quantity field would hold: digits with a suffix, never a name or an image. */
function looksLikeQuantity(s: string): boolean {
  return /^[+-]?[0-9.]/.test(s);
}

/** The fields that differ, one `-`/`+` pair per leaf, by path (kube prints Go's cmp.Diff of its internal types here). */
function differences(a: unknown, b: unknown, path: string, out: string[]): void {
  if (semanticEqual(a, b)) return;
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) differences(a[k], b[k], path ? `${path}.${k}` : k, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) differences(a[i], b[i], `${path}[${i}]`, out);
    return;
  }
  out.push(`-\t${path}: ${show(a)}`, `+\t${path}: ${show(b)}`);
}

function show(v: unknown): string {
  return v === undefined ? 'nil' : JSON.stringify(v);
}
