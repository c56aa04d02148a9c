// The costly part of a CustomResourceDefinition's validation: each version's
// schema through lib/crdschema's checkCrdSchema (regular expressions, CEL
// rules, cost estimates), with kube's update relaxations decided from the
// stored CRD. A pure function of the versions' names and schemas (and the
// stored ones), so the check worker can run it off the event loop and the
// write's synchronous validation find its answer again by `schemaCheckKey`.
import { createHash } from 'node:crypto';
import type { KObject } from '../../api/meta.js';
import type { StatusCause } from '../../api/status.js';
import { checkCrdSchema, schemaHasUnprunedDefaults, structuralViolations, type CheckOptions } from '../../crdschema/index.js';
import { at, list, str, sameJson } from '../fields.js';

/** Structural violations of every version's schema (kube's NonStructuralSchema condition and requireStructuralSchema). */
export function nonStructuralCauses(crd: unknown): StatusCause[] {
  return list(crd, 'spec', 'versions').flatMap((v, i) =>
    structuralViolations(at(v, 'schema', 'openAPIV3Schema'), `spec.versions[${i}].schema.openAPIV3Schema`),
  );
}

/** What kube relaxes on the update of a stored CRD, decided from the old object (validationOptions of ValidateCustomResourceDefinitionUpdate). */
interface Relaxed {
  /** requireStructuralSchema off: the stored schemas are not all structural. */
  readonly allowNonStructural: boolean;
  /** requirePrunedDefaults off: a stored schema has a default its schema prunes. */
  readonly allowUnprunedDefaults: boolean;
  /** versionsWithUnchangedSchemas: the stored schema of each version, by name. */
  readonly storedSchemas: ReadonlyMap<string, unknown>;
}

function relaxedBy(old: KObject | undefined): Relaxed {
  if (!old) return { allowNonStructural: false, allowUnprunedDefaults: false, storedSchemas: new Map() };
  const oldVersions = list(old, 'spec', 'versions');
  return {
    allowNonStructural: nonStructuralCauses(old).length > 0,
    allowUnprunedDefaults: oldVersions.some((v) => schemaHasUnprunedDefaults(at(v, 'schema', 'openAPIV3Schema'))),
    storedSchemas: new Map(oldVersions.map((v) => [str(v, 'name'), at(v, 'schema', 'openAPIV3Schema')])),
  };
}

/** Each version's schema causes, by version index (none for a version without a schema: validateCrd requires one). */
export function versionSchemaCauses(crd: KObject, old: KObject | undefined): StatusCause[][] {
  const relaxed = relaxedBy(old);
  return list(crd, 'spec', 'versions').map((v, i) => {
    const schema = at(v, 'schema', 'openAPIV3Schema');
    if (schema === undefined || schema === null) return [];
    const name = at(v, 'name');
    const stored = typeof name === 'string' ? relaxed.storedSchemas.get(name) : undefined;
    const options: CheckOptions = {
      ...(relaxed.allowNonStructural ? { allowNonStructural: true } : {}),
      ...(relaxed.allowUnprunedDefaults ? { allowUnprunedDefaults: true } : {}),
      ...(stored !== undefined && sameJson(stored, schema) ? { unchangedSchema: true } : {}),
    };
    return checkCrdSchema(schema, `spec.versions[${i}].schema.openAPIV3Schema`, options);
  });
}

/** Beyond these, a CRD's schema checks go to the check worker; below them they take about a millisecond. */
const CHEAP = { patternChars: 256, rules: 8 };

/**
 * Whether checking the CRD's schemas may take long: its patterns (RE2 compiles) or its rules (CEL
 * compiles and cost estimates) beyond a few small ones. A cheap CRD is checked where it is written:
 * the worker's round trip, queued behind other CRD writes, would only widen a conflicting writer's window.
 */
export function costlyToCheck(crd: unknown): boolean {
  let patternChars = 0;
  let rules = 0;
  const stack: unknown[] = list(crd, 'spec', 'versions').map((v) => at(v, 'schema'));
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) stack.push(...v);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (k === 'pattern' && typeof x === 'string') patternChars += x.length;
        if (k === 'x-kubernetes-validations' && Array.isArray(x)) rules += x.length;
        stack.push(x);
      }
      if (patternChars > CHEAP.patternChars || rules > CHEAP.rules) return true;
    }
  }
  return false;
}

const schemasOf = (crd: unknown) => list(crd, 'spec', 'versions').map((v) => [at(v, 'name') ?? null, at(v, 'schema', 'openAPIV3Schema') ?? null]);

/** What versionSchemaCauses reads, hashed: the same key, the same causes. */
export function schemaCheckKey(crd: KObject, old: KObject | undefined): string {
  const input = JSON.stringify([schemasOf(crd), old === undefined ? null : schemasOf(old)]);
  return createHash('sha256').update(input).digest('base64');
}

/** Causes the check worker found, by key, for the synchronous validation that follows; a few, the latest kept. */
const found = new Map<string, StatusCause[][]>();
const FOUND_KEPT = 16;

/** Keeps what the check worker found for `key` (the write's validation reads it next). */
export function rememberSchemaCauses(key: string, causes: StatusCause[][]): void {
  found.delete(key);
  found.set(key, causes);
  if (found.size > FOUND_KEPT) found.delete(found.keys().next().value!);
}

/** The schema causes of a CRD write: what the check worker found for the same input, else computed here. */
export function schemaCausesOf(crd: KObject, old: KObject | undefined): StatusCause[][] {
  const known = found.get(schemaCheckKey(crd, old));
  return known ?? versionSchemaCauses(crd, old);
}
