// kube's checks of an x-kubernetes-embedded-resource object
// (apiextensions' objectmeta.Validate): apiVersion a group/version, kind a
// DNS-1035 label in any case, metadata as ValidateObjectMeta checks it (name
// as a path segment, optional; generateName, namespace, labels, annotations).
import type { StatusCause } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue } from '../api/own.js';
import { checkName, isDNS1035Label, isDNS1123Label, validateAnnotations, validateLabels } from '../registry/names.js';
import { fieldError } from './render.js';

export function validateEmbedded(x: Record<string, unknown>, field: string, out: StatusCause[]): void {
  const at = (k: string) => (field ? `${field}.${k}` : k);
  for (const k of ['apiVersion', 'kind']) if (!hasOwn(x, k)) out.push(fieldError.required(at(k), 'must not be empty'));
  const apiVersion = ownValue(x, 'apiVersion');
  if (apiVersion !== undefined) {
    if (typeof apiVersion !== 'string') out.push(fieldError.invalid(at('apiVersion'), apiVersion, 'must be a string'));
    else if (apiVersion === '') out.push(fieldError.invalid(at('apiVersion'), apiVersion, 'must not be empty'));
    else if (apiVersion.split('/').length > 2) out.push(fieldError.invalid(at('apiVersion'), apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
  }
  const kind = ownValue(x, 'kind');
  if (kind !== undefined) {
    if (typeof kind !== 'string') out.push(fieldError.invalid(at('kind'), kind, 'must be a string'));
    else if (kind === '') out.push(fieldError.invalid(at('kind'), kind, 'must not be empty'));
    else {
      const errs = isDNS1035Label(kind.toLowerCase());
      if (errs.length) out.push(fieldError.invalid(at('kind'), kind, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
    }
  }
  const meta = ownValue(x, 'metadata');
  if (meta === undefined) return;
  const m = at('metadata');
  if (!isPlainObject(meta)) {
    out.push(fieldError.invalid(m, meta, 'must be an object'));
    return;
  }
  const name = ownValue(meta, 'name');
  if (typeof name === 'string' && name !== '') for (const e of checkName('path-segment', name, false)) out.push(fieldError.invalid(`${m}.name`, name, e));
  const generateName = ownValue(meta, 'generateName');
  if (typeof generateName === 'string' && generateName !== '')
    for (const e of checkName('path-segment', generateName, true)) out.push(fieldError.invalid(`${m}.generateName`, generateName, e));
  const namespace = ownValue(meta, 'namespace');
  if (typeof namespace === 'string' && namespace !== '')
    for (const e of isDNS1123Label(namespace)) out.push(fieldError.invalid(`${m}.namespace`, namespace, e));
  out.push(...validateLabels(ownValue(meta, 'labels'), `${m}.labels`), ...validateAnnotations(ownValue(meta, 'annotations'), `${m}.annotations`));
}
