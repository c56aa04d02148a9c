// A CRD version's structural schema as the registry's node model
// (lib/schema/model.ts), so the machinery built for built-in kinds works on
// custom resources unchanged: lib/validation prunes unknown fields (and
// reports them for fieldValidation), server-side apply reads list types, map
// keys and map types. Value checks are not in the nodes: the root is marked
// `pruneOnly` and values.ts reports types and required fields in kube's words.
import type { Field, ListNode, MapNode, Node, ScalarNode, StructNode } from '../schema/model.js';
import type { Markers } from '../schema/types.js';
import { builtinSchemas } from '../schema/index.js';
import type { Props } from './props.js';
import { pruneAndValidate } from '../validation/structural.js';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const STRING: ScalarNode = Object.freeze({ kind: 'scalar', type: 'string' });
const INT_OR_STRING: ScalarNode = Object.freeze({ kind: 'scalar', type: 'int-or-string', format: 'int-or-string' });

export interface NodeNames {
  /** `stable.example.com.CronTab` */
  readonly name: string;
  /** kube's OpenAPI definition name: `com.example.stable.v1.CronTab`. */
  readonly definition: string;
}

/** kube's OpenAPI definition name of a custom resource (the group reversed). */
export function definitionOf(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function objectMeta(): StructNode {
  const m = builtinSchemas().byDefinition(OBJECT_META);
  if (!m) throw new Error('ObjectMeta is not in the built-in schemas');
  return m;
}

function field(name: string, node: Node, p: Props | undefined, markers: Markers = {}): Field {
  return Object.freeze({
    name,
    description: p?.description ?? '',
    node,
    markers: Object.freeze(markers),
    patchStrategy: '',
    ...(p?.nullable ? { nullable: true } : {}),
  });
}

function markersOf(p: Props): Markers {
  const m: { lt?: Markers['lt']; lk?: readonly string[]; mt?: Markers['mt'] } = {};
  if (p.xListType === 'atomic' || p.xListType === 'set' || p.xListType === 'map') m.lt = p.xListType;
  if (p.xListMapKeys?.length) m.lk = Object.freeze([...p.xListMapKeys]);
  if (p.xMapType === 'atomic' || p.xMapType === 'granular') m.mt = p.xMapType;
  return m;
}

/** The root node of a custom resource: apiVersion, kind, metadata (ObjectMeta) and the schema's properties. */
export function rootNode(p: Props | undefined, names: NodeNames): StructNode {
  return structOf(p, names.name, names.definition, true, true);
}

function structOf(p: Props | undefined, name: string, definition: string, resource: boolean, root: boolean): StructNode {
  const fields = new Map<string, Field>();
  for (const [k, v] of p?.properties ?? []) fields.set(k, field(k, nodeOf(v, `${name}.${k}`), v, markersOf(v)));
  if (resource) {
    fields.set('apiVersion', field('apiVersion', STRING, p?.properties?.get('apiVersion')));
    fields.set('kind', field('kind', STRING, p?.properties?.get('kind')));
    fields.set('metadata', field('metadata', objectMeta(), p?.properties?.get('metadata')));
  }
  const preserve = p === undefined || p.xPreserveUnknownFields === true || (p.additionalProperties === true && !p.properties?.size);
  return Object.freeze({
    kind: 'struct',
    name,
    definition,
    description: p?.description ?? '',
    fields,
    required: Object.freeze([...(p?.required ?? [])]),
    atomic: p?.xMapType === 'atomic',
    ...(preserve ? { preserveUnknown: true } : {}),
    ...(root ? { pruneOnly: true } : {}),
  });
}

export function nodeOf(p: Props, name: string): Node {
  if (p.xIntOrString) return INT_OR_STRING;
  switch (p.type) {
    case 'string':
      return Object.freeze({ kind: 'scalar', type: 'string', ...(p.format ? { format: p.format } : {}) });
    case 'integer':
    case 'number':
    case 'boolean':
      return Object.freeze({ kind: 'scalar', type: p.type, ...(p.format ? { format: p.format } : {}) });
    case 'array': {
      const items = p.items && !Array.isArray(p.items) ? nodeOf(p.items as Props, `${name}[]`) : structOf(undefined, `${name}[]`, '', false, false);
      const listType = p.xListType === 'set' || p.xListType === 'map' ? p.xListType : 'atomic';
      const list: ListNode = {
        kind: 'list',
        items,
        listType,
        keys: Object.freeze(listType === 'map' ? [...(p.xListMapKeys ?? [])] : []),
        patchStrategy: '',
        patchMergeKey: '',
        retainKeys: false,
      };
      return Object.freeze(list);
    }
    case 'object':
      if (typeof p.additionalProperties === 'object' && !p.properties?.size) {
        const map: MapNode = { kind: 'map', values: nodeOf(p.additionalProperties, `${name}{}`), atomic: p.xMapType === 'atomic' };
        return Object.freeze(map);
      }
      return structOf(p, name, '', p.xEmbeddedResource === true, false);
    default:
      // No type: x-kubernetes-preserve-unknown-fields (any value, kept as sent).
      return structOf(p, name, '', p.xEmbeddedResource === true, false);
  }
}

/**
 * A node's default as its own schema prunes it (a copy), and whether pruning
 * changed it. kube refuses unpruned defaults at CRD write (unless a stored one
 * already had some) and prunes the defaults of the schemas it serves.
 */
export function prunedDefault(p: Props): { readonly value: unknown; readonly changed: boolean } {
  const holder = { v: structuredClone(p.default) };
  const wrapper: StructNode = {
    kind: 'struct',
    name: 'default',
    definition: '',
    description: '',
    fields: new Map([
      ['v', { name: 'v', description: '', node: nodeOf(p, 'default'), markers: {}, patchStrategy: '', ...(p.nullable ? { nullable: true } : {}) }],
    ]),
    required: [],
    atomic: false,
    pruneOnly: true,
  };
  const { unknown } = pruneAndValidate(holder as Record<string, unknown>, wrapper);
  return { value: holder.v, changed: unknown.length > 0 };
}
