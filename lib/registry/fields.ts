// Safe reads of fields in objects whose shape the server has not checked yet.
// Table cells, field selectors and validators run on stored objects that came
// from clients, so every read tolerates a missing or mistyped field.
import { isPlainObject } from '../api/meta.js';

/** The value at a path of object keys, or undefined when any step is missing or not an object. */
export function at(obj: unknown, ...path: readonly string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** A string field; '' when absent or not a string (Go's zero value, which is what kube prints and selects on). */
export function str(obj: unknown, ...path: readonly string[]): string {
  const v = at(obj, ...path);
  return typeof v === 'string' ? v : '';
}

export function num(obj: unknown, ...path: readonly string[]): number {
  const v = at(obj, ...path);
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function bool(obj: unknown, ...path: readonly string[]): boolean {
  return at(obj, ...path) === true;
}

export function list(obj: unknown, ...path: readonly string[]): readonly unknown[] {
  const v = at(obj, ...path);
  return Array.isArray(v) ? v : [];
}

export function record(obj: unknown, ...path: readonly string[]): Readonly<Record<string, unknown>> {
  const v = at(obj, ...path);
  return isPlainObject(v) ? v : {};
}

/** A list of strings, skipping entries of any other type. */
export function strings(obj: unknown, ...path: readonly string[]): string[] {
  return list(obj, ...path).filter((v): v is string => typeof v === 'string');
}

/** Milliseconds since the epoch of an RFC 3339 timestamp field, or undefined when absent or unparsable. */
export function time(obj: unknown, ...path: readonly string[]): number | undefined {
  const v = at(obj, ...path);
  if (typeof v !== 'string' || v === '') return undefined;
  const ms = Date.parse(v);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Structural equality of JSON values (key order ignored), for "field is immutable" checks. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((v, i) => sameJson(v, b[i]));
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(b)) return false;
  const ak = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const bk = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}
