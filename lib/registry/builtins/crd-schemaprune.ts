// A CRD's schemas as kube decodes them into JSONSchemaProps: members it does
// not know are dropped at every depth. Where JSONSchemaProps is typed in the
// published OpenAPI (properties, allOf/anyOf/oneOf, not, …) the generic field
// walk (lib/validation) already drops them and reports them for Warn and
// Strict. items, additionalProperties, additionalItems and dependencies are
// JSONSchemaPropsOrArray/OrBool/OrStringArray: kube publishes them untyped and
// decodes them with their own UnmarshalJSON, which is neither strict nor case-
// insensitive, so what is inside them is dropped here without a report, as
// kube drops it (also nulls, which Go decodes to omitted zero values).
import { isPlainObject, type KObject } from '../../api/meta.js';
import { ownValue } from '../../api/own.js';
import { builtinSchemas } from '../../schema/index.js';
import type { Node, StructNode } from '../../schema/model.js';

const JSON_SCHEMA_PROPS = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps';

let props: StructNode | undefined;
function jsonSchemaProps(): StructNode {
  props ??= builtinSchemas().byDefinition(JSON_SCHEMA_PROPS);
  if (!props) throw new Error(`no schema for ${JSON_SCHEMA_PROPS}`);
  return props;
}

/** Prunes every `spec.versions[*].schema.openAPIV3Schema` of a CRD in place. */
export function pruneCrdSchemas(crd: KObject): void {
  const spec = crd['spec'];
  if (!isPlainObject(spec) || !Array.isArray(spec['versions'])) return;
  for (const v of spec['versions']) {
    const schema = isPlainObject(v) && isPlainObject(v['schema']) ? v['schema']['openAPIV3Schema'] : undefined;
    if (isPlainObject(schema)) prune(schema, jsonSchemaProps());
  }
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
      for (const key of Object.keys(value)) {
        const field = node.fields.get(key);
        const member = ownValue(value, key);
        if (!field || member === null) {
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
