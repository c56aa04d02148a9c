// Values as kube-apiserver's messages print them: Go's %v for numbers
// (1e+06, not 1000000, for a float), JSON with sorted keys for objects, and
// the field.Error bodies apimachinery writes.
import type { StatusCause } from '../api/status.js';
import { canonicalJson } from '../fieldmanager/shape.js';

/** Go's `%v` of a float64. */
export function goFloat(v: number): string {
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : v < 0 ? '-Inf' : 'NaN';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const [mantissa, expPart] = v.toExponential().split('e') as [string, string];
  const exp = Number(expPart);
  if (exp < -4 || exp >= 6) {
    // strconv's 'g' with the shortest digits switches to %e at exponent 6; the exponent has two digits at least
    const sign = exp < 0 ? '-' : '+';
    const abs = Math.abs(exp);
    return `${mantissa}e${sign}${abs < 10 ? `0${abs}` : abs}`;
  }
  return String(v);
}

/** A JSON number as kube prints the decoded value: int64 as is, float64 as %v. */
export function goNumber(v: number): string {
  return Number.isInteger(v) && Math.abs(v) < 2 ** 63 ? BigInt(v).toString() : goFloat(v);
}

/** A bad value as field.Error prints it. */
export function goValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') return goNumber(v);
  if (typeof v === 'boolean') return String(v);
  return canonicalJson(v);
}

export const fieldError = {
  required: (field: string, detail = ''): StatusCause => ({
    reason: 'FieldValueRequired',
    field,
    message: detail ? `Required value: ${detail}` : 'Required value',
  }),
  invalid: (field: string, value: unknown, detail: string): StatusCause => ({
    reason: 'FieldValueInvalid',
    field,
    message: `Invalid value: ${goValue(value)}${detail ? `: ${detail}` : ''}`,
  }),
  typeInvalid: (field: string, value: unknown, detail: string): StatusCause => ({
    reason: 'FieldValueTypeInvalid',
    field,
    message: `Invalid value: ${goValue(value)}: ${detail}`,
  }),
  forbidden: (field: string, detail: string): StatusCause => ({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${detail}` }),
  notSupported: (field: string, value: unknown, allowed: readonly string[]): StatusCause => ({
    reason: 'FieldValueNotSupported',
    field,
    message: `Unsupported value: ${goValue(value)}: supported values: ${allowed.map((a) => JSON.stringify(a)).join(', ')}`,
  }),
  tooLong: (field: string, max: number): StatusCause => ({
    reason: 'FieldValueTooLong',
    field,
    message: `Too long: may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}`,
  }),
  tooMany: (field: string, actual: number, max: number): StatusCause => ({
    reason: 'FieldValueTooMany',
    field,
    message: `Too many: ${actual}: must have at most ${max} ${max === 1 ? 'item' : 'items'}`,
  }),
  duplicate: (field: string, value: unknown): StatusCause => ({ reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${goValue(value)}` }),
  internal: (field: string, detail: string): StatusCause => ({ reason: 'InternalError', field, message: `Internal error: ${detail}` }),
};
