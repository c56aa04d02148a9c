// The Kubernetes quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go):
// quantity(), isQuantity() and the methods isInteger, asInteger,
// asApproximateFloat, sign, add, sub, isLessThan, isGreaterThan, compareTo.
// @bufbuild/cel has no object types without protobuf descriptors, so a
// quantity is a one-entry map under a key no client can write (marker.ts);
// its value is exact (a bigint times a power of ten), normalized so
// that `==` compares amounts, as kube's Quantity equality does.
import { celFunc, celMap, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { marked, markerKey } from './marker.js';

const KEY = markerKey('k8s.quantity');
const { DYN, STRING, BOOL, INT, DOUBLE } = CelScalar;
const QUANTITY = /^([+-]?)(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;
const DECIMAL: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY: Readonly<Record<string, bigint>> = { Ki: 10n, Mi: 20n, Gi: 30n, Ti: 40n, Pi: 50n, Ei: 60n };
const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/** An exact amount: n × 10^e, n without trailing zeros (0 is 0 × 10^0). */
export interface Amount {
  readonly n: bigint;
  readonly e: number;
}

function normalize(n: bigint, e: number): Amount {
  if (n === 0n) return { n: 0n, e: 0 };
  while (n % 10n === 0n) {
    n /= 10n;
    e++;
  }
  return { n, e };
}

/** Parses a Kubernetes quantity (`1.5Gi`, `500m`, `1e3`); undefined when it is not one. */
export function parseQuantity(s: string): Amount | undefined {
  const m = QUANTITY.exec(s);
  if (!m) return undefined;
  const [, sign, number, suffix = ''] = m as unknown as [string, string, string, string | undefined];
  const dot = number.indexOf('.');
  const digits = dot < 0 ? number : number.slice(0, dot) + number.slice(dot + 1);
  let n = BigInt(digits || '0');
  let e = dot < 0 ? 0 : -(number.length - dot - 1);
  if (Object.hasOwn(BINARY, suffix)) n *= 2n ** BINARY[suffix]!;
  else if (Object.hasOwn(DECIMAL, suffix)) e += DECIMAL[suffix]!;
  else if (suffix) {
    const x = Number(suffix.slice(1));
    if (!Number.isSafeInteger(x) || Math.abs(x) > 1000) return undefined;
    e += x;
  }
  return normalize(sign === '-' ? -n : n, e);
}

const make = (a: Amount) => celMap(new Map([[KEY, `${a.n}e${a.e}`]]));

function amountOf(v: CelValue): Amount {
  const x = marked(v, KEY);
  if (x !== undefined) {
    const [n, e] = x.split('e') as [string, string];
    return { n: BigInt(n), e: Number(e) };
  }
  if (typeof v === 'bigint') return normalize(v, 0);
  throw new Error('no such overload: not a quantity');
}

function align(a: Amount, b: Amount): [bigint, bigint, number] {
  const e = Math.min(a.e, b.e);
  return [a.n * 10n ** BigInt(a.e - e), b.n * 10n ** BigInt(b.e - e), e];
}

function compare(a: Amount, b: Amount): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function integer(a: Amount): bigint | undefined {
  if (a.e < 0) return undefined;
  const v = a.n * 10n ** BigInt(a.e);
  return v > INT64_MAX || v < INT64_MIN ? undefined : v;
}

function self(v: CelValue): Amount {
  return amountOf(v);
}

export const quantityFunctions: readonly CelFunc[] = [
  celFunc('quantity', [STRING], DYN, (s: string) => {
    const a = parseQuantity(s);
    if (!a) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`);
    return make(a);
  }),
  celFunc('isQuantity', [STRING], BOOL, (s: string) => parseQuantity(s) !== undefined),
  celMethod('isInteger', DYN, [], BOOL, function (this: CelValue) {
    return integer(self(this)) !== undefined;
  }),
  celMethod('asInteger', DYN, [], INT, function (this: CelValue) {
    const v = integer(self(this));
    if (v === undefined) throw new Error('cannot convert value to integer');
    return v;
  }),
  celMethod('asApproximateFloat', DYN, [], DOUBLE, function (this: CelValue) {
    const a = self(this);
    return Number(a.n) * 10 ** a.e;
  }),
  celMethod('sign', DYN, [], INT, function (this: CelValue) {
    const a = self(this);
    return a.n > 0n ? 1n : a.n < 0n ? -1n : 0n;
  }),
  celMethod('add', DYN, [DYN], DYN, function (this: CelValue, o: CelValue) {
    const [x, y, e] = align(self(this), amountOf(o));
    return make(normalize(x + y, e));
  }),
  celMethod('sub', DYN, [DYN], DYN, function (this: CelValue, o: CelValue) {
    const [x, y, e] = align(self(this), amountOf(o));
    return make(normalize(x - y, e));
  }),
  celMethod('isLessThan', DYN, [DYN], BOOL, function (this: CelValue, o: CelValue) {
    return compare(self(this), amountOf(o)) < 0;
  }),
  celMethod('isGreaterThan', DYN, [DYN], BOOL, function (this: CelValue, o: CelValue) {
    return compare(self(this), amountOf(o)) > 0;
  }),
  celMethod('compareTo', DYN, [DYN], INT, function (this: CelValue, o: CelValue) {
    return BigInt(compare(self(this), amountOf(o)));
  }),
];
