// A type's objects at one revision (live or rebuilt from history), and paging over it.
import type { KObject } from '../../../lib/api/meta.js';
import type { ListOptions, ListResult } from './types.js';
import type { LoggedEvent } from './history.js';
import { insertSorted, prefixRange, removeSorted, upperBound } from './keys.js';

export interface TypeView {
  keys: string[];
  objects: Map<string, KObject>;
}

/** Up to this many touched keys are patched into a copied key array; more → one sort. */
const PATCH_LIMIT = 64;

/** The view at an older revision: live view with `later` (events after it, rev order) undone. */
export function snapshotAt(live: TypeView | undefined, later: readonly LoggedEvent[]): TypeView {
  const objects = new Map(live?.objects);
  const touched = new Set<string>();
  for (let i = later.length - 1; i >= 0; i--) {
    const ev = later[i]!.event;
    if (ev.type === 'ADDED') objects.delete(ev.key);
    else objects.set(ev.key, ev.prev!);
    touched.add(ev.key);
  }
  let keys: string[];
  if (touched.size <= PATCH_LIMIT) {
    keys = live ? live.keys.slice() : [];
    for (const k of touched) {
      if (objects.has(k)) insertSorted(keys, k);
      else removeSorted(keys, k);
    }
  } else {
    keys = [...objects.keys()].sort();
  }
  return { keys, objects };
}

/** One page of the keys under prefix: O(log n + scanned). */
export function listView(view: TypeView | undefined, prefix: string, opts: ListOptions): Omit<ListResult, 'rev'> {
  if (!view) return opts.filter ? { items: [] } : { items: [], remaining: 0 };
  const { keys, objects } = view;
  let [start, end] = prefixRange(keys, prefix);
  if (opts.after !== undefined) start = Math.max(start, upperBound(keys, opts.after));
  const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : Infinity;
  const { filter } = opts;
  const items: KObject[] = [];
  let next = start; // index after the last returned item
  let more = false;
  for (let i = start; i < end; i++) {
    const obj = objects.get(keys[i]!)!;
    if (filter && !filter(obj)) continue;
    if (items.length >= limit) {
      more = true;
      break;
    }
    items.push(obj);
    next = i + 1;
  }
  const result: Omit<ListResult, 'rev'> = { items };
  if (more) result.continueAfter = keys[next - 1]!;
  if (!filter) result.remaining = Math.max(0, end - next);
  return result;
}
