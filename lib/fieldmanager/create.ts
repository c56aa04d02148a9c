// The creator's FieldsV1, in one walk over the object, its schema node and
// the typed empty baseline, written as JSON directly: what the general path
// (compare with the baseline, strip server paths, union, toFieldsV1) gives,
// byte for byte, without building field sets or sorting mixed path elements.
// test/fieldmanager/create.test.ts holds the two paths together.
//
// The rules are compare.ts's, seen from a baseline side that holds only
// empty structs and nulls: a value the baseline lacks is added, a member
// with everything beneath it; a value beside a baseline struct is walked and
// is no member itself; null beside a container reads as the empty container;
// nothing else can differ. The baseline holds no lists, so every list walked
// is the object's own, and compare computes the keys of exactly those lists
// (ItemKeyError), leaving out the items a later duplicate key hides.
import { isPlainObject } from '../api/meta.js';
import type { ListNode, MapNode, Node, StructNode } from '../schema/model.js';
import { baselineOf } from './baseline.js';
import { itemKey } from './shape.js';
import { SERVER_META_FIELDS, SERVER_ROOT_FIELDS } from './ownership.js';

type Obj = Record<string, unknown>;
export type Fields = Record<string, unknown>;

/** The object's shape, not one the walk handles: the caller takes the general path. */
export const GENERAL: unique symbol = Symbol('general');

/** Every leaf and `.` (frozen, so sharing one is invisible; stores share frozen parts anyway). */
const LEAF: Fields = Object.freeze({});

/** compare's stand-in for a null container. */
const NULL_BASE: Obj = Object.freeze({});

// shape.ts's shapes, without allocating one per value.
const STRUCT = 0,
  MAP = 1,
  LIST = 2,
  ATOMIC = 3;
type Kind = typeof STRUCT | typeof MAP | typeof LIST | typeof ATOMIC;

function kindOf(node: Node | undefined, v: unknown): Kind {
  if (!node) return isPlainObject(v) ? MAP : ATOMIC;
  switch (node.kind) {
    case 'struct':
      return !node.atomic && isPlainObject(v) ? STRUCT : ATOMIC;
    case 'map':
      return !node.atomic && isPlainObject(v) ? MAP : ATOMIC;
    case 'list':
      return node.listType !== 'atomic' && Array.isArray(v) ? LIST : ATOMIC;
    default:
      return ATOMIC;
  }
}

function childOf(node: Node | undefined, kind: Kind, key: string): Node | undefined {
  if (kind === STRUCT) return (node as StructNode).fields.get(key)?.node;
  return node ? (node as MapNode).values : undefined;
}

/**
 * `f:<name>`, kept per name: a key built afresh is a new string that each object it is set on has to
 * intern first; a kept one is interned once (a ConfigMap's data and label keys were built per create).
 * Schema field names and map keys alike; client keys are any strings, so the table is bounded.
 * `createdFields` of a ConfigMap: 18.5k → 15.9–17.4k instructions a create (docs/decisions/2026-11-30-create-cpu-cuts-6.md).
 */
function fieldKey(name: string): string {
  let key = fieldKeys.get(name);
  if (key === undefined) {
    // Forgetting all at once keeps the table bounded without an LRU's bookkeeping per key.
    if (fieldKeys.size >= FIELD_KEYS_MAX) fieldKeys.clear();
    key = `f:${name}`;
    fieldKeys.set(name, key);
  }
  return key;
}

const FIELD_KEYS_MAX = 4096;
const fieldKeys = new Map<string, string>();

// Where server paths are (ownership.ts): they lose their own `.`, never what is beneath them.
const PLAIN = 0,
  ROOT = 1,
  META = 2;
type Level = typeof PLAIN | typeof ROOT | typeof META;
const ROOT_SERVER = new Set(SERVER_ROOT_FIELDS);
const META_SERVER = new Set(SERVER_META_FIELDS);

/**
 * The creator's FieldsV1 for `obj` (its managedFields ignored); undefined
 * when it owns nothing; GENERAL for a root or metadata that is no object.
 * Throws ItemKeyError where the general path does.
 */
export function createdFields(obj: Obj, node: Node | undefined): Fields | undefined | typeof GENERAL {
  if (node && (node.kind !== 'struct' || node.atomic)) return GENERAL;
  const meta = obj['metadata'];
  // The general path reads a spread copy of metadata: null and absent read as {}, other values oddly.
  if (meta !== undefined && meta !== null && !isPlainObject(meta)) return GENERAL;
  return fieldsOf(baselineOf(node), obj, node, node ? STRUCT : MAP, false, ROOT);
}

/** `v`, which the baseline lacks: a member (unless `member` is false: a server path) with everything beneath it. */
function added(v: unknown, node: Node | undefined, member: boolean, level: Level): Fields | undefined {
  const kind = kindOf(node, v);
  if (kind === ATOMIC) return member ? LEAF : undefined;
  if (kind === LIST) return itemsOf(node as ListNode, v as unknown[], member);
  return fieldsOf(undefined, v as Obj, node, kind, member, level);
}

/**
 * `v` where the baseline holds `b`: null, or the empty struct of a
 * non-atomic struct node (baseline.ts builds no other). What differs; the
 * path itself only when a leaf does.
 */
function changed(b: unknown, v: unknown, node: Node | undefined, member: boolean, level: Level): Fields | undefined {
  if (b === v) return undefined;
  const kind = kindOf(node, v);
  if (b === null) {
    if (kind === ATOMIC) return member ? LEAF : undefined; // v is not null: it differs
    if (kind === LIST) return itemsOf(node as ListNode, v as unknown[], false);
    return fieldsOf(NULL_BASE, v as Obj, node, kind, false, level);
  }
  if (v === null) return undefined; // null beside a struct reads as {}
  // Not an object, so not equal to b: a leaf that differs. An object is a struct, as b is.
  if (kind !== STRUCT) return member ? LEAF : undefined;
  return fieldsOf(b as Obj, v as Obj, node, kind, false, level);
}

/**
 * `{ '.': LEAF }` made as `{}` + set: that literal gets one in-object slot, so the
 * members added after it went to a property array, ~40 B more for each such
 * object a stored object keeps (docs/decisions/2026-11-30-heap-per-object.md).
 */
function dotted(): Fields {
  const out: Fields = {};
  out['.'] = LEAF;
  return out;
}

/**
 * A struct's or map's children, sorted (all `f:`, so plain string order);
 * `dot`: the path is a member too. `base` undefined: the baseline lacks the
 * path. Only own members count (a field named `constructor` is a field).
 */
function fieldsOf(base: Obj | undefined, v: Obj, node: Node | undefined, kind: Kind, dot: boolean, level: Level): Fields | undefined {
  const names: string[] = [];
  for (const k in v) if (v[k] !== undefined) names.push(k);
  sortStrings(names);
  let out: Fields | undefined;
  if (dot) out = dotted();
  let n = 0;
  for (const k of names) {
    if (level === META && k === 'managedFields') continue; // the general path compares the object without it
    const b = base === undefined || !Object.hasOwn(base, k) ? undefined : base[k];
    const server = level === ROOT ? ROOT_SERVER.has(k) : level === META && META_SERVER.has(k);
    const next = level === ROOT && k === 'metadata' ? META : PLAIN;
    const cn = childOf(node, kind, k);
    const r = b === undefined ? added(v[k], cn, !server, next) : changed(b, v[k], cn, !server, next);
    if (r === undefined) continue;
    (out ??= {})[fieldKey(k)] = r;
    n++;
  }
  if (n === 0) return dot ? LEAF : undefined;
  return Object.freeze(out!);
}

/**
 * A list's items (the baseline never holds one), each a member with
 * everything beneath it, by path element: `i:` in index order, `k:`/`v:`
 * sorted; the last of a repeated key wins, and only it is walked. Every
 * item's key is computed first, as compare's indexItems does.
 */
function itemsOf(list: ListNode, items: readonly unknown[], dot: boolean): Fields | undefined {
  const len = items.length;
  const keys = new Array<string>(len);
  for (let i = 0; i < len; i++) keys[i] = itemKey(list, items[i], i);
  const order = keyOrder(keys, list.listType !== 'set' && list.keys.length === 0);
  let out: Fields | undefined;
  if (dot) out = dotted();
  let n = 0;
  for (let j = 0; j < order.length; j++) {
    const i = order[j]!;
    if (j + 1 < order.length && keys[order[j + 1]!] === keys[i]) continue; // a later duplicate hides it
    const x = items[i];
    if (x === undefined) continue; // compare sees nothing there (undefined on both sides)
    (out ??= {})[keys[i]!] = added(x, list.items, true, PLAIN);
    n++;
  }
  if (n === 0) return dot ? LEAF : undefined;
  return Object.freeze(out!);
}

/** Item indexes in path element order, equal keys by index (so the last of them is the last one). */
function keyOrder(keys: readonly string[], indexed: boolean): number[] {
  const order = new Array<number>(keys.length);
  for (let i = 0; i < keys.length; i++) order[i] = i;
  if (indexed || keys.length < 2) return order; // `i:n` come in order, once each
  if (keys.length > SMALL) return order.sort((a, b) => (keys[a]! < keys[b]! ? -1 : keys[a]! > keys[b]! ? 1 : a - b));
  // Insertion sort, stable: equal keys keep index order.
  for (let i = 1; i < order.length; i++) {
    const x = order[i]!;
    let j = i - 1;
    for (; j >= 0 && keys[order[j]!]! > keys[x]!; j--) order[j + 1] = order[j]!;
    order[j + 1] = x;
  }
  return order;
}

/** Below this, insertion sort beats Array.prototype.sort (objects have a handful of fields). */
const SMALL = 16;

/** Strings in code unit order, as comparePathElements orders path elements of one kind. */
function sortStrings(a: string[]): void {
  if (a.length > SMALL) {
    a.sort();
    return;
  }
  for (let i = 1; i < a.length; i++) {
    const x = a[i]!;
    let j = i - 1;
    for (; j >= 0 && a[j]! > x; j--) a[j + 1] = a[j]!;
    a[j + 1] = x;
  }
}
