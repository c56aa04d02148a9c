// Compares two versions of an object as structured-merge-diff's
// TypedValue.Compare does: a leaf or atomic value that differs is modified;
// a field, map key or list item present on one side only is added or removed
// (with everything beneath it).
import type { Node } from '../schema/model.js';
import { freeze, insert, isEmpty, type Builder, type FieldSet } from './set.js';
import { checkItemKey, childNode, indexItems, shapeOf } from './shape.js';
import { jsonEqual as deepEqual } from '../api/json.js';

export interface Comparison {
  readonly added: FieldSet;
  readonly modified: FieldSet;
  readonly removed: FieldSet;
}

export function isSame(c: Comparison): boolean {
  return isEmpty(c.added) && isEmpty(c.modified) && isEmpty(c.removed);
}

interface Acc {
  readonly added: Builder;
  readonly modified: Builder;
  readonly removed: Builder;
  readonly path: string[];
}

export function compare(lhs: unknown, rhs: unknown, node: Node | undefined): Comparison {
  const acc: Acc = { added: { member: false }, modified: { member: false }, removed: { member: false }, path: [] };
  walk(lhs, rhs, node, acc);
  return { added: freeze(acc.added), modified: freeze(acc.modified), removed: freeze(acc.removed) };
}

function leaf(l: unknown, r: unknown, acc: Acc): void {
  if (l === undefined) insert(acc.added, acc.path);
  else if (r === undefined) insert(acc.removed, acc.path);
  else if (!deepEqual(l, r)) insert(acc.modified, acc.path);
}

function item(l: unknown, r: unknown, node: Node | undefined, pe: string, acc: Acc): void {
  // Equal values compare to nothing. Identical ones are not even looked at (walk's own shortcut);
  // equal ones still have their keyed list items' keys computed, which may throw ItemKeyError.
  if (l === r) return;
  if (l !== undefined && r !== undefined && typeof l === 'object' && l !== null && deepEqual(l, r)) {
    if (mayThrow(node)) checkKeys(l, node);
    return;
  }
  acc.path.push(pe);
  walk(l, r, node, acc);
  if (l === undefined) insert(acc.added, acc.path);
  else if (r === undefined) insert(acc.removed, acc.path);
  acc.path.pop();
}

function walk(l: unknown, r: unknown, node: Node | undefined, acc: Acc): void {
  if (l === r) return;
  // null beside a container reads as the empty container (Go's nil slice or map).
  if (l === null && r !== undefined && r !== null && shapeOf(node, r).t !== 'atomic') l = Array.isArray(r) ? [] : {};
  if (r === null && l !== undefined && l !== null && shapeOf(node, l).t !== 'atomic') r = Array.isArray(l) ? [] : {};
  const ls = l === undefined ? undefined : shapeOf(node, l);
  const rs = r === undefined ? undefined : shapeOf(node, r);
  const s = rs ?? ls!;
  if (s.t === 'atomic' || (ls && rs && ls.t !== rs.t)) {
    leaf(l, r, acc);
    return;
  }
  if (s.t === 'list') {
    const li = ls?.t === 'list' ? indexItems(s.node, ls.v) : new Map<string, unknown>();
    const ri = rs?.t === 'list' ? indexItems(s.node, rs.v) : new Map<string, unknown>();
    for (const [k, x] of li) item(x, ri.get(k), s.node.items, k, acc);
    for (const [k, x] of ri) if (!li.has(k)) item(undefined, x, s.node.items, k, acc);
    return;
  }
  const lv = ls && ls.t !== 'atomic' && ls.t !== 'list' ? ls.v : undefined;
  const rv = rs && rs.t !== 'atomic' && rs.t !== 'list' ? rs.v : undefined;
  // Own members only: a field named `constructor` or `toString` must not meet Object.prototype's.
  if (lv) {
    for (const k in lv) {
      const x = lv[k];
      if (x === undefined) continue;
      item(x, rv && Object.hasOwn(rv, k) ? rv[k] : undefined, childNode(s, k).node, `f:${k}`, acc);
    }
  }
  if (rv) {
    for (const k in rv) {
      const x = rv[k];
      if (x === undefined || (lv && Object.hasOwn(lv, k) && lv[k] !== undefined)) continue;
      item(undefined, x, childNode(s, k).node, `f:${k}`, acc);
    }
  }
}

/**
 * What walking an unchanged value would do: compute the keys of its keyed
 * list items, in the walk's order (a list's items, then into each), so the
 * same ItemKeyError is thrown first.
 */
function checkKeys(v: unknown, node: Node | undefined): void {
  if (!mayThrow(node)) return;
  const s = shapeOf(node, v);
  if (s.t === 'atomic') return;
  if (s.t === 'list') {
    if (!mayThrow(s.node.items) && s.node.keys.length === 0) return;
    // Keys are only checked, not built (an equal list's keys are never used); items of a
    // repeated key are all looked into, where the walk would see the last one only.
    for (let i = 0; i < s.v.length; i++) checkItemKey(s.node, s.v[i], i);
    for (const x of s.v) checkKeys(x, s.node.items);
    return;
  }
  for (const k in s.v) {
    const x = s.v[k];
    if (x === undefined) continue;
    checkKeys(x, childNode(s, k).node);
  }
}

/** Whether walking a value of `node` may meet an associative list with keys (whose items may lack them: ItemKeyError). */
const throwing = new WeakMap<object, boolean>();

function mayThrow(node: Node | undefined): boolean {
  if (!node) return false;
  const hit = throwing.get(node);
  if (hit !== undefined) return hit;
  throwing.set(node, true); // recursive schemas: assume the worst while looking
  let r = false;
  switch (node.kind) {
    case 'struct':
      if (!node.atomic)
        for (const f of node.fields.values())
          if (mayThrow(f.node)) {
            r = true;
            break;
          }
      break;
    case 'map':
      r = !node.atomic && mayThrow(node.values);
      break;
    case 'list':
      r = node.listType !== 'atomic' && (node.keys.length > 0 || mayThrow(node.items));
      break;
    default:
      r = false;
  }
  throwing.set(node, r);
  return r;
}
