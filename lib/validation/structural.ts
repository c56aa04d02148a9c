// One walk of an object against its structural schema: fields the schema
// does not know are removed and reported (unknown fields), `null` struct
// fields are removed (Go decodes them to zero values, which are omitted), and
// every wrong type and missing required field becomes a cause. The schema
// nodes are built once per process (lib/schema), so nothing compiles per request.
import { cause, type StatusCause } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import type { Node, StructNode } from '../schema/model.js';

interface Walk extends StructuralResult {
  /** Only prune (custom resources: their validate reports types and required fields). */
  readonly pruneOnly: boolean;
}

export interface StructuralResult {
  /** Paths of removed unknown fields (`spec.foo`, `spec.containers[0].bar`). */
  readonly unknown: string[];
  /** Wrong types and missing required fields. */
  readonly causes: StatusCause[];
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function typeName(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
}

/** Prunes unknown fields of `obj` in place and checks types and required fields. */
export function pruneAndValidate(obj: Record<string, unknown>, schema: StructNode): StructuralResult {
  const result: Walk = { unknown: [], causes: [], pruneOnly: schema.pruneOnly === true };
  walkStruct(obj, schema, '', result);
  return { unknown: result.unknown, causes: result.causes };
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

function walkStruct(obj: Record<string, unknown>, node: StructNode, path: string, r: Walk): void {
  for (const k of Object.keys(obj)) {
    const f = node.fields.get(k);
    if (!f) {
      if (node.preserveUnknown) continue;
      r.unknown.push(join(path, k));
      delete obj[k];
      continue;
    }
    const v = obj[k];
    if (v === null) {
      if (!f.nullable) delete obj[k];
      continue;
    }
    walk(v, f.node, join(path, k), r);
  }
  if (r.pruneOnly) return;
  for (const req of node.required) {
    if (obj[req] === undefined) r.causes.push(cause.required(join(path, req)));
  }
}

function walk(v: unknown, node: Node, path: string, r: Walk): void {
  switch (node.kind) {
    case 'any':
      return;
    case 'struct':
      if (!isPlainObject(v)) {
        if (r.pruneOnly) return;
        r.causes.push(cause.typeInvalid(path, v, `must be of type object, not ${typeName(v)}`));
        return;
      }
      walkStruct(v, node, path, r);
      return;
    case 'list':
      if (!Array.isArray(v)) {
        if (!r.pruneOnly) r.causes.push(cause.typeInvalid(path, v, `must be of type array, not ${typeName(v)}`));
        return;
      }
      for (let i = 0; i < v.length; i++) {
        if (v[i] === null) continue;
        walk(v[i], node.items, `${path}[${i}]`, r);
      }
      return;
    case 'map':
      if (!isPlainObject(v)) {
        if (!r.pruneOnly) r.causes.push(cause.typeInvalid(path, v, `must be of type object, not ${typeName(v)}`));
        return;
      }
      for (const [k, x] of Object.entries(v)) if (x !== null) walk(x, node.values, join(path, k), r);
      return;
    case 'scalar': {
      if (r.pruneOnly) return;
      const ok =
        node.type === 'string'
          ? typeof v === 'string'
          : node.type === 'integer'
            ? Number.isInteger(v)
            : node.type === 'number'
              ? typeof v === 'number'
              : node.type === 'boolean'
                ? typeof v === 'boolean'
                : node.type === 'int-or-string'
                  ? Number.isInteger(v) || typeof v === 'string'
                  : typeof v === 'string' || typeof v === 'number';
      if (!ok) {
        const want = node.type === 'int-or-string' ? 'integer or string' : node.type === 'quantity' ? 'string or number' : node.type;
        r.causes.push(cause.typeInvalid(path, v, `must be of type ${want}, not ${typeName(v)}`));
      } else if (node.format === 'byte' && (!BASE64.test(v as string) || (v as string).length % 4 !== 0)) {
        r.causes.push(cause.invalid(path, v, 'must be base64-encoded data'));
      }
    }
  }
}
