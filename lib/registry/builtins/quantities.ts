// Resource quantities in client objects (`500m`, `1Gi`, 2): parsed once with
// the CEL library's exact parser, and the causes kube gives for them.
import { cause, type StatusCause } from '../../api/status.js';
import { parseQuantity, type Amount } from '../../cel/quantity.js';

/** resource.ErrFormatWrong's words. */
export const QUANTITY_FORMAT = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** A quantity given as a string or a JSON number; undefined when it is neither or does not parse. */
export function quantityOf(v: unknown): Amount | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? parseQuantity(String(v)) : undefined;
  return typeof v === 'string' ? parseQuantity(v) : undefined;
}

/** 422 naming the field when `v` is present and not a quantity. */
export function quantityCauses(v: unknown, field: string): StatusCause[] {
  if (v === undefined || v === null) return [];
  return quantityOf(v) === undefined ? [cause.invalid(field, v, QUANTITY_FORMAT)] : [];
}

/** -1, 0 or 1, as Quantity.Sign; undefined when `v` is not a quantity. */
export function quantitySign(v: unknown): number | undefined {
  const a = quantityOf(v);
  return a === undefined ? undefined : a.n > 0n ? 1 : a.n < 0n ? -1 : 0;
}

/** a compared with b (-1, 0, 1), as Quantity.Cmp. */
export function compareAmounts(a: Amount, b: Amount): number {
  const e = Math.min(a.e, b.e);
  const x = a.n * 10n ** BigInt(a.e - e);
  const y = b.n * 10n ** BigInt(b.e - e);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** a compared with b (-1, 0, 1); undefined unless both are quantities. */
export function compareQuantities(a: unknown, b: unknown): number | undefined {
  const x = quantityOf(a);
  const y = quantityOf(b);
  return x && y ? compareAmounts(x, y) : undefined;
}

/** How a quantity prints (resource.Format): kept from the text it was read from, as Quantity keeps it. */
export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** An amount and the format it prints in (a resource.Quantity). */
export interface Quantity {
  readonly amount: Amount;
  readonly format: QuantityFormat;
}

export const ZERO_QUANTITY: Quantity = Object.freeze({ amount: Object.freeze({ n: 0n, e: 0 }), format: 'DecimalSI' });

/** A quantity with its format (binary suffix → BinarySI, exponent → DecimalExponent); undefined when `v` is not one. */
export function readQuantity(v: unknown): Quantity | undefined {
  const amount = quantityOf(v);
  if (amount === undefined) return undefined;
  const s = typeof v === 'string' ? v : '';
  const format: QuantityFormat = /[KMGTPE]i$/.test(s) ? 'BinarySI' : /[0-9][eE][+-]?[0-9]+$/.test(s) ? 'DecimalExponent' : 'DecimalSI';
  return { amount, format };
}

/** A whole number of objects (resource.NewQuantity(n, DecimalSI)). */
export function countQuantity(n: number): Quantity {
  return { amount: normalized(BigInt(n), 0), format: 'DecimalSI' };
}

function normalized(n: bigint, e: number): Amount {
  if (n === 0n) return { n: 0n, e: 0 };
  while (n % 10n === 0n) {
    n /= 10n;
    e++;
  }
  return { n, e };
}

function aligned(a: Amount, b: Amount): [bigint, bigint, number] {
  const e = Math.min(a.e, b.e);
  return [a.n * 10n ** BigInt(a.e - e), b.n * 10n ** BigInt(b.e - e), e];
}

/** a + b; a zero `a` takes b's format (Quantity.Add). */
export function addQuantities(a: Quantity, b: Quantity): Quantity {
  const [x, y, e] = aligned(a.amount, b.amount);
  return { amount: normalized(x + y, e), format: a.amount.n === 0n ? b.format : a.format };
}

/** a - b; a zero `a` takes b's format (Quantity.Sub). */
export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  const [x, y, e] = aligned(a.amount, b.amount);
  return { amount: normalized(x - y, e), format: a.amount.n === 0n ? b.format : a.format };
}

/** The amount times 10^scale, rounded up (Quantity.Value at 0, MilliValue at 3). */
export function scaledCeil(a: Amount, scale: number): bigint {
  const e = a.e + scale;
  if (e >= 0) return a.n * 10n ** BigInt(e);
  const d = 10n ** BigInt(-e);
  const q = a.n / d;
  return a.n % d !== 0n && a.n > 0n ? q + 1n : q;
}

/** The canonical text of a quantity (Quantity.String): `1500m`, `2k`, `1536Mi`, `1e3`; below a nano rounded up, as kube rounds it. */
export function quantityString(q: Quantity): string {
  let { n, e } = q.amount;
  if (n === 0n) return '0';
  const negative = n < 0n;
  if (negative) n = -n;
  if (e < -9) {
    const d = 10n ** BigInt(-9 - e);
    [n, e] = [(n + d - 1n) / d, -9];
  }
  return `${negative ? '-' : ''}${canonicalText(n, e, q.format)}`;
}

const INT64_MAX = 2n ** 63n - 1n;
const DECIMAL_SUFFIX: Readonly<Record<string, number>> = { '': 0, n: -9, u: -6, m: -3, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const BINARY_SUFFIX: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SUFFIX_OF_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX).map(([s, e]) => [e, s]));
const SUFFIX_OF_1024 = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** parseQuantityString's pieces: sign, leading zeros, numerator, denominator, suffix. */
const PIECES = /^([+-]?)0*([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)$/;

type Format = QuantityFormat;

/**
 * A quantity as kube-apiserver writes it back after decoding (Quantity's
 * ParseQuantity then MarshalJSON): the input itself when ParseQuantity keeps
 * it (already canonical: `100M`, `1500m`, `3Ki`), else CanonicalizeBytes'
 * form in the input's format (`1000m`→`1`, `0.5`→`500m`, `1.5Gi`→`1536Mi`,
 * `1e3` stays an exponent), sub-nano precision rounded up away from zero.
 * undefined when `s` is not a quantity.
 */
export function canonicalQuantity(s: string): string | undefined {
  if (s === '0') return s;
  if (quantityOf(s) === undefined) return undefined;
  const m = PIECES.exec(s);
  if (!m) return undefined;
  const [, sign, whole, denom = '', suffix] = m as unknown as [string, string, string, string | undefined, string];
  const num = whole === '' ? '0' : whole;
  let format: Format;
  let exponent: number;
  if (Object.hasOwn(DECIMAL_SUFFIX, suffix)) [format, exponent] = ['DecimalSI', DECIMAL_SUFFIX[suffix]!];
  else if (Object.hasOwn(BINARY_SUFFIX, suffix)) [format, exponent] = ['BinarySI', BINARY_SUFFIX[suffix]!];
  else [format, exponent] = ['DecimalExponent', Number(suffix.slice(1))];

  // ParseQuantity's int64 fast path, which keeps the input string when it is already canonical.
  const binary = format === 'BinarySI';
  const precision = !binary ? 18 - (num.length + denom.length) : denom === '' ? 15 - num.length - Math.trunc((exponent * 3) / 10) - 1 : -1;
  const scale = (binary ? 0 : exponent) - denom.length;
  if (precision >= 0 && scale >= -9) {
    const shifted = num + denom;
    const value = BigInt(shifted);
    if (value * (binary ? 2n ** BigInt(exponent) : 1n) <= INT64_MAX) {
      const keep = binary ? (value & 7n) !== 0n : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
      if (keep) return s;
    }
  }

  // The exact amount n × 10^e, rounded up (away from zero) to nano units.
  let n = BigInt(num + denom);
  let e = (binary ? 0 : exponent) - denom.length;
  if (binary) n *= 2n ** BigInt(exponent);
  if (n !== 0n && e < -9) {
    const d = 10n ** BigInt(-9 - e);
    n = (n + d - 1n) / d;
    e = -9;
  }
  // Binary quantities are capped at int64's largest value.
  if (binary && n * 10n ** BigInt(Math.max(e, 0)) > INT64_MAX * 10n ** BigInt(Math.max(-e, 0))) [n, e] = [INT64_MAX, 0];
  if (n === 0n) return '0';
  const negative = sign === '-';
  return (negative ? '-' : '') + canonicalText(n, e, format);
}

/** CanonicalizeBytes for a positive amount n × 10^e. */
function canonicalText(n: bigint, e: number, format: Format): string {
  if (format === 'BinarySI') {
    // Below 1024, or not a whole number, a binary quantity is written in decimal SI.
    const whole = e >= 0 ? n * 10n ** BigInt(e) : n % 10n ** BigInt(-e) === 0n ? n / 10n ** BigInt(-e) : undefined;
    if (whole !== undefined && whole >= 1024n) {
      let v = whole;
      let times = 0;
      while (v >= 1024n && v % 1024n === 0n) [v, times] = [v / 1024n, times + 1];
      return `${v}${SUFFIX_OF_1024[times]}`;
    }
    format = 'DecimalSI';
  }
  while (n % 10n === 0n) [n, e] = [n / 10n, e + 1];
  while (((e % 3) + 3) % 3 !== 0) [n, e] = [n * 10n, e - 1];
  // An exponent with no SI suffix (past E) gets none at all: kube writes `1000E` as `1`.
  if (format === 'DecimalSI') return `${n}${SUFFIX_OF_EXPONENT.get(e) ?? ''}`;
  return e === 0 ? `${n}` : `${n}e${e}`;
}

/** canonicalQuantity for a JSON value kube decodes as a Quantity (a string or a number); other values as they are. */
export function canonicalQuantityValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? (canonicalQuantity(String(v)) ?? v) : v;
  return typeof v === 'string' ? (canonicalQuantity(v) ?? v) : v;
}
