// OpenAPI definitions from the schema model, in the two flavours
// kube-apiserver serves: v3 (`#/components/schemas/…`, struct references
// wrapped in allOf with their own description) and Swagger 2.0
// (`#/definitions/…`). Merge markers become the x-kubernetes-* extensions.
import type { AnyNode, Field, Node, StructNode } from './model.js';

type Json = Record<string, unknown>;
export type Flavor = 'v2' | 'v3';

export interface Gvk {
  group: string;
  version: string;
  kind: string;
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const TIME = `${META}.Time`;
const FIELDS_V1 = `${META}.FieldsV1`;
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const INT_OR_STRING = 'io.k8s.apimachinery.pkg.util.intstr.IntOrString';
const RAW = 'io.k8s.apimachinery.pkg.runtime.RawExtension';

/** Definitions of the non-struct named types the tables use, per flavour. */
function wellKnown(flavor: Flavor): Record<string, Json> {
  return {
    [TIME]: {
      description:
        'Time is a wrapper around time.Time which supports correct marshaling to YAML and JSON.  Wrappers are provided for many of the factory methods that the time package offers.',
      type: 'string',
      format: 'date-time',
    },
    [FIELDS_V1]: {
      description:
        "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.\n\nEach key is either a '.' representing the field itself, and will always map to an empty set, or a string representing a sub-field or item. The string will follow one of these four formats: 'f:<name>', where <name> is the name of a field in a struct, or key in a map 'v:<value>', where <value> is the exact json formatted value of a list item 'i:<index>', where <index> is position of a item in a list 'k:<keys>', where <keys> is a map of  a list item's key fields to their unique values If a key maps to an empty Fields value, the field that key represents is part of the set.\n\nThe exact format is defined in sigs.k8s.io/structured-merge-diff",
      type: 'object',
    },
    [QUANTITY]:
      flavor === 'v3'
        ? { description: 'Quantity is a fixed-point representation of a number.', oneOf: [{ type: 'string' }, { type: 'number' }] }
        : { description: 'Quantity is a fixed-point representation of a number.', type: 'string' },
    [INT_OR_STRING]:
      flavor === 'v3'
        ? {
            description:
              'IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, for example, a JSON field that can accept a name or number.',
            format: 'int-or-string',
            oneOf: [{ type: 'integer' }, { type: 'string' }],
          }
        : { description: 'IntOrString is a type that can hold an int32 or a string.', type: 'string', format: 'int-or-string' },
    [RAW]: { description: 'RawExtension is used to hold extensions in external versions.', type: 'object' },
  };
}

function refTo(name: string, flavor: Flavor): Json {
  return { $ref: flavor === 'v3' ? `#/components/schemas/${name}` : `#/definitions/${name}` };
}

/** A reference as a property: v3 wraps it in allOf so the property keeps its own description. */
function refProp(name: string, flavor: Flavor, description: string | undefined, isStruct: boolean): Json {
  if (flavor === 'v2') return { ...refTo(name, flavor), ...(description ? { description } : {}) };
  return { allOf: [refTo(name, flavor)], ...(description ? { description } : {}), ...(isStruct ? { default: {} } : {}) };
}

/** What a schema refers to and definitionsOf must define: structs, and the tables' `any` types. */
type Want = (s: StructNode | AnyNode) => void;

function nodeSchema(node: Node, flavor: Flavor, description: string | undefined, want: Want): Json {
  const d = description ? { description } : {};
  switch (node.kind) {
    case 'any':
      if (node.description !== undefined) want(node);
      return refProp(node.definition, flavor, description, false);
    case 'struct':
      want(node);
      return refProp(node.definition, flavor, description, true);
    case 'list':
      return { type: 'array', ...d, items: nodeSchema(node.items, flavor, undefined, want) };
    case 'map':
      return {
        type: 'object',
        ...d,
        additionalProperties: nodeSchema(node.values, flavor, undefined, want),
        ...(node.atomic ? { 'x-kubernetes-map-type': 'atomic' } : {}),
      };
    case 'scalar':
      if (node.type === 'quantity') return refProp(QUANTITY, flavor, description, false);
      if (node.type === 'int-or-string') return refProp(INT_OR_STRING, flavor, description, false);
      if (node.format === 'date-time') return refProp(TIME, flavor, description, false);
      return { type: node.type, ...(node.format ? { format: node.format } : {}), ...d };
  }
}

function fieldSchema(f: Field, flavor: Flavor, want: Want): Json {
  const s = nodeSchema(f.node, flavor, f.description, want);
  const m = f.markers;
  if (m.lt) s['x-kubernetes-list-type'] = m.lt;
  if (m.lk) s['x-kubernetes-list-map-keys'] = [...m.lk];
  if (m.mt && f.node.kind === 'map') s['x-kubernetes-map-type'] = m.mt;
  if (m.ps) s['x-kubernetes-patch-strategy'] = m.ps;
  if (m.pk) s['x-kubernetes-patch-merge-key'] = m.pk;
  return s;
}

function structSchema(s: StructNode, flavor: Flavor, gvks: readonly Gvk[] | undefined, want: Want): Json {
  const properties: Json = {};
  for (const f of s.fields.values()) properties[f.name] = fieldSchema(f, flavor, want);
  return {
    description: s.description,
    type: 'object',
    ...(s.required.length ? { required: [...s.required] } : {}),
    properties,
    ...(s.atomic ? { 'x-kubernetes-map-type': 'atomic' } : {}),
    ...(gvks?.length ? { 'x-kubernetes-group-version-kind': gvks.map((g) => ({ ...g })) } : {}),
  };
}

/**
 * The definitions of `roots` and every struct they reach, plus the named
 * scalar types; `gvks` names the kinds a definition serves.
 */
export function definitionsOf(roots: readonly StructNode[], flavor: Flavor, gvks: ReadonlyMap<string, readonly Gvk[]>): Record<string, Json> {
  const out: Record<string, Json> = {};
  const queue: Array<StructNode | AnyNode> = [...roots];
  const seen = new Set<string>();
  const want: Want = (s) => {
    if (!seen.has(s.definition)) queue.push(s);
  };
  while (queue.length) {
    const s = queue.shift()!;
    if (seen.has(s.definition)) continue;
    seen.add(s.definition);
    // A table's any type is defined by its description alone (kube-openapi's JSON, JSONSchemaPropsOrArray, …).
    out[s.definition] = s.kind === 'any' ? { description: s.description ?? '' } : structSchema(s, flavor, gvks.get(s.definition), want);
  }
  Object.assign(out, wellKnown(flavor));
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}
