// A CRD's schemas as kube decodes them into JSONSchemaProps: members it does
// not know are dropped at every depth. Where JSONSchemaProps is typed in the
// published OpenAPI (properties, allOf/anyOf/oneOf, not, …) the generic field
// walk (lib/validation) already drops them and reports them for Warn and
// Strict. items, additionalProperties, additionalItems and dependencies are
// JSONSchemaPropsOrArray/OrBool/OrStringArray: kube publishes them untyped and
// decodes them with their own UnmarshalJSON, which is neither strict nor case-
// insensitive, so what is inside them is dropped here without a report, as
// kube drops it (also nulls, which Go decodes to omitted zero values).
// Go's encoding also drops what an `omitempty` field holds when it is its zero
// value (`description: ""`, `nullable: false`, `required: []`, a column's
// `priority: 0`), unless the field is a pointer (`minimum: 0` stays): kube
// stores and serves the CRD without them, so the whole spec is walked.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { ownValue } from '../../api/own.js';
import { builtinSchemas } from '../../schema/index.js';
import type { Node, StructNode } from '../../schema/model.js';

const JSON_SCHEMA_PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';
const CRD_SPEC = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec';

/**
 * The `omitempty` scalar fields of the CRD's structs that are Go pointers
 * (apiextensions/v1 types.go, types_jsonschema.go): their zero value was set,
 * so Go writes it. Every other omitempty scalar's zero is omitted.
 */
const POINTERS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [
    'apiextensions.JSONSchemaProps',
    new Set([
      '$ref',
      'maximum',
      'minimum',
      'maxLength',
      'minLength',
      'maxItems',
      'minItems',
      'multipleOf',
      'maxProperties',
      'minProperties',
      'x-kubernetes-preserve-unknown-fields',
      'x-kubernetes-list-type',
      'x-kubernetes-map-type',
    ]),
  ],
  ['apiextensions.ValidationRule', new Set(['reason', 'optionalOldSelf'])],
  ['apiextensions.CustomResourceDefinitionVersion', new Set(['deprecationWarning'])],
  ['apiextensions.CustomResourceSubresourceScale', new Set(['labelSelectorPath'])],
  ['apiextensions.WebhookClientConfig', new Set(['url'])],
  ['apiextensions.ServiceReference', new Set(['path', 'port'])],
]);
const NO_POINTERS: ReadonlySet<string> = new Set();

let props: StructNode | undefined;
let crdSpec: StructNode | undefined;
function jsonSchemaProps(): StructNode {
  props ??= builtinSchemas().byDefinition(JSON_SCHEMA_PROPS);
  if (!props) throw new Error(`no schema for ${JSON_SCHEMA_PROPS}`);
  return props;
}

/** Prunes a CRD's spec in place, its `spec.versions[*].schema.openAPIV3Schema` included. */
export function pruneCrdSchemas(crd: KObject): void {
  const spec = crd['spec'];
  crdSpec ??= builtinSchemas().byDefinition(CRD_SPEC);
  if (!crdSpec) throw new Error(`no schema for ${CRD_SPEC}`);
  if (isPlainObject(spec)) prune(spec, crdSpec);
}

/** Whether Go's encoding omits `value` in an omitempty field of `node`'s type (a pointer's zero is kept). */
function omittedZero(value: unknown, node: Node, pointer: boolean): boolean {
  if (Array.isArray(value)) return value.length === 0 && node.kind === 'list';
  if (isPlainObject(value)) return node.kind === 'map' && Object.keys(value).length === 0;
  if (pointer || node.kind !== 'scalar') return false;
  return value === '' || value === 0 || value === false;
}

/** The JSONSchemaProps forms of the untyped unions, by the end of their definition name. */
function unionOf(definition: string): 'array' | 'bool' | 'strings' | undefined {
  if (definition.endsWith('.JSONSchemaPropsOrArray')) return 'array';
  if (definition.endsWith('.JSONSchemaPropsOrBool')) return 'bool';
  if (definition.endsWith('.JSONSchemaPropsOrStringArray')) return 'strings';
  return undefined;
}

function prune(value: unknown, node: Node): void {
  switch (node.kind) {
    case 'struct': {
      if (!isPlainObject(value)) return;
      const pointers = POINTERS.get(node.name) ?? NO_POINTERS;
      for (const key of Object.keys(value)) {
        const field = node.fields.get(key);
        const member = ownValue(value, key);
        // Fields without omitempty are the required ones (and those the tables say Go writes when empty).
        const written = node.required.includes(key) || (node.zeros !== undefined && Object.hasOwn(node.zeros, key));
        if (!field || member === null || (!written && omittedZero(member, field.node, pointers.has(key)))) {
          delete value[key];
          continue;
        }
        prune(member, field.node);
      }
      return;
    }
    case 'list':
      if (Array.isArray(value)) for (const item of value) prune(item, node.items);
      return;
    case 'map':
      if (isPlainObject(value)) for (const key of Object.keys(value)) prune(ownValue(value, key), node.values);
      return;
    case 'any': {
      const union = unionOf(node.definition);
      if (!union) return; // JSON (default, example, enum): any value, kept as it is
      if (isPlainObject(value)) prune(value, jsonSchemaProps());
      else if (union === 'array' && Array.isArray(value)) for (const item of value) prune(item, jsonSchemaProps());
      return;
    }
    default:
      return;
  }
}
