// CEL optional values, as far as this module needs them: the absent value of
// kube's optional results (`format.named()`, `<format>.validate()`) and of
// oldSelf in optionalOldSelf rules. @bufbuild/cel 0.6 has no optional type
// (its parser refuses `.?x`), so an absent optional is a one-entry map under a
// marker key no client can write (marker.ts), and a present
// optional is its value itself; `hasValue()`, `value()` and `orValue()` are
// methods of dyn that recognise the marker.
import { celMethod, CelScalar, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import { markerKey } from './marker.js';

const NONE_KEY = markerKey('gatehouse.none');

/** optional.none(). */
export const none = (): Map<string, CelInput> => new Map([[NONE_KEY, true]]);

/** Whether a value is optional.none() (a JS Map as bound, or @bufbuild/cel's map as returned by a function). */
export function isNone(v: CelValue): boolean {
  if (v instanceof Map) return v.has(NONE_KEY);
  const m = v as { get?: unknown; has?: (k: string) => boolean };
  return typeof m?.get === 'function' && m.has?.(NONE_KEY) === true;
}

export const optionalFunctions: readonly CelFunc[] = [
  celMethod('hasValue', CelScalar.DYN, [], CelScalar.BOOL, function (this: CelValue) {
    return !isNone(this);
  }),
  celMethod('value', CelScalar.DYN, [], CelScalar.DYN, function (this: CelValue) {
    if (isNone(this)) throw new Error('optional.none() dereference');
    return this;
  }),
  celMethod('orValue', CelScalar.DYN, [CelScalar.DYN], CelScalar.DYN, function (this: CelValue, d: CelValue) {
    return isNone(this) ? d : this;
  }),
];
