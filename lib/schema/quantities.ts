// Every Quantity field a built-in kind's schema names, rewritten in place:
// kube decodes each write into its Go struct, whose Quantities encode back in
// their canonical form (`1000m` → `1`), so the stored object carries that form.
// The rewrite itself is the caller's (lib/registry's canonicalQuantityValue);
// this only finds the fields, with a plan built once per schema node.
import type { Node, StructNode } from './model.js';
import { planner, walkInPlace } from './planwalk.js';

const planOf = planner<true>((node) => (node.kind === 'scalar' && node.type === 'quantity' ? true : undefined));

/**
 * `value` with each quantity the schema names replaced by `rewrite(quantity)`;
 * changed in place, a frozen part copied (stores freeze what they hand out).
 */
export function mapQuantities<T>(node: Node, value: T, rewrite: (v: unknown) => unknown): T {
  const plan = planOf(node);
  return plan === null ? value : (walkInPlace(plan, value, rewrite) as T);
}

/** mapQuantities over a kind's root object, in place (its own object is never frozen). */
export function rewriteQuantities(root: StructNode, obj: Record<string, unknown>, rewrite: (v: unknown) => unknown): void {
  mapQuantities(root, obj, rewrite);
}
