// The table form of the generated schemas (lib/schema/gen/*.ts): one entry per
// Go type, with fields in the JSON form Kubernetes serves and the merge
// markers of its API. Compact on purpose; lib/schema/model.ts and
// lib/schema/openapi.ts turn it into runtime nodes and OpenAPI documents.

/**
 * A field's type, as a string:
 * - scalars: `string`, `int32`, `int64`, `double`, `bool`, `bytes` (base64 string),
 *   `time` (RFC 3339 date-time), `quantity`, `intstr` (int-or-string),
 *   `raw` (any JSON object: RawExtension), `fields` (FieldsV1: any JSON object);
 * - `[]T` a list, `{}T` a map with string keys;
 * - `alias.Kind` a struct of a package (`core.Container`, `meta.ObjectMeta`).
 */
export type TypeExpr = string;

/** Merge markers of a field (kube's `+listType`, `+listMapKey`, `+mapType`, `patchStrategy`, `patchMergeKey`). */
export interface Markers {
  /** x-kubernetes-list-type */
  lt?: 'atomic' | 'set' | 'map';
  /** x-kubernetes-list-map-keys */
  lk?: readonly string[];
  /** x-kubernetes-map-type (maps) or structType (structs) */
  mt?: 'atomic' | 'granular';
  /** x-kubernetes-patch-strategy: `merge`, `retainKeys` or `merge,retainKeys` */
  ps?: string;
  /** x-kubernetes-patch-merge-key */
  pk?: string;
}

/** One field: [type, description, markers?]. */
export type FieldDef = readonly [TypeExpr, string, Markers?];

export interface TypeDef {
  /** Description of the type. */
  readonly d: string;
  /** JSON name → field, in Go declaration order (inlined structs flattened). */
  readonly f: Readonly<Record<string, FieldDef>>;
  /** Required fields (no `omitempty`, no `+optional`). */
  readonly r?: readonly string[];
  /**
   * Fields kube writes when they hold their zero value, with the JSON it
   * writes (`{}` for a struct value, `null` for a nil pointer, slice or map
   * without `omitempty`, `""`, `0`, `false`); every other field is omitted
   * when empty. Go's encoding/json rules applied to the struct tags.
   */
  readonly z?: Readonly<Record<string, unknown>>;
  /** `+structType=atomic` / `+mapType=atomic` on the type. */
  readonly mt?: 'atomic' | 'granular';
  /**
   * A type with its own JSON form that accepts any JSON value (apiextensions'
   * JSON, JSONSchemaPropsOrArray, …): no fields; served as a definition with
   * only its description, as kube-openapi serves it.
   */
  readonly any?: true;
}

export interface SchemaPackage {
  /** Short alias used in type expressions (`core`, `meta`). */
  readonly alias: string;
  /** OpenAPI definition name prefix (`io.k8s.api.core.v1`). */
  readonly prefix: string;
  readonly types: Readonly<Record<string, TypeDef>>;
}
