// The "empty object" a create is compared with, as kube's typed empty Go
// object serializes: top-level structs present and empty, fields without
// omitempty (the schema's required ones) present as null or empty structs.
// It keeps a creator's entry free of `.` on spec and containers, as kube's.
import type { Node } from '../schema/model.js';
import type { Obj } from './ownership.js';
import { deepFreezeJson } from '../api/json.js';

function emptyStruct(node: Node, depth: number): Obj {
  const out: Obj = {};
  if (node.kind !== 'struct' || depth > 4) return out;
  for (const name of node.required) {
    const f = node.fields.get(name)?.node;
    out[name] = f?.kind === 'struct' && !f.atomic ? emptyStruct(f, depth + 1) : null;
  }
  return out;
}

export function emptyObjectOf(node: Node | undefined): Obj {
  const out: Obj = {};
  if (node?.kind !== 'struct') return out;
  for (const [name, f] of node.fields) if (f.node.kind === 'struct' && !f.node.atomic) out[name] = emptyStruct(f.node, 1);
  return out;
}

const cached = new WeakMap<Node, Obj>();
const UNSTRUCTURED: Obj = Object.freeze({});

/** emptyObjectOf, built once per node and frozen: for readers only (the create path). */
export function baselineOf(node: Node | undefined): Obj {
  if (!node) return UNSTRUCTURED;
  let b = cached.get(node);
  if (!b) {
    b = deepFreezeJson(emptyObjectOf(node));
    cached.set(node, b);
  }
  return b;
}
