// The runtime form of the schemas: a tree of nodes per served kind, built
// once from the generated tables. Field validation, strategic merge patch and
// (later) server-side apply all walk these nodes; nothing re-reads the tables
// per request.
import type { FieldDef, Markers, SchemaPackage, TypeDef } from './types.js';

export type ScalarType = 'string' | 'integer' | 'number' | 'boolean' | 'int-or-string' | 'quantity';

export interface ScalarNode {
  readonly kind: 'scalar';
  readonly type: ScalarType;
  /** OpenAPI format: int32, int64, double, byte, date-time. */
  readonly format?: string;
}

/** Any JSON value is accepted (RawExtension, FieldsV1, x-kubernetes-preserve-unknown-fields). */
export interface AnyNode {
  readonly kind: 'any';
  /** The OpenAPI definition it is served as (RawExtension, FieldsV1, or a table's `any` type). */
  readonly definition: string;
  /** A table's `any` type (apiextensions' JSON, …): its definition is this description alone. */
  readonly description?: string;
}

export interface StructNode {
  readonly kind: 'struct';
  /** Qualified table name (`core.Pod`); `definition` is the OpenAPI name. */
  readonly name: string;
  readonly definition: string;
  readonly description: string;
  readonly fields: ReadonlyMap<string, Field>;
  readonly required: readonly string[];
  /** Fields kube writes when empty, with the JSON it writes (TypeDef.z); others are omitted when empty. */
  readonly zeros?: Readonly<Record<string, unknown>>;
  /** `x-kubernetes-map-type: atomic` on the type (structType=atomic). */
  readonly atomic: boolean;
  /** Custom resources (x-kubernetes-preserve-unknown-fields): fields the struct does not name are kept, unchecked. */
  readonly preserveUnknown?: boolean;
  /**
   * On a custom resource's root: types and required fields are checked by the
   * kind's own validate (kube's OpenAPI wording), so the structural walk only prunes.
   */
  readonly pruneOnly?: boolean;
}

export interface ListNode {
  readonly kind: 'list';
  readonly items: Node;
  /** x-kubernetes-list-type, defaulted as server-side apply reads it (patchStrategy=merge → map/set). */
  readonly listType: 'atomic' | 'set' | 'map';
  /** x-kubernetes-list-map-keys (listType map only). */
  readonly keys: readonly string[];
  /** Strategic merge: `merge` merges by `patchMergeKey` (maps) or as a set (scalars); otherwise replace. */
  readonly patchStrategy: string;
  readonly patchMergeKey: string;
  /** Items follow the retainKeys strategy (`patchStrategy: merge,retainKeys`). */
  readonly retainKeys: boolean;
}

export interface MapNode {
  readonly kind: 'map';
  readonly values: Node;
  readonly atomic: boolean;
}

export type Node = ScalarNode | AnyNode | StructNode | ListNode | MapNode;

export interface Field {
  readonly name: string;
  readonly description: string;
  readonly node: Node;
  /** The raw markers of the field, as the tables state them. */
  readonly markers: Markers;
  /** The field's own patch strategy (a map or struct field with `replace`, or `retainKeys` on a struct). */
  readonly patchStrategy: string;
  /** Custom resources (`nullable: true`): a `null` value is kept instead of removed. */
  readonly nullable?: boolean;
}

const SCALARS: Record<string, ScalarNode> = {
  string: { kind: 'scalar', type: 'string' },
  bool: { kind: 'scalar', type: 'boolean' },
  int32: { kind: 'scalar', type: 'integer', format: 'int32' },
  int64: { kind: 'scalar', type: 'integer', format: 'int64' },
  double: { kind: 'scalar', type: 'number', format: 'double' },
  bytes: { kind: 'scalar', type: 'string', format: 'byte' },
  time: { kind: 'scalar', type: 'string', format: 'date-time' },
  quantity: { kind: 'scalar', type: 'quantity' },
  intstr: { kind: 'scalar', type: 'int-or-string', format: 'int-or-string' },
};
const RAW: AnyNode = Object.freeze({ kind: 'any', definition: 'io.k8s.apimachinery.pkg.runtime.RawExtension' });
const FIELDS: AnyNode = Object.freeze({ kind: 'any', definition: 'io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1' });
for (const s of Object.values(SCALARS)) Object.freeze(s);

export class SchemaModel {
  readonly #structs = new Map<string, StructNode>();
  readonly #anys = new Map<string, AnyNode>();
  readonly #byDefinition = new Map<string, StructNode>();
  readonly packages: readonly SchemaPackage[];

  constructor(packages: readonly SchemaPackage[]) {
    this.packages = packages;
    const pending: Array<[StructNode, TypeDef]> = [];
    for (const p of packages) {
      for (const [kind, def] of Object.entries(p.types)) {
        if (def.any) {
          this.#anys.set(`${p.alias}.${kind}`, Object.freeze({ kind: 'any', definition: `${p.prefix}.${kind}`, description: def.d }));
          continue;
        }
        const node: StructNode = {
          kind: 'struct',
          name: `${p.alias}.${kind}`,
          definition: `${p.prefix}.${kind}`,
          description: def.d,
          fields: new Map(),
          required: Object.freeze([...(def.r ?? [])]),
          ...(def.z ? { zeros: def.z } : {}),
          atomic: def.mt === 'atomic',
        };
        this.#structs.set(node.name, node);
        this.#byDefinition.set(node.definition, node);
        pending.push([node, def]);
      }
    }
    for (const [node, def] of pending) {
      const fields = node.fields as Map<string, Field>;
      for (const [name, f] of Object.entries(def.f)) fields.set(name, this.#field(name, f));
      Object.freeze(node);
    }
  }

  #field(name: string, [type, description, markers = {}]: FieldDef): Field {
    return Object.freeze({ name, description, node: this.#node(type, markers), markers, patchStrategy: markers.ps ?? '' });
  }

  #node(type: string, m: Markers): Node {
    if (type.startsWith('[]')) {
      const items = this.#node(type.slice(2), {});
      const strategies = (m.ps ?? '').split(',').filter(Boolean);
      const merge = strategies.includes('merge');
      const scalarItems = items.kind === 'scalar';
      const listType = m.lt ?? (merge ? (scalarItems ? 'set' : 'map') : 'atomic');
      const keys = m.lk ?? (listType === 'map' && m.pk ? [m.pk] : []);
      return Object.freeze({
        kind: 'list',
        items,
        listType,
        keys: Object.freeze([...keys]),
        patchStrategy: merge ? 'merge' : '',
        patchMergeKey: m.pk ?? '',
        retainKeys: strategies.includes('retainKeys'),
      });
    }
    if (type.startsWith('{}')) return Object.freeze({ kind: 'map', values: this.#node(type.slice(2), {}), atomic: m.mt === 'atomic' });
    const scalar = SCALARS[type];
    if (scalar) return scalar;
    if (type === 'raw') return RAW;
    if (type === 'fields') return FIELDS;
    const s = this.#structs.get(type) ?? this.#anys.get(type);
    if (!s) throw new Error(`schema type ${type} is not in the tables`);
    return s;
  }

  /** The struct of a table name (`core.Pod`). */
  struct(name: string): StructNode | undefined {
    return this.#structs.get(name);
  }

  /** The struct of an OpenAPI definition name (`io.k8s.api.core.v1.Pod`). */
  byDefinition(definition: string): StructNode | undefined {
    return this.#byDefinition.get(definition);
  }
}

/** The node of a child: a struct's field, a list's items, a map's values; undefined = not in the schema. */
export function childOf(node: Node | undefined, key: string | number): Node | undefined {
  if (!node) return undefined;
  switch (node.kind) {
    case 'struct':
      return node.fields.get(String(key))?.node;
    case 'list':
      return node.items;
    case 'map':
      return node.values;
    case 'any':
      return node;
    default:
      return undefined;
  }
}
