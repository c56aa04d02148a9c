// The ConversionReview exchange with a CRD's conversion webhook, as
// apiextensions-apiserver's webhook converter makes it: the request body, and
// the checks of the answer (its kind and uid, result.status, the count of
// converted objects, each object's apiVersion, kind, name, namespace and uid),
// after which the converted objects keep the originals' metadata except
// labels and annotations, which the webhook may change if they stay valid.
// Errors are kube's texts, prefixed by `conversion webhook for <gvk> …`.
import type { KObject } from '../api/meta.js';
import { isPlainObject } from '../api/meta.js';
import { validateAnnotations, validateLabels } from '../registry/names.js';

export class ConversionError extends Error {}

export type ReviewVersion = 'v1' | 'v1beta1';

/** The first ConversionReview version the CRD lists that this server speaks (kube: v1, then v1beta1, in the CRD's order). */
export function reviewVersionOf(versions: readonly string[]): ReviewVersion | undefined {
  for (const v of versions) if (v === 'v1' || v === 'v1beta1') return v;
  return undefined;
}

export function conversionRequest(version: ReviewVersion, uid: string, desiredAPIVersion: string, objects: readonly KObject[]): Record<string, unknown> {
  return { kind: 'ConversionReview', apiVersion: `apiextensions.k8s.io/${version}`, request: { uid, desiredAPIVersion, objects } };
}

/** `schema.GroupVersionKind`'s `%v`: `stable.example.com/v1, Kind=CronTab`. */
export function gvkText(apiVersion: string, kind: string): string {
  return `${apiVersion}, Kind=${kind}`;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const metaOf = (o: unknown): Record<string, unknown> => (isPlainObject(o) && isPlainObject(o['metadata']) ? o['metadata'] : {});

/** Go's `%T` of a decoded JSON value. */
function goType(v: unknown): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return Number.isInteger(v) ? 'int64' : 'float64';
    case 'boolean':
      return 'bool';
    default:
      return 'map[string]interface {}';
  }
}

/**
 * The converted objects of a webhook's answer (`body` = the decoded JSON), in
 * the order of `originals`, or a ConversionError with kube's text. `from` names
 * what was converted (`gvkText`).
 */
export function convertedObjects(
  version: ReviewVersion,
  uid: string,
  desiredAPIVersion: string,
  originals: readonly KObject[],
  body: unknown,
  from: string,
): KObject[] {
  const list = responseObjects(version, uid, body, from);
  if (list.length !== originals.length) {
    if (originals.length === 1) throw new ConversionError(`conversion webhook for ${from} failed, no objects returned`);
    throw new ConversionError(`conversion webhook for ${from} returned ${list.length} objects, expected ${originals.length}`);
  }
  return originals.map((original, i) => {
    const converted = list[i];
    const at = originals.length === 1 ? 'invalid object at index 0' : `invalid converted object at index ${i}`;
    if (!isPlainObject(converted))
      throw new ConversionError(`conversion webhook for ${from} returned ${at}: Object 'Kind' is missing in '${JSON.stringify(converted)}'`);
    const gv = str(converted['apiVersion']);
    if (gv !== desiredAPIVersion)
      throw new ConversionError(`conversion webhook for ${from} returned ${at}: invalid groupVersion (expected ${desiredAPIVersion}, received ${gv})`);
    const kind = str(converted['kind']);
    if (kind !== original.kind)
      throw new ConversionError(`conversion webhook for ${from} returned ${at}: invalid kind (expected ${original.kind ?? ''}, received ${kind})`);
    const bad = changedIdentity(original, converted);
    if (bad)
      throw new ConversionError(
        `conversion webhook for ${from} returned ${originals.length === 1 ? 'invalid object' : `invalid converted object at index ${i}`}: ${bad}`,
      );
    try {
      return withOriginalMeta(original, converted);
    } catch (err) {
      if (!(err instanceof ConversionError)) throw err;
      throw new ConversionError(
        `conversion webhook for ${from} returned invalid metadata${originals.length === 1 ? '' : ` in object at index ${i}`}: ${err.message}`,
      );
    }
  });
}

/** getConvertedObjectsFromResponse: the answer is a ConversionReview of the version sent, for this uid, with Success. */
function responseObjects(version: ReviewVersion, uid: string, body: unknown, from: string): unknown[] {
  const invalid = (why: string) => new ConversionError(`conversion webhook for ${from} returned invalid response: ${why}`);
  if (!isPlainObject(body)) throw new ConversionError(`conversion webhook for ${from} failed: the webhook's answer is not a JSON object`);
  const want = `apiextensions.k8s.io/${version}, Kind=ConversionReview`;
  const got = `${str(body['apiVersion'])}, Kind=${str(body['kind'])}`;
  if (got !== want) throw invalid(`expected webhook response of ${want}, got ${got}`);
  const response = body['response'];
  if (!isPlainObject(response)) throw invalid('no response provided');
  if (str(response['uid']) !== uid) throw invalid(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(str(response['uid']))}`);
  const result = isPlainObject(response['result']) ? response['result'] : {};
  if (result['status'] !== 'Success') {
    const message = str(result['message']);
    throw invalid(message !== '' ? message : `response.result.status was '${str(result['status'])}', not 'Success'`);
  }
  const objs = response['convertedObjects'];
  return Array.isArray(objs) ? objs : [];
}

/** validateConvertedObject: a webhook may not rename an object nor move it. */
function changedIdentity(original: KObject, converted: Record<string, unknown>): string | undefined {
  const a = metaOf(original);
  const b = metaOf(converted);
  for (const [field, what] of [
    ['name', 'name'],
    ['namespace', 'namespace'],
    ['uid', 'UID'],
  ] as const) {
    if (str(a[field]) !== str(b[field])) return `must have the same ${what}: ${str(a[field])} != ${str(b[field])}`;
  }
  return undefined;
}

/**
 * restoreObjectMeta: the converted object carries the original's metadata,
 * except labels and annotations, taken from the webhook when they are string
 * maps and (if changed) valid.
 */
function withOriginalMeta(original: KObject, converted: Record<string, unknown>): KObject {
  if (!Object.hasOwn(converted, 'metadata')) throw new ConversionError('missing metadata in converted object');
  const answered = converted['metadata'];
  if (!isPlainObject(answered)) throw new ConversionError(`invalid metadata of type ${goType(answered)} in converted object`);
  const metadata = structuredClone(original.metadata) as Record<string, unknown>;
  for (const field of ['labels', 'annotations'] as const) {
    const value = Object.hasOwn(answered, field) ? answered[field] : undefined;
    if (value === undefined || value === null) {
      delete metadata[field];
      continue;
    }
    if (!isPlainObject(value)) throw new ConversionError(`invalid metadata.${field} of type ${goType(value)} in converted object`);
    const before = isPlainObject(metadata[field]) ? (metadata[field] as Record<string, unknown>) : {};
    let changed = Object.keys(before).length !== Object.keys(value).length;
    for (const [k, v] of Object.entries(value)) {
      if (typeof v !== 'string') throw new ConversionError(`invalid metadata.${field}[${k}]=${JSON.stringify(v)} of type ${goType(v)} in converted object`);
      if (!Object.hasOwn(before, k) || before[k] !== v) changed = true;
    }
    if (changed) {
      const causes = field === 'labels' ? validateLabels(value, 'metadata.labels') : validateAnnotations(value, 'metadata.annotation');
      if (causes.length > 0) throw new ConversionError(causes.map((c) => `${c.field}: ${c.message}`).join(', '));
    }
    metadata[field] = value;
  }
  // Spread defines own data properties: a member named __proto__ stays data.
  return { ...converted, metadata } as KObject;
}
