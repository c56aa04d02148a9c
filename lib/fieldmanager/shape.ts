// How a value is walked, from its schema node and the value itself: a struct
// (named fields), a granular map (every key a member), an associative list
// (set or map items, each with a path element) or an atomic value. No schema
// (custom resources without one) reads as unstructured: objects are maps,
// lists atomic.
import { isPlainObject } from '../api/meta.js';
import type { ListNode, Node, StructNode } from '../schema/model.js';
import { ownValue } from '../api/own.js';

export type Shape =
  | { readonly t: 'struct'; readonly node: StructNode; readonly v: Record<string, unknown> }
  | { readonly t: 'map'; readonly values: Node | undefined; readonly v: Record<string, unknown> }
  | { readonly t: 'list'; readonly node: ListNode; readonly v: readonly unknown[] }
  | { readonly t: 'atomic' };

const ATOMIC: Shape = Object.freeze({ t: 'atomic' });

export function shapeOf(node: Node | undefined, v: unknown): Shape {
  if (!node) return isPlainObject(v) ? { t: 'map', values: undefined, v } : ATOMIC;
  switch (node.kind) {
    case 'struct':
      return !node.atomic && isPlainObject(v) ? { t: 'struct', node, v } : ATOMIC;
    case 'map':
      return !node.atomic && isPlainObject(v) ? { t: 'map', values: node.values, v } : ATOMIC;
    case 'list':
      return node.listType !== 'atomic' && Array.isArray(v) ? { t: 'list', node, v } : ATOMIC;
    default:
      return ATOMIC;
  }
}

/** The schema of a struct's field or a map's value; undefined = unstructured. */
export function childNode(s: Shape, key: string): { node: Node | undefined; named: boolean } {
  if (s.t === 'struct') {
    const f = s.node.fields.get(key);
    return f ? { node: f.node, named: true } : { node: undefined, named: false };
  }
  return { node: s.t === 'map' ? s.values : undefined, named: false };
}

export class ItemKeyError extends Error {}

/** Defaults of list-map key fields that kube's schemas declare (ports' protocol). */
const KEY_DEFAULTS: Readonly<Record<string, unknown>> = { protocol: 'TCP' };

/** The path element of a list item: `k:{…}` for map lists, `v:…` for sets, `i:n` otherwise. */
export function itemKey(list: ListNode, item: unknown, index: number): string {
  if (list.listType === 'set') return `v:${canonicalJson(item)}`;
  if (list.keys.length === 0) return `i:${index}`;
  if (!isPlainObject(item)) throw new ItemKeyError(`element ${index}: associative list with keys has an element that is not a map`);
  const names = keyNames(list);
  if (!names) {
    const key: Record<string, unknown> = {};
    for (const k of [...list.keys].sort()) key[k] = keyValue(item, k, index);
    return `k:${JSON.stringify(key)}`;
  }
  // The JSON of an object holding the keys in sorted order, written directly.
  let out = 'k:{';
  for (let i = 0; i < names.length; i++) {
    const j = JSON.stringify(keyValue(item, names[i]!.name, index));
    if (j === undefined) continue; // JSON.stringify leaves such a member out
    out += `${out.length > 3 ? ',' : ''}${names[i]!.json}:${j}`;
  }
  return `${out}}`;
}

/** Throws what itemKey would throw for this item, without building the key. */
export function checkItemKey(list: ListNode, item: unknown, index: number): void {
  if (list.listType === 'set' || list.keys.length === 0) return;
  if (!isPlainObject(item)) throw new ItemKeyError(`element ${index}: associative list with keys has an element that is not a map`);
  const names = keyNames(list);
  if (names) for (let i = 0; i < names.length; i++) keyValue(item, names[i]!.name, index);
  else for (const k of [...list.keys].sort()) keyValue(item, k, index);
}

function keyValue(item: Record<string, unknown>, k: string, index: number): unknown {
  const v = ownValue(item, k) ?? ownValue(KEY_DEFAULTS, k);
  if (v === undefined || v === null)
    throw new ItemKeyError(
      `element ${index}: associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`,
    );
  if (typeof v === 'object') throw new ItemKeyError(`element ${index}: key field ${JSON.stringify(k)} must be a scalar`);
  return v;
}

interface KeyName {
  readonly name: string;
  readonly json: string;
}
const keyNamesOf = new WeakMap<ListNode, readonly KeyName[] | null>();

/**
 * A list's key fields, sorted, each once; null when one is an array index
 * name (an object would order it first) or `__proto__` (an object would not
 * keep it): such lists take the general path.
 */
function keyNames(list: ListNode): readonly KeyName[] | null {
  let names = keyNamesOf.get(list);
  if (names === undefined) {
    const sorted = [...list.keys].sort();
    names = sorted.some((k) => /^(0|[1-9]\d*)$/.test(k) || k === '__proto__')
      ? null
      : [...new Set(sorted)].map((name) => ({ name, json: JSON.stringify(name) }));
    keyNamesOf.set(list, names);
  }
  return names;
}

/** JSON with object keys sorted, as Go writes maps. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isPlainObject(v))
    return `{${Object.keys(v)
      .filter((k) => v[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Items of an associative list by path element (a later duplicate wins), in list order. */
export function indexItems(list: ListNode, items: readonly unknown[]): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (let i = 0; i < items.length; i++) out.set(itemKey(list, items[i], i), items[i]);
  return out;
}
