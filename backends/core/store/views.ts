// A type's objects at one revision (live or rebuilt from history), and paging over it.
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult } from './types.js';
import type { Kept } from './kept.js';
import { isBytes, objectOfKept } from './kept.js';
import { prefixEnd } from './keys.js';
import { SortedKeys } from './sortedkeys.js';

export interface TypeView {
  keys: SortedKeys;
  objects: Map<string, Kept>;
}

/** A history entry as a view reads it: what the key held before (absent for ADDED). */
export interface KeptChange {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly key: string;
  readonly prev?: Kept | undefined;
}

/** Up to this many touched keys are patched into a copied key array; more → one sort. */
const PATCH_LIMIT = 64;

/** The view at an older revision: live view with `later` (events after it, rev order) undone. */
export function snapshotAt(live: TypeView | undefined, later: readonly KeptChange[]): TypeView {
  const objects = new Map(live?.objects);
  const touched = new Set<string>();
  for (let i = later.length - 1; i >= 0; i--) {
    const ev = later[i]!;
    if (ev.type === 'ADDED') objects.delete(ev.key);
    else objects.set(ev.key, ev.prev!);
    touched.add(ev.key);
  }
  let keys: SortedKeys;
  if (touched.size <= PATCH_LIMIT) {
    keys = live ? live.keys.clone() : new SortedKeys();
    for (const k of touched) {
      if (objects.has(k)) keys.insert(k);
      else keys.remove(k);
    }
  } else {
    keys = new SortedKeys([...objects.keys()].sort());
  }
  return { keys, objects };
}

/** One page of the keys under prefix: O(log n + scanned). */
export function listView(
  view: TypeView | undefined,
  prefix: string,
  opts: ListOptions,
  objectOf: (key: string, kept: Kept) => KObject = (_, kept) => objectOfKept(kept),
): Omit<ListResult, 'rev'> {
  if (!view) return opts.filter ? { items: [] } : { items: [], remaining: 0 };
  const { keys, objects } = view;
  let start = keys.lowerBound(prefix);
  const end = prefix === '' ? keys.size : keys.lowerBound(prefixEnd(prefix));
  if (opts.after !== undefined) start = Math.max(start, keys.upperBound(opts.after));
  const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
  const { filter, mayMatchJson } = opts;
  if (!filter) return unfilteredPage(view, start, end, limit, objectOf);
  const items: KObject[] = [];
  let last = '';
  let more = false;
  let i = start;
  const cursor = keys.cursor(start);
  for (let key = cursor.next(); key !== undefined; key = cursor.next()) {
    if (i >= end) break;
    const kept = objects.get(key)!;
    i++;
    if (mayMatchJson !== undefined && isBytes(kept) && !mayMatchJson(kept)) continue;
    const obj = objectOf(key, kept);
    if (!filter(obj)) continue;
    if (items.length >= limit) {
      more = true;
      break;
    }
    items.push(obj);
    last = key;
  }
  const result: Omit<ListResult, 'rev'> = { items };
  if (more) result.continueAfter = last;
  return result;
}

/**
 * A page without a filter: the positions [start, end) hold the page's keys, up to limit. When every item is
 * kept as bytes, the result carries them as `pieces` and parses its items only if `items` is read.
 */
function unfilteredPage(view: TypeView, start: number, end: number, limit: number, objectOf: (key: string, kept: Kept) => KObject): Omit<ListResult, 'rev'> {
  const { keys, objects } = view;
  const n = Math.max(0, Math.min(limit, end - start));
  const pageKeys: string[] = new Array(n);
  const kept: Kept[] = new Array(n);
  let allBytes = n > 0;
  const cursor = keys.cursor(start);
  for (let i = 0; i < n; i++) {
    const key = cursor.next()!;
    const k = objects.get(key)!;
    pageKeys[i] = key;
    kept[i] = k;
    if (allBytes && !isBytes(k)) allBytes = false;
  }
  const more = start + n < end;
  const rest = { ...(more ? { continueAfter: pageKeys[n - 1]! } : {}), remaining: Math.max(0, end - start - n) };
  if (!allBytes) return { items: kept.map((k, i) => objectOf(pageKeys[i]!, k)), ...rest };
  return lazyItems(kept as Buffer[], pageKeys, objectOf, rest);
}

/**
 * A page result whose `items` are parsed from `pieces` when first read (a JSON list never reads them).
 * Both are defined properties: `pieces` not enumerable (another form of the items, not more of the
 * result: a copy or comparison of the result sees what it saw before), `items` a getter.
 */
function lazyItems(
  pieces: Buffer[],
  pageKeys: string[],
  objectOf: (key: string, kept: Kept) => KObject,
  rest: { continueAfter?: string; remaining: number },
): Omit<ListResult, 'rev'> {
  let items: KObject[] | undefined;
  const result = {} as Omit<ListResult, 'rev'>;
  Object.defineProperty(result, 'pieces', { value: pieces });
  Object.defineProperty(result, 'items', {
    enumerable: true,
    get: () => (items ??= pieces.map((p, i) => objectOf(pageKeys[i]!, p))),
    set: (v: KObject[]) => {
      items = v;
    },
  });
  return Object.assign(result, rest);
}
