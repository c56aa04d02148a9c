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

interface Plan {
  /** Struct-valued fields to add, whole, when absent (with the field's node). */
  readonly fill: ReadonlyArray<readonly [string, Node]>;
  /** Fields whose value may hold something to fill. */
  readonly into: ReadonlyArray<readonly [string, Node]>;
}

const plans = new WeakMap<Node, Plan | null>();

/** Whether `node`'s values may need filling; built once per node (a recursive type is not looked into twice). */
function planOf(node: Node): Plan | null {
  const known = plans.get(node);
  if (known !== undefined) return known;
  plans.set(node, null);
  let plan: Plan | null = null;
  if (node.kind === 'struct') {
    const fill: Array<readonly [string, Node]> = [];
    for (const [k, z] of Object.entries(node.zeros ?? {})) {
      const f = node.fields.get(k);
      if (typeof z === 'object' && z !== null && f) fill.push([k, f.node]);
    }
    const into: Array<readonly [string, Node]> = [];
    for (const [name, f] of node.fields) if (planOf(f.node) !== null) into.push([name, f.node]);
    if (fill.length > 0 || into.length > 0) plan = { fill, into };
  } else if (node.kind === 'list' || node.kind === 'map') {
    const inner = node.kind === 'list' ? node.items : node.values;
    if (planOf(inner) !== null) plan = { fill: [], into: [['', inner]] };
  }
  plans.set(node, plan);
  return plan;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` with the zero values kube writes added where absent, walking the
 * struct fields, list items and map values the schema names. Returns `value`
 * itself when changed in place or unchanged; a frozen part that needs a field
 * is copied (stores freeze what they hand out, and updates start from them).
 */
export function withZeros<T>(node: Node, value: T): T {
  const plan = planOf(node);
  if (plan === null) return value;
  if (node.kind === 'struct') return (isObject(value) ? structWithZeros(plan, value) : value) as T;
  const inner = plan.into[0]![1];
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = withZeros(inner, value[i]);
      if (v === value[i]) continue;
      out ??= Object.isFrozen(value) ? [...value] : value;
      out[i] = v;
    }
    return (out ?? value) as T;
  }
  if (node.kind === 'map' && isObject(value)) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      const v = withZeros(inner, value[k]);
      if (v === value[k]) continue;
      out ??= Object.isFrozen(value) ? copyOf(value) : value;
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return (out ?? value) as T;
  }
  return value;
}

function structWithZeros(plan: Plan, value: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  const target = () => (out ??= Object.isFrozen(value) ? copyOf(value) : value);
  for (const [k, child] of plan.fill) {
    if (Object.hasOwn(value, k) && value[k] !== undefined && value[k] !== null) continue;
    target()[k] = zeroStruct(child, 0);
  }
  for (const [k, child] of plan.into) {
    const cur = (out ?? value)[k];
    if (cur === undefined || cur === null) continue;
    const v = withZeros(child, cur);
    if (v !== cur) target()[k] = v;
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

function copyOf(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const k of Object.keys(value)) Object.defineProperty(out, k, { value: value[k], enumerable: true, writable: true, configurable: true });
  return out;
}

/** Fills a struct's zeros in place (its own object is never frozen); see withZeros. */
export function fillZeros(root: StructNode, obj: Record<string, unknown>): void {
  const plan = planOf(root);
  if (plan !== null) structWithZeros(plan, obj);
}
