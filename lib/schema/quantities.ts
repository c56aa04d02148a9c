// Every Quantity field a built-in kind's schema names, rewritten in place:
// kube decodes each write into its Go struct, whose Quantities encode back in
// their canonical form (`1000m` → `1`), so the stored object carries that form.
// The rewrite itself is the caller's (lib/registry's canonicalQuantityValue);
// this only finds the fields, with a plan built once per schema node.
import type { Node, StructNode } from './model.js';

/** Where under a node quantities may sit: the node itself, or these struct fields / list items / map values. */
type Plan = 'quantity' | { readonly into: ReadonlyArray<readonly [string, Node]> } | null;

const plans = new WeakMap<Node, Plan>();

function planOf(node: Node): Plan {
  const known = plans.get(node);
  if (known !== undefined) return known;
  plans.set(node, null); // a recursive type is not looked into twice
  let plan: Plan = null;
  if (node.kind === 'scalar') plan = node.type === 'quantity' ? 'quantity' : null;
  else if (node.kind === 'struct') {
    const into: Array<readonly [string, Node]> = [];
    for (const [name, f] of node.fields) if (planOf(f.node) !== null) into.push([name, f.node]);
    if (into.length > 0) plan = { into };
  } else if (node.kind === 'list' || node.kind === 'map') {
    const inner = node.kind === 'list' ? node.items : node.values;
    if (planOf(inner) !== null) plan = { into: [['', inner]] };
  }
  plans.set(node, plan);
  return plan;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` with each quantity the schema names replaced by `rewrite(quantity)`;
 * changed in place, a frozen part copied (stores freeze what they hand out).
 */
export function mapQuantities<T>(node: Node, value: T, rewrite: (v: unknown) => unknown): T {
  const plan = planOf(node);
  if (plan === null || value === undefined || value === null) return value;
  if (plan === 'quantity') return rewrite(value) as T;
  if (node.kind === 'struct') {
    if (!isObject(value)) return value;
    let out: Record<string, unknown> | undefined;
    for (const [k, child] of plan.into) {
      if (!Object.hasOwn(value, k)) continue;
      const cur = value[k];
      const v = mapQuantities(child, cur, rewrite);
      if (v === cur) continue;
      out ??= Object.isFrozen(value) ? { ...value } : value;
      out[k] = v;
    }
    return (out ?? value) as T;
  }
  const inner = plan.into[0]![1];
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = mapQuantities(inner, value[i], rewrite);
      if (v === value[i]) continue;
      out ??= Object.isFrozen(value) ? [...value] : value;
      out[i] = v;
    }
    return (out ?? value) as T;
  }
  if (node.kind === 'map' && isObject(value)) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(value)) {
      const v = mapQuantities(inner, value[k], rewrite);
      if (v === value[k]) continue;
      // A client's key (`__proto__` too) is data: defined, never assigned.
      out ??= Object.isFrozen(value) ? copyOf(value) : value;
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return (out ?? value) as T;
  }
  return value;
}

function copyOf(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const k of Object.keys(value)) Object.defineProperty(out, k, { value: value[k], enumerable: true, writable: true, configurable: true });
  return out;
}

/** mapQuantities over a kind's root object, in place (its own object is never frozen). */
export function rewriteQuantities(root: StructNode, obj: Record<string, unknown>, rewrite: (v: unknown) => unknown): void {
  mapQuantities(root, obj, rewrite);
}
