// kube's key order. kube-apiserver decodes every write of a built-in kind
// into its Go struct and encodes that back, so a stored object's keys come out
// in the struct's field order (the tables keep it: TypeDef.f, TypeMeta's kind
// and apiVersion first) and a map's keys sorted, as encoding/json sorts them.
// A custom resource is map[string]interface{} all the way down (unstructured):
// every object's keys sorted. RawExtension and FieldsV1 are raw bytes Go
// writes back as they came, so `any` nodes keep their order.
//
// Limit: a JS object enumerates array-index keys ("0", "10") first, in
// numeric order, whatever order they were set in, so a map with such keys
// cannot hold Go's byte order among them ("10" before "9", ".a" before "1").
import type { Node, StructNode } from './model.js';
import { type FieldPlace, type Plan, planner } from './planwalk.js';

/**
 * Go's order of map keys: strings.Compare on UTF-8, which is code point
 * order. JS compares UTF-16 code units, which differs only where a surrogate
 * (half of a code point above U+FFFF) meets U+E000–U+FFFF.
 */
export function compareGoKeys(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codeRank(x) - codeRank(y);
  }
  return a.length - b.length;
}

/** Surrogates ranked above U+E000–U+FFFF, as the code points they start; the order within each range kept. */
const codeRank = (c: number): number => (c < 0xd800 ? c : c <= 0xdfff ? c + 0x2000 : c - 0x800);

/** Structs take Go's field order and maps sorted keys; lists only carry them (scalars and `any` keep theirs). */
const planOf = planner<true>((node) => (node.kind === 'struct' || node.kind === 'map' ? true : undefined), true);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Sets an own, enumerable member (a client's `__proto__` key is data, not the prototype). */
function put(out: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__') Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  else out[k] = v;
}

/**
 * `value` in kube's key order for `node` (a built-in kind's schema): struct
 * members in Go's field order, members the schema does not name after them as
 * they came (kube would have dropped them; validation already has), map keys
 * sorted, list items and map values walked. Returns `value` itself when it is
 * already in order; never writes into it (parts may be frozen, or reused by a
 * retry), so a changed part is a new object sharing what did not change.
 */
export function inStructOrder<T>(node: Node, value: T): T {
  const plan = planOf(node);
  return plan === null ? value : (inPlanOrder(plan, value) as T);
}

function inPlanOrder(plan: Plan<true>, value: unknown): unknown {
  const inner = plan.inner;
  switch (plan.node.kind) {
    case 'struct':
      return isObject(value) ? structOrder(plan, value) : value;
    case 'list':
      return Array.isArray(value) && inner !== null ? itemsInOrder(value, (x) => inPlanOrder(inner, x)) : value;
    case 'map':
      return isObject(value) ? sortedMap(value, inner === null ? undefined : (x) => inPlanOrder(inner, x)) : value;
    default:
      return value;
  }
}

/**
 * inStructOrder of a struct with `member`'s struct given a `field` holding '' when it has
 * none, at its place: withResourceVersionSlot(inStructOrder(…).metadata)'s object made in
 * the one rebuild of the member (a create's metadata was rebuilt twice, once for each).
 * A member or field the schema does not place is left to the caller (no slot added).
 */
export function inStructOrderSlotted<T>(node: Node, value: T, member: string, field: string): T {
  const plan = planOf(node);
  if (plan === null || plan.node.kind !== 'struct' || !isObject(value)) return inStructOrder(node, value);
  return structOrder(plan, value, undefined, member, field) as T;
}

/** `add`: a field to give '' when value has none; `slotMember`'s struct gets `slotField` so. */
function structOrder(plan: Plan<true>, value: Record<string, unknown>, add?: string, slotMember?: string, slotField?: string): Record<string, unknown> {
  const place = plan.place;
  const keys = Object.keys(value);
  if (add !== undefined && (Object.hasOwn(value, add) || !place.has(add))) add = undefined;
  if (add !== undefined) keys.push(add);
  // Each key's place read once, kept for a rebuild out of order (its sort and the unplaced keys read them
  // again: a create's object and metadata took 3 Map lookups a key, ~3k instructions; 2026-11-30-create-cpu-cuts-7.md).
  const places: (FieldPlace<true> | undefined)[] = [];
  let last = -1;
  let ordered = true;
  let changed: Map<string, unknown> | undefined;
  for (const k of keys) {
    const p = place.get(k);
    places.push(p);
    if (p === undefined) {
      last = Infinity;
      continue;
    }
    if (p.at < last) ordered = false;
    else last = p.at;
    if (p.plan === null) continue;
    const cur = k === add ? '' : value[k];
    const next = k === slotMember && p.plan.node.kind === 'struct' && isObject(cur) ? structOrder(p.plan, cur, slotField) : inPlanOrder(p.plan, cur);
    if (next !== cur) (changed ??= new Map()).set(k, next);
  }
  if (ordered && !changed && add === undefined) return value;
  const out: Record<string, unknown> = {};
  if (ordered) {
    for (const k of keys) put(out, k, changed?.has(k) ? changed.get(k) : k === add ? '' : value[k]);
    return out;
  }
  for (const k of byPlace(keys, places)) out[k] = changed?.has(k) ? changed.get(k) : k === add ? '' : value[k];
  for (let i = 0; i < keys.length; i++) if (places[i] === undefined) put(out, keys[i]!, value[keys[i]!]);
  return out;
}

/**
 * The keys with a place (`places[i]` is `keys[i]`'s), in their places' order: the few keys
 * insertion-sorted, where a sort's comparator read two places per comparison (every create
 * rebuilds its object and metadata here; docs/decisions/2026-11-29-create-cpu-cuts.md).
 */
function byPlace(keys: readonly string[], places: readonly (FieldPlace<true> | undefined)[]): string[] {
  const known: string[] = [];
  const at: number[] = [];
  for (let j = 0; j < keys.length; j++) {
    const p = places[j];
    if (p === undefined) continue;
    let i = known.length;
    for (; i > 0 && at[i - 1]! > p.at; i--) {
      known[i] = known[i - 1]!;
      at[i] = at[i - 1]!;
    }
    known[i] = keys[j]!;
    at[i] = p.at;
  }
  return known;
}

/**
 * `value` as encoding/json writes an unstructured object (a custom resource):
 * every object's keys sorted, arrays in their order. Returns `value` itself
 * when already so; never writes into it.
 */
export function inSortedOrder<T>(value: T): T {
  if (Array.isArray(value)) return itemsInOrder(value, inSortedOrder) as T;
  if (isObject(value)) return sortedMap(value, inSortedOrder) as T;
  return value;
}

function itemsInOrder(items: readonly unknown[], walk: (x: unknown) => unknown): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < items.length; i++) {
    const next = walk(items[i]);
    if (next === items[i]) continue;
    out ??= items.slice();
    out[i] = next;
  }
  return out ?? items;
}

/** `value`'s keys sorted, each value through `walk` (none: the values as they are). */
function sortedMap(value: Record<string, unknown>, walk: ((x: unknown) => unknown) | undefined): Record<string, unknown> {
  const keys = Object.keys(value);
  let ordered = true;
  let changed: Map<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (i > 0 && ordered && compareGoKeys(keys[i - 1]!, k) > 0) ordered = false;
    if (walk === undefined) continue;
    const cur = value[k];
    const next = walk(cur);
    if (next !== cur) (changed ??= new Map()).set(k, next);
  }
  if (ordered && !changed) return value;
  if (!ordered) keys.sort(compareGoKeys);
  const out: Record<string, unknown> = {};
  for (const k of keys) put(out, k, changed?.has(k) ? changed.get(k) : value[k]);
  return out;
}

/**
 * `metadata` with a `resourceVersion` member at its place in kube's order
 * (its ObjectMeta field place, or sorted among the keys for `sorted`), holding
 * '' when it had none: the store stamps the revision into that member, and a
 * spread keeps a member where it is. Returns `metadata` itself when it has one.
 */
export function withResourceVersionSlot(metadata: Record<string, unknown>, objectMeta: StructNode | undefined): Record<string, unknown> {
  if (Object.hasOwn(metadata, 'resourceVersion')) return metadata;
  const keys = Object.keys(metadata);
  const place = objectMeta ? planOf(objectMeta)!.place : undefined;
  const rv = place?.get('resourceVersion')?.at;
  const after = (k: string): boolean => (place && rv !== undefined ? (place.get(k)?.at ?? Infinity) > rv : compareGoKeys(k, 'resourceVersion') > 0);
  const out: Record<string, unknown> = {};
  let placed = false;
  for (const k of keys) {
    if (!placed && after(k)) {
      out.resourceVersion = '';
      placed = true;
    }
    put(out, k, metadata[k]);
  }
  if (!placed) out.resourceVersion = '';
  return out;
}
