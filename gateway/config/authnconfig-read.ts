// Reading untyped YAML/JSON values field by field, recording every problem
// under its field path instead of stopping at the first.
import { fieldError, type FieldPath } from './fielderrors.js';

export type Errors = string[];
export type RawObject = Readonly<Record<string, unknown>>;

/** An object with only the given keys (unknown ones are reported), or undefined. */
export function object(raw: unknown, p: FieldPath, keys: readonly string[], errs: Errors): RawObject | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    errs.push(fieldError.type(p, raw, 'an object'));
    return undefined;
  }
  for (const k of Object.keys(raw)) if (!keys.includes(k)) errs.push(fieldError.unknown(p.child(k)));
  return raw as RawObject;
}

export function list(raw: unknown, p: FieldPath, errs: Errors): readonly unknown[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    errs.push(fieldError.type(p, raw, 'a list'));
    return [];
  }
  return raw;
}

/** A string field; `undefined` when absent (or of the wrong type, which is reported). */
export function string(raw: unknown, p: FieldPath, errs: Errors): string | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (typeof raw !== 'string') {
    errs.push(fieldError.type(p, raw, 'a string'));
    return undefined;
  }
  return raw;
}
