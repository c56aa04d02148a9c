// The Kubernetes list library (k8s.io/apiserver/pkg/cel/library/lists.go) as
// far as it can be typed without generics: indexOf, lastIndexOf, min, max,
// sum and isSorted over lists of comparable scalars.
import { celMethod, CelScalar, listType, type CelFunc, type CelList, type CelValue } from '@bufbuild/cel';

const LIST = listType(CelScalar.DYN);
const { DYN, INT } = CelScalar;

type Scalar = bigint | number | string | boolean;

function items(list: CelList): CelValue[] {
  return Array.from(list);
}

function scalar(v: CelValue): Scalar {
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  throw new Error('list elements must be comparable scalars (int, double, string, bool)');
}

function compare(a: Scalar, b: Scalar): number {
  if (typeof a === 'boolean' || typeof b === 'boolean') {
    if (typeof a !== typeof b) throw new Error('no such overload: mixed element types');
    return a === b ? 0 : a ? 1 : -1;
  }
  if (typeof a === 'string' || typeof b === 'string') {
    if (typeof a !== typeof b) throw new Error('no such overload: mixed element types');
    return a < b ? -1 : a > b ? 1 : 0;
  }
  // Cross-type numeric comparison (int vs double) as CEL allows it.
  return a < b ? -1 : a > b ? 1 : 0;
}

function equal(a: CelValue, b: CelValue): boolean {
  if ((typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number')) return compare(a, b) === 0;
  return a === b;
}

function extreme(list: CelList, sign: 1 | -1): CelValue {
  const all = items(list);
  if (all.length === 0) throw new Error(sign < 0 ? 'min called on empty list' : 'max called on empty list');
  let best = scalar(all[0]!);
  for (const v of all.slice(1)) if (compare(scalar(v), best) * sign > 0) best = scalar(v);
  return best;
}

export const listFunctions: readonly CelFunc[] = [
  celMethod('indexOf', LIST, [DYN], INT, function (this: CelList, v: CelValue) {
    const all = items(this);
    return BigInt(all.findIndex((x) => equal(x, v)));
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function (this: CelList, v: CelValue) {
    const all = items(this);
    for (let i = all.length - 1; i >= 0; i--) if (equal(all[i]!, v)) return BigInt(i);
    return -1n;
  }),
  celMethod('min', LIST, [], DYN, function (this: CelList) {
    return extreme(this, -1) as never;
  }),
  celMethod('max', LIST, [], DYN, function (this: CelList) {
    return extreme(this, 1) as never;
  }),
  celMethod('sum', LIST, [], DYN, function (this: CelList) {
    const all = items(this);
    if (all.length === 0) return 0n as never;
    if (all.every((v) => typeof v === 'bigint')) return (all as bigint[]).reduce((a, b) => a + b, 0n) as never;
    if (all.every((v) => typeof v === 'number')) return (all as number[]).reduce((a, b) => a + b, 0) as never;
    throw new Error('sum needs a list of int or of double');
  }),
  celMethod('isSorted', LIST, [], CelScalar.BOOL, function (this: CelList) {
    const all = items(this).map(scalar);
    for (let i = 1; i < all.length; i++) if (compare(all[i - 1]!, all[i]!) > 0) return false;
    return true;
  }),
];
