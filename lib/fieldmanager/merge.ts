// The two value operations of apply: merging an applied configuration into
// the live object (structured-merge-diff's Merge: granular parts merge,
// atomic parts are replaced, list items keep the applier's order with items
// only the live object has kept in place), and removing the items of a set.
// Both return new values and share untouched subtrees with their inputs.
import type { Node } from '../schema/model.js';
import type { FieldSet } from './set.js';
import { childNode, indexItems, itemKey, shapeOf, type Shape } from './shape.js';
import { ownValue, setOwn } from '../api/own.js';

export function merge(lhs: unknown, rhs: unknown, node: Node | undefined): unknown {
  if (rhs === undefined) return lhs;
  if (lhs === undefined || lhs === null || rhs === null) return rhs;
  const ls = shapeOf(node, lhs);
  const rs = shapeOf(node, rhs);
  if (rs.t === 'atomic' || ls.t !== rs.t) return rhs;
  if (rs.t === 'list' && ls.t === 'list') return mergeList(ls, rs, rs.node.items);
  const out: Record<string, unknown> = { ...(ls as { v: Record<string, unknown> }).v };
  const rv = (rs as { v: Record<string, unknown> }).v;
  for (const k of Object.keys(rv)) {
    if (rv[k] === undefined) continue;
    setOwn(out, k, merge(ownValue(out, k), rv[k], childNode(rs, k).node));
  }
  return out;
}

function mergeList(ls: Shape & { t: 'list' }, rs: Shape & { t: 'list' }, items: Node): unknown[] {
  const lKeys = ls.v.map((x, i) => itemKey(ls.node, x, i));
  const rKeys = rs.v.map((x, i) => itemKey(rs.node, x, i));
  const lIndex = new Map(lKeys.map((k, i) => [k, ls.v[i]]));
  const rIndex = indexItems(rs.node, rs.v);
  const out: unknown[] = [];
  const done = new Set<string>();
  const emit = (k: string) => {
    if (done.has(k)) return;
    done.add(k);
    out.push(rIndex.has(k) ? merge(lIndex.get(k), rIndex.get(k), items) : lIndex.get(k));
  };
  let l = 0;
  let r = 0;
  while (l < lKeys.length || r < rKeys.length) {
    if (l < lKeys.length && done.has(lKeys[l]!)) {
      l++;
      continue;
    }
    if (r < rKeys.length && done.has(rKeys[r]!)) {
      r++;
      continue;
    }
    if (l < lKeys.length && r < rKeys.length) {
      const lk = lKeys[l]!;
      if (rIndex.has(lk)) {
        emit(rKeys[r++]!);
        continue;
      }
      emit(lk);
      l++;
      continue;
    }
    if (l < lKeys.length) emit(lKeys[l++]!);
    else emit(rKeys[r++]!);
  }
  return out;
}

/** The value without the member paths of `set` (a removed path takes its subtree). */
export function removeItems(v: unknown, set: FieldSet, node: Node | undefined): unknown {
  if (!set.children || set.children.size === 0) return v;
  const s = shapeOf(node, v);
  if (s.t === 'atomic') return v;
  if (s.t === 'list') {
    const out: unknown[] = [];
    for (let i = 0; i < s.v.length; i++) {
      const c = set.children.get(itemKey(s.node, s.v[i], i));
      if (!c) out.push(s.v[i]);
      else if (!c.member) out.push(removeItems(s.v[i], c, s.node.items));
    }
    return out;
  }
  const out: Record<string, unknown> = { ...s.v };
  for (const [pe, c] of set.children) {
    if (!pe.startsWith('f:')) continue;
    const k = pe.slice(2);
    const x = ownValue(out, k);
    if (x === undefined) continue;
    if (c.member) delete out[k];
    else setOwn(out, k, removeItems(x, c, childNode(s, k).node));
  }
  return out;
}
