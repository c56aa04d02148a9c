// kube decodes every write of a built-in kind into its Go struct and encodes
// that back, so a stored object carries each field Go's encoding/json writes
// when empty. The tables record these (TypeDef.z, StructNode.zeros); this adds
// the struct values among them (`"status":{"loadBalancer":{}}` on a Service,
// `"resources":{}` on a container), which no defaulting ever replaces. A
// struct added so is whole, as Go writes a zero struct: its own scalar zeros
// too (a Node's `status.nodeInfo` with every string empty), so the object a
// client reads back and writes again passes the required-field checks.
// Scalar zeros of a struct the client sent are left absent: kube's defaulting
// turns most of them into something else before anyone sees them (a Service
// port's targetPort 0 becomes its port), and a required one fails validation
// anyway. `null` zeros (nil pointers, slices and maps without omitempty)
// carry nothing.
import type { Node, StructNode } from './model.js';
import { ownCopy, planner, walkInPlace } from './planwalk.js';

/** A struct's struct-valued fields to add, whole, when absent (with the field's node). */
type Fill = ReadonlyArray<readonly [string, Node]>;

const planOf = planner<Fill>((node) => {
  if (node.kind !== 'struct') return undefined;
  const fill: Array<readonly [string, Node]> = [];
  for (const [k, z] of Object.entries(node.zeros ?? {})) {
    const f = node.fields.get(k);
    if (typeof z === 'object' && z !== null && f) fill.push([k, f.node]);
  }
  return fill.length > 0 ? fill : undefined;
});

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` with the zero values kube writes added where absent, walking the
 * struct fields, list items and map values the schema names. Returns `value`
 * itself when changed in place or unchanged; a frozen part that needs a field
 * is copied (stores freeze what they hand out, and updates start from them).
 */
export function withZeros<T>(node: Node, value: T): T {
  const plan = planOf(node);
  return plan === null ? value : (walkInPlace(plan, value, fillStruct) as T);
}

function fillStruct(value: unknown, fill: Fill): unknown {
  if (!isObject(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [k, child] of fill) {
    if (Object.hasOwn(value, k) && value[k] !== undefined && value[k] !== null) continue;
    (out ??= Object.isFrozen(value) ? ownCopy(value) : value)[k] = zeroStruct(child, 0);
  }
  return out ?? value;
}

/** A struct as Go writes its zero value: every scalar zero, every struct-valued field whole (nulls left out). */
function zeroStruct(node: Node, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (node.kind !== 'struct' || depth > 16) return out;
  for (const [k, z] of Object.entries(node.zeros ?? {})) {
    if (z === null) continue;
    if (typeof z !== 'object') out[k] = z;
    else {
      const f = node.fields.get(k);
      out[k] = f ? zeroStruct(f.node, depth + 1) : {};
    }
  }
  return out;
}

/** Fills a struct's zeros in place (its own object is never frozen); see withZeros. */
export function fillZeros(root: StructNode, obj: Record<string, unknown>): void {
  withZeros(root, obj);
}
