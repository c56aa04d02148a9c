// Object → field set, as structured-merge-diff's ToFieldSet: leaves, list
// items, map keys, atomic values, nulls and empty objects are members; a
// struct field that holds children is not (its children are).
import type { Node } from '../schema/model.js';
import { freeze, type Builder, type FieldSet } from './set.js';
import { childNode, itemKey, shapeOf } from './shape.js';

export function toFieldSet(v: unknown, node: Node | undefined): FieldSet {
  const root: Builder = { member: false };
  fill(root, v, node);
  root.member = false;
  return freeze(root);
}

function isEmptyObject(v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  for (const k in v) if ((v as Record<string, unknown>)[k] !== undefined) return false;
  return true;
}

function fill(n: Builder, v: unknown, node: Node | undefined): void {
  const s = shapeOf(node, v);
  switch (s.t) {
    case 'atomic':
      n.member = true;
      return;
    case 'struct':
    case 'map':
      for (const k in s.v) {
        const x = s.v[k];
        if (x === undefined) continue;
        const { node: cn, named } = childNode(s, k);
        const c: Builder = { member: false };
        fill(c, x, cn);
        if (!named || x === null || isEmptyObject(x)) c.member = true;
        if (c.member || c.children) (n.children ??= new Map()).set(`f:${k}`, c);
      }
      return;
    case 'list':
      for (let i = 0; i < s.v.length; i++) {
        const c: Builder = { member: false };
        fill(c, s.v[i], s.node.items);
        c.member = true;
        (n.children ??= new Map()).set(itemKey(s.node, s.v[i], i), c);
      }
  }
}

/** structured-merge-diff's EnsureNamedFieldsAreMembers: struct fields with children become members. */
export function ensureNamedFieldsAreMembers(s: FieldSet, node: Node | undefined): FieldSet {
  if (!s.children || s.children.size === 0 || !node) return s;
  const out = new Map<string, FieldSet>();
  for (const [k, c] of s.children) {
    let cn: Node | undefined;
    let named = false;
    if (node.kind === 'struct' && k.startsWith('f:')) {
      const f = node.fields.get(k.slice(2));
      cn = f?.node;
      named = f !== undefined;
    } else if (node.kind === 'map' && k.startsWith('f:')) {
      cn = node.values;
    } else if (node.kind === 'list') {
      cn = node.items;
    }
    const x = ensureNamedFieldsAreMembers(c, cn);
    out.set(k, named && !x.member && x.children && x.children.size > 0 ? { member: true, children: x.children } : x);
  }
  return { member: s.member, children: out };
}
