// The walk the schema-driven rewrites of a written object share (zeros.ts,
// quantities.ts, keyorder.ts): a plan, built once per schema node and walk,
// saying what the walk does at that node (its leaf) and under which struct
// fields, list items and map values anything is to be done, so a walk follows
// plans from plan to plan and never enters the rest of the object.
import type { Node } from './model.js';

/** A struct field's place in Go's declaration order, and its plan (null: nothing to do under it). */
export interface FieldPlace<L> {
  readonly at: number;
  readonly plan: Plan<L> | null;
}

export interface Plan<L> {
  readonly node: Node;
  /** `node.kind`, read here: a plan's own member costs less than a read through the node (nodes come in several shapes). */
  readonly kind: Node['kind'];
  /** What the walk does at this node itself (the planner's `leafOf`), or undefined. */
  readonly leaf: L | undefined;
  /** A struct's fields with something to do under them, in declaration order. */
  readonly fields: ReadonlyArray<readonly [string, Plan<L>]>;
  /** A struct's every field by name (only from a planner asked for places). */
  readonly place: ReadonlyMap<string, FieldPlace<L>>;
  /** A list's items or a map's values, when there is something to do under them. */
  readonly inner: Plan<L> | null;
}

type Draft<L> = { -readonly [K in keyof Plan<L>]: Plan<L>[K] };

const NO_FIELDS: ReadonlyArray<readonly [string, never]> = []; // not frozen: a frozen array has its own elements kind, which would make the fields loop polymorphic
const NO_PLACES: ReadonlyMap<string, never> = new Map<string, never>();

/**
 * A memoized `planOf(node)`: null where nothing under `node` (itself included)
 * is to be done. A node with a leaf is planned before what is under it, so a
 * recursive type reaches its own plan; one without is not looked into twice
 * (the second visit finds nothing more).
 */
export function planner<L>(leafOf: (node: Node) => L | undefined, withPlaces = false): (node: Node) => Plan<L> | null {
  const plans = new WeakMap<Node, Plan<L> | null>();
  const planOf = (node: Node): Plan<L> | null => {
    const known = plans.get(node);
    if (known !== undefined) return known;
    const leaf = leafOf(node);
    if (leaf === undefined && node.kind !== 'struct' && node.kind !== 'list' && node.kind !== 'map') {
      plans.set(node, null);
      return null;
    }
    const plan: Draft<L> = { node, kind: node.kind, leaf, fields: NO_FIELDS, place: NO_PLACES, inner: null };
    plans.set(node, leaf === undefined ? null : plan);
    if (node.kind === 'struct') {
      const fields: Array<readonly [string, Plan<L>]> = [];
      const place = withPlaces ? new Map<string, FieldPlace<L>>() : undefined;
      for (const [name, f] of node.fields) {
        const p = planOf(f.node);
        if (p !== null) fields.push([name, p]);
        place?.set(name, { at: place.size, plan: p });
      }
      if (fields.length > 0) plan.fields = fields;
      if (place) plan.place = place;
    } else if (node.kind === 'list' || node.kind === 'map') plan.inner = planOf(node.kind === 'list' ? node.items : node.values);
    const needed = leaf !== undefined || plan.fields.length > 0 || plan.inner !== null;
    plans.set(node, needed ? plan : null);
    return needed ? plan : null;
  };
  return planOf;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * `value` walked along `plan`, in place: `act(v, leaf)` at each node with a
 * leaf (before what is under it), its answer taking the value's place; null
 * and absent values are passed by. A frozen part that changes is copied
 * (stores freeze what they hand out, and updates start from them); `act` does
 * the same for its own changes. Returns `value` itself when changed in place
 * or unchanged.
 */
export function walkInPlace<L>(plan: Plan<L>, value: unknown, act: (value: unknown, leaf: L) => unknown): unknown {
  if (value === undefined || value === null) return value;
  const v = plan.leaf === undefined ? value : act(value, plan.leaf);
  if (plan.kind === 'struct') {
    if (!isObject(v)) return v;
    let out: Record<string, unknown> | undefined;
    for (const [k, child] of plan.fields) {
      if (!Object.hasOwn(v, k)) continue;
      const cur = v[k];
      const next = walkInPlace(child, cur, act);
      if (next === cur) continue;
      out ??= Object.isFrozen(v) ? ownCopy(v) : v;
      out[k] = next; // a schema's field name, never `__proto__`
    }
    return out ?? v;
  }
  const inner = plan.inner;
  if (inner === null) return v;
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const next = walkInPlace(inner, v[i], act);
      if (next === v[i]) continue;
      out ??= Object.isFrozen(v) ? [...v] : v;
      out[i] = next;
    }
    return out ?? v;
  }
  if (plan.kind === 'map' && isObject(v)) {
    let out: Record<string, unknown> | undefined;
    for (const k of Object.keys(v)) {
      const next = walkInPlace(inner, v[k], act);
      if (next === v[k]) continue;
      // A client's key (`__proto__` too) is data: defined, never assigned.
      out ??= Object.isFrozen(v) ? ownCopy(v) : v;
      Object.defineProperty(out, k, { value: next, enumerable: true, writable: true, configurable: true });
    }
    return out ?? v;
  }
  return v;
}

/** A writable copy of an object's own members, its prototype kept and `__proto__` a member like any other. */
export function ownCopy(value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(Object.getPrototypeOf(value) as object | null) as Record<string, unknown>;
  for (const k of Object.keys(value)) Object.defineProperty(out, k, { value: value[k], enumerable: true, writable: true, configurable: true });
  return out;
}
