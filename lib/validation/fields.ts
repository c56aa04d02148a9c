// fieldValidation (Ignore | Warn | Strict): what happens to unknown and
// duplicate fields, the warnings of Warn (lib/http/warnings.ts), and the 400 of Strict,
// worded as kube-apiserver words them.
import { badRequest, invalid, type GroupKind, type StatusCause } from '../api/status.js';
import type { StructNode } from '../schema/model.js';
import { pruneAndValidate } from './structural.js';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const LEVELS: readonly FieldValidation[] = ['Ignore', 'Warn', 'Strict'];

/** The fieldValidation query parameter; absent or empty = Warn; anything else → 400. */
export function parseFieldValidation(query: URLSearchParams): FieldValidation {
  const v = query.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if ((LEVELS as readonly string[]).includes(v)) return v as FieldValidation;
  throw badRequest(`fieldValidation parameter unsupported: ${JSON.stringify(v)}: must be one of ${LEVELS.join(', ')}`);
}

export interface FieldProblems {
  readonly unknown: readonly string[];
  readonly duplicates: readonly string[];
}

/** `unknown field "spec.foo"`, `duplicate field "metadata.name"`: one per field (a key repeated 10⁵ times is one problem), unknown first. */
export function problemMessages(p: FieldProblems): string[] {
  // Nearly every write has neither: no Set and no three spreads (~4.5k instructions a create, 2026-11-30-create-cpu-cuts-7.md).
  if (p.unknown.length === 0 && p.duplicates.length === 0) return [];
  return [...new Set([...p.unknown.map((f) => `unknown field "${f}"`), ...p.duplicates.map((f) => `duplicate field "${f}"`)])];
}

export interface CheckOptions {
  readonly level: FieldValidation;
  /** The prefix of a Strict error (`Pod in version "v1" cannot be handled as a Pod: `); empty for patches. */
  readonly strictPrefix: string;
  readonly gk: GroupKind;
  readonly name: string;
}

/**
 * The decoding half of fieldValidation, as kube's strict decoder: unknown
 * fields of `obj` are removed in place; for Strict, unknown and duplicate
 * fields → 400 listing all. Returns the warnings to send (Warn) and the
 * schema's causes (wrong types, missing required fields) for the caller to
 * judge: objects refuse them (checkObject); the review APIs, whose readers
 * name a wrongly typed field themselves, leave them to those readers.
 */
export function decodeFields(
  obj: Record<string, unknown>,
  schema: StructNode | undefined,
  duplicates: readonly string[],
  level: FieldValidation,
  strictPrefix: string,
): { warnings: string[]; causes: StatusCause[] } {
  const { unknown, causes } = schema ? pruneAndValidate(obj, schema) : { unknown: [], causes: [] };
  const messages = level === 'Ignore' ? [] : problemMessages({ unknown, duplicates });
  if (level === 'Strict' && messages.length > 0) throw badRequest(`${strictPrefix}strict decoding error: ${messages.join(', ')}`);
  return { warnings: level === 'Warn' ? messages : [], causes };
}

/** The strict error's prefix for a create or update body, as kube's transformDecodeError words it. */
export function strictPrefixOf(kind: string, version: string): string {
  return `${kind} in version "${version}" cannot be handled as a ${kind}: `;
}

/**
 * Checks `obj` against `schema` in place: unknown fields are removed; for
 * Strict, unknown and duplicate fields → 400 listing all; wrong types and
 * missing required fields → 422 naming each. Returns the warnings to send (Warn).
 */
export function checkObject(obj: Record<string, unknown>, schema: StructNode | undefined, duplicates: readonly string[], o: CheckOptions): string[] {
  const { warnings, causes } = decodeFields(obj, schema, duplicates, o.level, o.strictPrefix);
  if (causes.length > 0) throw invalid(o.gk, o.name, causes);
  return warnings;
}
