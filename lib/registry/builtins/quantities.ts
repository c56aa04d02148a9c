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

const DECIMAL_SUFFIX: Readonly<Record<number, string>> = { [-9]: 'n', [-6]: 'u', [-3]: 'm', 0: '', 3: 'k', 6: 'M', 9: 'G', 12: 'T', 15: 'P', 18: 'E' };
const BINARY_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];

/** The canonical text of a quantity (Quantity.String): `1500m`, `2k`, `1536Mi`, `1e3`. */
export function quantityString(q: Quantity): string {
  const { n, e } = q.amount;
  if (n === 0n) return '0';
  if (q.format === 'BinarySI' && e >= 0) {
    const v = n * 10n ** BigInt(e);
    if (v >= 1024n || v <= -1024n) {
      let m = v;
      let k = 0;
      while (k < BINARY_SUFFIX.length - 1 && m % 1024n === 0n) {
        m /= 1024n;
        k++;
      }
      return `${m}${BINARY_SUFFIX[k]}`;
    }
  }
  // Below a nano the amount is rounded up to one, as kube rounds it.
  if (e < -9) return quantityString({ amount: normalized(scaledCeil(q.amount, 9), -9), format: q.format });
  const exp = Math.min(18, Math.floor(e / 3) * 3);
  const mantissa = n * 10n ** BigInt(e - exp);
  if (q.format === 'DecimalExponent') return exp === 0 ? `${mantissa}` : `${mantissa}e${exp}`;
  return `${mantissa}${DECIMAL_SUFFIX[exp]}`;
}
