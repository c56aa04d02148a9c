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
