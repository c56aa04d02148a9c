// The schema of one CustomResourceDefinition version, compiled once per CRD
// version: the contract between the CRD serving code (backends/core/crd*) and
// the schema machinery of this folder. The registry entry of a custom resource
// takes `node` as ResourceType.schema, `defaults` and `validate` as its hooks.
//
// This first version is the interface with a pass-through body; the schema
// work (structural checks, pruning, defaults, value validation, CEL rules with
// cost) replaces the bodies without changing the signatures.
import type { KObject } from '../api/meta.js';
import type { StatusCause } from '../api/status.js';
import type { StructNode } from '../schema/model.js';

/** What identifies the version being compiled (error messages, OpenAPI names). */
export interface CrdVersionRef {
  group: string;
  version: string;
  kind: string;
  listKind: string;
  plural: string;
}

export interface CrdVersionSchema {
  /**
   * The structural schema as the registry's node model (field validation and
   * unknown-field pruning, server-side apply, OpenAPI). Absent: every field kept.
   */
  readonly node?: StructNode;
  /** Applies the schema's `default`s in place (on create, update, and on read from storage). */
  defaults(obj: KObject): void;
  /** OpenAPI value checks and x-kubernetes-validations (old = the stored object on update). */
  validate(obj: KObject, old: KObject | undefined): StatusCause[];
  /** The schema as served in /openapi/v2 and /openapi/v3 (a JSON Schema object, kube's published form). */
  readonly openapi: Record<string, unknown>;
}

/**
 * Checks a CRD version's `schema.openAPIV3Schema` at CRD create/update:
 * structural rules, CEL rules that do not compile, estimated cost over budget.
 * `field` is the path of the schema in the CRD (`spec.versions[0].schema.openAPIV3Schema`);
 * every cause's `field` starts with it. Empty = accepted.
 */
export function checkCrdSchema(schema: unknown, field: string): StatusCause[] {
  if (schema === undefined || schema === null) return [];
  if (typeof schema !== 'object' || Array.isArray(schema)) {
    return [{ reason: 'FieldValueInvalid', field, message: `${field}: Invalid value: must be an object` }];
  }
  return [];
}

/** Compiles an accepted schema (checkCrdSchema returned no cause) for serving. */
export function compileCrdSchema(schema: unknown, ref: CrdVersionRef): CrdVersionSchema {
  void ref;
  const openapi = schema && typeof schema === 'object' && !Array.isArray(schema) ? (schema as Record<string, unknown>) : { type: 'object' };
  return { openapi, defaults: () => {}, validate: () => [] };
}
