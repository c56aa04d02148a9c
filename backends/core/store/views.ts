// A type's objects at one revision (live or rebuilt from history), and paging over it.
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult, StoreEvent } from './types.js';
import { prefixEnd } from './keys.js';
import { SortedKeys } from './sortedkeys.js';

export interface TypeView {
  keys: SortedKeys;
  objects: Map<string, KObject>;
}

/** Up to this many touched keys are patched into a copied key array; more → one sort. */
const PATCH_LIMIT = 64;

/** The view at an older revision: live view with `later` (events after it, rev order) undone. */
export function snapshotAt(live: TypeView | undefined, later: readonly StoreEvent[]): TypeView {
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
export function listView(view: TypeView | undefined, prefix: string, opts: ListOptions): Omit<ListResult, 'rev'> {
  if (!view) return opts.filter ? { items: [] } : { items: [], remaining: 0 };
  const { keys, objects } = view;
  let start = keys.lowerBound(prefix);
  const end = prefix === '' ? keys.size : keys.lowerBound(prefixEnd(prefix));
  if (opts.after !== undefined) start = Math.max(start, keys.upperBound(opts.after));
  const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
  const { filter } = opts;
  const items: KObject[] = [];
  let next = start; // position after the last returned item
  let last = '';
  let more = false;
  let i = start;
  const cursor = keys.cursor(start);
  for (let key = cursor.next(); key !== undefined; key = cursor.next()) {
    if (i >= end) break;
    const obj = objects.get(key)!;
    i++;
    if (filter && !filter(obj)) continue;
    if (items.length >= limit) {
      more = true;
      break;
    }
    items.push(obj);
    next = i;
    last = key;
  }
  const result: Omit<ListResult, 'rev'> = { items };
  if (more) result.continueAfter = last;
  if (!filter) result.remaining = Math.max(0, end - next);
  return result;
}
