// The decode error kube answers for a wrong JSON type inside the members of a
// CRD schema that JSONSchemaProps decodes with their own UnmarshalJSON
// (items, additionalProperties, additionalItems, dependencies: apiextensions
// v1 marshal.go). Each decodes its value with a nested json.Unmarshal; the
// outer decoder then rewrites the type error's struct and field to its own
// position (encoding/json's addErrorContext), so the error names the outermost
// such member by the struct field names leading to it (map keys and indexes are
// not part of Go's field stack) and keeps the Go type of the innermost field
// that failed. kube answers 400 with transformDecodeError's prefix. Typed
// members outside those unions are checked by the generic field walk (422).
import { badRequest, type StatusError } from '../../api/status.js';
import { isPlainObject, type KObject } from '../../api/meta.js';
import { ownValue } from '../../api/own.js';
import { builtinSchemas } from '../../schema/index.js';
import type { Node, StructNode } from '../../schema/model.js';

const PREFIX = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
const CRD = `${PREFIX}CustomResourceDefinition`;

/** Go named types of JSONSchemaProps' fields whose name is not their shape (types_jsonschema.go). */
const NAMED: Readonly<Record<string, string>> = {
  $schema: 'v1.JSONSchemaURL',
  dependencies: 'v1.JSONSchemaDependencies',
  definitions: 'v1.JSONSchemaDefinitions',
  'x-kubernetes-validations': 'v1.ValidationRules',
  reason: 'v1.FieldValueErrorReason',
};

type Union = 'array' | 'bool' | 'strings';

function unionOf(node: Node): Union | undefined {
  if (node.kind !== 'any') return undefined;
  if (node.definition.endsWith('.JSONSchemaPropsOrArray')) return 'array';
  if (node.definition.endsWith('.JSONSchemaPropsOrBool')) return 'bool';
  if (node.definition.endsWith('.JSONSchemaPropsOrStringArray')) return 'strings';
  return undefined;
}

/** Go's name of a JSON value's kind in an UnmarshalTypeError. */
function jsonKind(v: unknown): string {
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'boolean') return 'bool';
  return Array.isArray(v) ? 'array' : 'object';
}

/** The Go type of a field of `node`'s shape, as reflect prints it. */
function goType(node: Node, field = ''): string {
  const named = NAMED[field];
  if (named) return named;
  switch (node.kind) {
    case 'scalar':
      return node.type === 'integer' ? 'int64' : node.type === 'number' ? 'float64' : node.type === 'boolean' ? 'bool' : 'string';
    case 'list':
      return `[]${goType(node.items)}`;
    case 'map':
      return `map[string]${goType(node.values)}`;
    case 'struct':
      return `v1.${node.name.slice(node.name.indexOf('.') + 1)}`;
    default:
      return `v1.${node.definition.slice(node.definition.lastIndexOf('.') + 1)}`;
  }
}

/** What a nested decode fails with: Go's type error (value kind, Go type) or another error's text. */
type Failure = { readonly value: string; readonly type: string } | { readonly text: string };

/** The first error decoding `value` into `node` gives, in document order (encoding/json keeps the first). */
function decodeFailure(value: unknown, node: Node, field = ''): Failure | undefined {
  if (value === null) return undefined;
  const union = unionOf(node);
  if (union) return unionFailure(value, union);
  const mismatch = (): Failure => ({ value: jsonKind(value), type: goType(node, field) });
  switch (node.kind) {
    case 'scalar':
      if (node.type === 'string') return typeof value === 'string' ? undefined : mismatch();
      if (node.type === 'boolean') return typeof value === 'boolean' ? undefined : mismatch();
      if (typeof value !== 'number') return mismatch();
      // An integer field given a fraction: Go names the number itself.
      return node.type === 'integer' && !Number.isInteger(value) ? { value: `number ${value}`, type: goType(node, field) } : undefined;
    case 'list':
      if (!Array.isArray(value)) return mismatch();
      for (const item of value) {
        const f = decodeFailure(item, node.items);
        if (f) return f;
      }
      return undefined;
    case 'map':
      if (!isPlainObject(value)) return mismatch();
      for (const k of Object.keys(value)) {
        const f = decodeFailure(ownValue(value, k), node.values);
        if (f) return f;
      }
      return undefined;
    case 'struct':
      if (!isPlainObject(value)) return mismatch();
      for (const k of Object.keys(value)) {
        const f = node.fields.get(k);
        const failure = f && decodeFailure(ownValue(value, k), f.node, k);
        if (failure) return failure;
      }
      return undefined;
    default:
      return undefined; // JSON (default, example, enum items): any value
  }
}

/** The unions' own UnmarshalJSON: a value of another shape is ignored, except JSONSchemaPropsOrBool's. */
function unionFailure(value: unknown, union: Union): Failure | undefined {
  const props = schemaProps();
  if (isPlainObject(value)) return decodeFailure(value, props);
  if (union === 'array' && Array.isArray(value)) {
    for (const item of value) {
      const f = decodeFailure(item, props);
      if (f) return f;
    }
    return undefined;
  }
  if (union === 'strings' && Array.isArray(value)) {
    const bad = value.find((s) => s !== null && typeof s !== 'string');
    return bad === undefined ? undefined : { value: jsonKind(bad), type: 'string' };
  }
  if (union === 'bool' && typeof value !== 'boolean') return { text: 'boolean or JSON schema expected' };
  return undefined;
}

let crdNode: StructNode | undefined;
let propsNode: StructNode | undefined;
function schemaProps(): StructNode {
  propsNode ??= builtinSchemas().byDefinition(`${PREFIX}JSONSchemaProps`);
  if (!propsNode) throw new Error(`no schema for ${PREFIX}JSONSchemaProps`);
  return propsNode;
}

/**
 * The outer decode: the typed walk from the CRD's root, keeping Go's field
 * stack, down to each union member; its nested decode's failure is the error.
 */
function outerFailure(value: unknown, node: Node, stack: string[], struct: string): string | undefined {
  if (value === null) return undefined;
  if (unionOf(node)) {
    const f = unionFailure(value, unionOf(node)!);
    if (!f) return undefined;
    if ('text' in f) return f.text;
    return `json: cannot unmarshal ${f.value} into Go struct field ${struct}.${stack.join('.')} of type ${f.type}`;
  }
  if (node.kind === 'list' && Array.isArray(value)) {
    for (const item of value) {
      const e = outerFailure(item, node.items, stack, struct);
      if (e) return e;
    }
  } else if (node.kind === 'map' && isPlainObject(value)) {
    for (const k of Object.keys(value)) {
      const e = outerFailure(ownValue(value, k), node.values, stack, struct);
      if (e) return e;
    }
  } else if (node.kind === 'struct' && isPlainObject(value)) {
    const name = node.name.slice(node.name.indexOf('.') + 1);
    for (const k of Object.keys(value)) {
      const f = node.fields.get(k);
      const e = f && outerFailure(ownValue(value, k), f.node, [...stack, k], name);
      if (e) return e;
    }
  }
  return undefined;
}

/** kube's 400 for a CRD whose schema unions do not decode; undefined when they do. */
export function crdDecodeError(crd: KObject): StatusError | undefined {
  crdNode ??= builtinSchemas().byDefinition(CRD);
  if (!crdNode) throw new Error(`no schema for ${CRD}`);
  const spec = crd['spec'];
  const specField = crdNode.fields.get('spec');
  if (!isPlainObject(spec) || !specField) return undefined;
  const e = outerFailure(spec, specField.node, ['spec'], 'CustomResourceDefinition');
  return e === undefined ? undefined : badRequest(`CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ${e}`);
}
