// Strategic merge patch, as apimachinery's strategicpatch.StrategicMergeMapPatch
// applies it on the server (MergeParallelList and IgnoreUnmatchedNulls on):
// maps merge, `null` deletes, lists follow the field's patchStrategy — `merge`
// merges maps by patchMergeKey and scalars as a set, anything else replaces.
// Directives: `$patch: replace|delete|merge`, `$retainKeys`,
// `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`.
// Merge markers come from the schema nodes (lib/schema); an unknown field is
// merged as a plain map or replaced as a plain list. Never mutates its inputs.
// Keys are data: every map is read and written by own properties (api/own.ts).
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue, setOwn } from '../api/own.js';
import type { Node } from '../schema/model.js';
import { PatchError } from './errors.js';
import { cloneJson } from '../api/json.js';

type Obj = Record<string, unknown>;

const DIRECTIVE = '$patch';
const RETAIN_KEYS = '$retainKeys';
const DELETE_PREFIX = '$deleteFromPrimitiveList/';
const ORDER_PREFIX = '$setElementOrder/';

interface FieldMeta {
  sub: Node | undefined;
  strategy: string;
  mergeKey: string;
}

/** The patch metadata of `key` inside the map or struct `schema` (LookupPatchMetadataForStruct/Slice). */
function lookup(schema: Node | undefined, key: string): FieldMeta {
  if (schema?.kind === 'map') return { sub: schema.values, strategy: '', mergeKey: '' };
  if (schema?.kind === 'any') return { sub: schema, strategy: '', mergeKey: '' };
  if (schema?.kind !== 'struct') return { sub: undefined, strategy: '', mergeKey: '' };
  const f = schema.fields.get(key);
  if (!f) return { sub: undefined, strategy: '', mergeKey: '' };
  const strategies = (f.markers.ps ?? '').split(',').filter(Boolean);
  const other = strategies.filter((s) => s !== 'retainKeys');
  if (other.length > 1) throw new PatchError('failed', `unexpected patch strategy: ${strategies.join(',')}`);
  const sub = f.node.kind === 'list' ? f.node.items : f.node;
  return { sub, strategy: other[0] ?? '', mergeKey: f.markers.pk ?? '' };
}

/** Applies a strategic merge patch to `original` (an object) under `schema`. */
export function strategicMergePatch(original: Obj, patch: Obj, schema: Node): Obj {
  return mergeMap(cloneJson(original), cloneJson(patch), schema);
}

function mergeMap(original: Obj, patch: Obj, schema: Node | undefined): Obj {
  if (hasOwn(patch, DIRECTIVE)) {
    const d = patch[DIRECTIVE];
    if (d === 'replace') {
      delete patch[DIRECTIVE];
      return fresh(patch, schema) as Obj;
    }
    if (d === 'delete') return {};
    throw new PatchError('malformed', `Unknown patch type: ${String(d)} in map`);
  }
  applyRetainKeys(original, patch);
  mergeOrderLists(original, patch, schema);
  for (const [rawKey, patchV] of Object.entries(patch)) {
    let k = rawKey;
    let isDeleteList = false;
    if (rawKey.startsWith('$deleteFromPrimitiveList')) {
      if (!rawKey.startsWith(DELETE_PREFIX) || rawKey.length === DELETE_PREFIX.length)
        throw new PatchError('malformed', 'invalid patch format of primitive list');
      k = rawKey.slice(DELETE_PREFIX.length);
      isDeleteList = true;
    }
    if (patchV === null) {
      delete original[k];
      continue;
    }
    const meta = lookup(schema, k);
    if (!hasOwn(original, k)) {
      if (!isDeleteList) setOrDrop(original, k, fresh(patchV, meta.sub, meta));
      continue;
    }
    const origV = original[k];
    if (kindOf(origV) !== kindOf(patchV)) {
      if (!isDeleteList) setOrDrop(original, k, fresh(patchV, meta.sub, meta));
      continue;
    }
    if (isPlainObject(origV)) {
      setOwn(original, k, meta.strategy === 'replace' ? fresh(patchV, meta.sub) : mergeMap(origV, patchV as Obj, meta.sub));
    } else if (Array.isArray(origV)) {
      setOwn(
        original,
        k,
        meta.strategy === 'merge' || isDeleteList
          ? mergeSlice(origV, patchV as unknown[], meta.sub, meta.mergeKey, isDeleteList)
          : fresh(patchV, meta.sub, meta),
      );
    } else {
      setOrDrop(original, k, fresh(patchV, meta.sub));
    }
  }
  return original;
}

const DROP = Symbol('drop');

function setOrDrop(obj: Obj, k: string, v: unknown): void {
  if (v === DROP) delete obj[k];
  else setOwn(obj, k, v);
}

function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/**
 * A patch value with no original to merge with: nulls dropped, directives
 * processed against an empty original (removeDirectives, discardNullValuesFromPatch).
 */
function fresh(v: unknown, schema: Node | undefined, meta?: FieldMeta): unknown {
  if (isPlainObject(v)) {
    if (hasOwn(v, DIRECTIVE)) return DROP;
    return mergeMap({}, v, schema);
  }
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const item of v) {
      if (isPlainObject(item) && hasOwn(item, DIRECTIVE)) continue;
      const x = fresh(item, schema);
      if (x !== DROP) out.push(x);
    }
    void meta;
    return out;
  }
  return v;
}

function applyRetainKeys(original: Obj, patch: Obj): void {
  if (!hasOwn(patch, RETAIN_KEYS)) return;
  const list = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(list)) throw new PatchError('malformed', 'invalid patch format of retainKeys');
  const keep = new Set(list);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null || k.startsWith(DELETE_PREFIX) || k.startsWith(ORDER_PREFIX)) continue;
    if (!keep.has(k)) throw new PatchError('malformed', 'invalid patch format of retainKeys');
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

const isDeleteItem = (v: unknown): boolean => isPlainObject(v) && ownValue(v, DIRECTIVE) === 'delete';

const keyOf = (item: unknown, mergeKey: string): unknown => (mergeKey ? (isPlainObject(item) ? ownValue(item, mergeKey) : undefined) : item);

function indexIn(list: readonly unknown[], item: unknown, mergeKey: string): number {
  const v = keyOf(item, mergeKey);
  for (let i = 0; i < list.length; i++) if (keyOf(list[i], mergeKey) === v) return i;
  return -1;
}

function requireMergeKey(mergeKey: string, ...lists: Array<readonly unknown[]>): void {
  for (const l of lists) {
    for (const item of l) {
      if (!isPlainObject(item)) throw new PatchError('failed', `invalid list item ${JSON.stringify(item)}: expected a map with merge key ${mergeKey}`);
      if (!hasOwn(item, mergeKey)) throw new PatchError('failed', `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
    }
  }
}

/** normalizeSliceOrder: stable sort by position in `order`; `$patch: delete` items last. */
function sortBy(toSort: unknown[], order: readonly unknown[], mergeKey: string, maps: boolean): unknown[] {
  let keep = toSort;
  let del: unknown[] = [];
  if (maps) {
    requireMergeKey(mergeKey, toSort, order);
    keep = toSort.filter((v) => !isDeleteItem(v));
    del = toSort.filter(isDeleteItem);
  }
  const pos = keep.map((v, i) => ({ v, i, o: indexIn(order, v, mergeKey) }));
  pos.sort((a, b) => (a.o >= 0 && b.o >= 0 ? a.o - b.o : a.i - b.i));
  return [...pos.map((p) => p.v), ...del];
}

/** normalizeElementOrder + mergeSortedSlice: patch order first, server-only items placed by the live order. */
function normalizeOrder(
  patchItems: unknown[],
  serverOnly: unknown[],
  patchOrder: readonly unknown[],
  serverOrder: readonly unknown[],
  mergeKey: string,
  maps: boolean,
): unknown[] {
  const right = sortBy(patchItems, patchOrder, mergeKey, maps);
  const left = sortBy(serverOnly, serverOrder, mergeKey, maps);
  const out: unknown[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    if (i >= left.length) out.push(right[j++]);
    else if (j >= right.length) out.push(left[i++]);
    else {
      const li = indexIn(serverOrder, left[i], mergeKey);
      const ri = indexIn(serverOrder, right[j], mergeKey);
      if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
      else out.push(right[j++]);
    }
  }
  return out;
}

function partition(merged: unknown[], by: readonly unknown[], mergeKey: string, maps: boolean): [unknown[], unknown[]] {
  if (maps) requireMergeKey(mergeKey, merged);
  const inPatch: unknown[] = [];
  const serverOnly: unknown[] = [];
  for (const v of merged) (indexIn(by, v, mergeKey) >= 0 ? inPatch : serverOnly).push(v);
  return [inPatch, serverOnly];
}

function elementsAreMaps(a: readonly unknown[], b: readonly unknown[]): boolean {
  const all = [...a, ...b];
  if (all.length === 0) return false;
  const first = kindOf(all[0]);
  for (const v of all) {
    if (kindOf(v) !== first) throw new PatchError('failed', 'the items of a list in the patch and the object are of different types');
    if (first === 'array') throw new PatchError('failed', 'lists of lists are not supported');
  }
  return first === 'object';
}

function mergeSlice(original: unknown[], patch: unknown[], items: Node | undefined, mergeKey: string, isDeleteList: boolean): unknown[] {
  if (original.length === 0 && patch.length === 0) return original;
  const maps = elementsAreMaps(original, patch);
  let merged: unknown[];
  let orig = original;
  let pat = patch;
  if (!maps) {
    if (isDeleteList) {
      const del = new Set(patch);
      return original.filter((v) => !del.has(v));
    }
    merged = [];
    for (const v of [...original, ...patch]) if (!merged.includes(v)) merged.push(v);
  } else {
    if (!mergeKey) throw new PatchError('failed', 'cannot merge lists without merge key');
    [orig, pat] = withSpecialElements(original, patch, mergeKey);
    merged = [...orig];
    for (const v of pat) {
      const item = v as Obj;
      if (!hasOwn(item, mergeKey)) throw new PatchError('failed', `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
      const at = merged.findIndex((m) => isPlainObject(m) && hasOwn(m, mergeKey) && m[mergeKey] === item[mergeKey]);
      if (at >= 0) merged[at] = mergeMap(merged[at] as Obj, item, items);
      else merged.push(fresh(item, items));
    }
  }
  const [patchItems, serverOnly] = partition(merged, pat, mergeKey, maps);
  return normalizeOrder(patchItems, serverOnly, pat, orig, mergeKey, maps);
}

/** `$patch: delete` items remove their match; `$patch: replace` makes the list the patch's items. */
function withSpecialElements(original: unknown[], patch: unknown[], mergeKey: string): [unknown[], unknown[]] {
  let orig = original;
  const rest: unknown[] = [];
  let replace = false;
  for (const v of patch) {
    const item = v as Obj;
    if (!hasOwn(item, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    const d = item[DIRECTIVE];
    if (d === 'delete') {
      if (!hasOwn(item, mergeKey)) throw new PatchError('failed', `map: ${JSON.stringify(item)} does not contain declared merge key: ${mergeKey}`);
      orig = orig.filter((o) => !(isPlainObject(o) && hasOwn(o, mergeKey) && o[mergeKey] === item[mergeKey]));
    } else if (d === 'replace') {
      replace = true;
    } else if (d === 'merge') {
      throw new PatchError('malformed', 'merging lists cannot yet be specified in the patch');
    } else {
      throw new PatchError('malformed', `Unknown patch type: ${String(d)} in map`);
    }
  }
  return replace ? [rest, []] : [orig, rest];
}

/** `$setElementOrder/<field>`: merge that list now and order it as the directive says. */
function mergeOrderLists(original: Obj, patch: Obj, schema: Node | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith('$setElementOrder')) continue;
    if (!key.startsWith(ORDER_PREFIX) || key.length === ORDER_PREFIX.length) throw new PatchError('malformed', 'invalid patch format of setElementOrder list');
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order)) throw new PatchError('malformed', 'invalid patch format of setElementOrder list');
    const field = key.slice(ORDER_PREFIX.length);
    const foundOrig = hasOwn(original, field);
    const foundPatch = hasOwn(patch, field);
    const origList = ownValue(original, field);
    const patchList = ownValue(patch, field);
    if (foundOrig && !Array.isArray(origList)) throw new PatchError('failed', `${field} is not a list`);
    if (foundPatch && !Array.isArray(patchList)) throw new PatchError('malformed', 'invalid patch format of setElementOrder list');
    const meta = lookup(schema, field);
    checkOrder((patchList ?? []) as unknown[], order, meta.mergeKey);
    let merged: unknown[];
    if (foundOrig && !foundPatch) merged = origList as unknown[];
    else if (!foundOrig && foundPatch) merged = fresh(patchList, meta.sub) as unknown[];
    else if (foundOrig && foundPatch) {
      merged =
        meta.strategy === 'merge'
          ? mergeSlice(origList as unknown[], patchList as unknown[], meta.sub, meta.mergeKey, false)
          : (fresh(patchList, meta.sub) as unknown[]);
    } else continue;
    const maps = meta.mergeKey !== '';
    const [inOrder, serverOnly] = partition(merged, order, meta.mergeKey, maps);
    setOwn(original, field, normalizeOrder(inOrder, serverOnly, order, (origList ?? []) as unknown[], meta.mergeKey, maps));
    delete patch[field];
  }
}

/** The patch list's items must appear in the directive's list, in the same relative order. */
function checkOrder(patchList: unknown[], order: unknown[], mergeKey: string): void {
  if (order.length === 0 || patchList.length === 0) return;
  const items = mergeKey ? patchList.filter((v) => !isDeleteItem(v)) : patchList;
  let p = 0;
  let o = 0;
  while (p < items.length && o < order.length) {
    if (isPlainObject(items[p]) && hasOwn(items[p] as Obj, DIRECTIVE)) {
      p++;
      continue;
    }
    if (mergeKey) requireMergeKey(mergeKey, [items[p], order[o]]);
    if (keyOf(items[p], mergeKey) === keyOf(order[o], mergeKey)) p++;
    o++;
  }
  if (p < items.length) throw new PatchError('malformed', `the order in the patch list doesn't match the $setElementOrder list`);
}
