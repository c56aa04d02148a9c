// Field sets: the trees of paths server-side apply reasons about, in the
// FieldsV1 form Kubernetes stores. A node is a path; `member` says the path
// itself is in the set (FieldsV1 `.`, or a leaf `{}`), children are keyed by
// encoded path elements: `f:<field>`, `k:{"key":value,…}`, `v:<json>`, `i:<n>`.
// Sets are immutable once built: operations share untouched subtrees.

export interface FieldSet {
  readonly member: boolean;
  readonly children?: ReadonlyMap<string, FieldSet>;
}

export const EMPTY: FieldSet = Object.freeze({ member: false });
const LEAF: FieldSet = Object.freeze({ member: true });

/** A mutable node, used while a set is being built. */
export interface Builder {
  member: boolean;
  children?: Map<string, Builder>;
}

export function isEmpty(s: FieldSet): boolean {
  return !s.member && !(s.children && s.children.size > 0);
}

function make(member: boolean, children: Map<string, FieldSet> | undefined): FieldSet {
  if (children && children.size > 0) return { member, children };
  return member ? LEAF : EMPTY;
}

/** Inserts `path` as a member of a builder tree. */
export function insert(root: Builder, path: readonly string[]): void {
  let n = root;
  for (const pe of path) {
    n.children ??= new Map();
    let c = n.children.get(pe);
    if (!c) {
      c = { member: false };
      n.children.set(pe, c);
    }
    n = c;
  }
  n.member = true;
}

export function union(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(a)) return b;
  if (isEmpty(b)) return a;
  const out = new Map(a.children ?? []);
  for (const [k, c] of b.children ?? []) {
    const x = out.get(k);
    out.set(k, x ? union(x, c) : c);
  }
  return make(a.member || b.member, out);
}

export function difference(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(b) || isEmpty(a)) return a;
  const out = new Map<string, FieldSet>();
  for (const [k, c] of a.children ?? []) {
    const x = b.children?.get(k);
    const d = x ? difference(c, x) : c;
    if (!isEmpty(d)) out.set(k, d);
  }
  return make(a.member && !b.member, out);
}

export function intersection(a: FieldSet, b: FieldSet): FieldSet {
  if (isEmpty(a) || isEmpty(b)) return EMPTY;
  const out = new Map<string, FieldSet>();
  for (const [k, c] of a.children ?? []) {
    const x = b.children?.get(k);
    if (!x) continue;
    const i = intersection(c, x);
    if (!isEmpty(i)) out.set(k, i);
  }
  return make(a.member && b.member, out);
}

export function equal(a: FieldSet, b: FieldSet): boolean {
  if (a === b) return true;
  if (a.member !== b.member) return false;
  const ac = a.children?.size ?? 0;
  if (ac !== (b.children?.size ?? 0)) return false;
  for (const [k, c] of a.children ?? []) {
    const x = b.children!.get(k);
    if (!x || !equal(c, x)) return false;
  }
  return true;
}

/**
 * `s` with every subtree equal to `hint`'s same subtree replaced by the
 * hint's: an equal set, sharing what it can (toFieldsV1's cache, cheap
 * equality and unions across writes). `s` itself when nothing is shared.
 */
export function share(s: FieldSet, hint: FieldSet | undefined): FieldSet {
  if (!hint || s === hint) return s;
  const sc = s.children;
  const hc = hint.children;
  if (!sc || sc.size === 0) return !hc || hc.size === 0 ? (s.member === hint.member ? hint : s) : s;
  if (!hc || hc.size === 0) return s;
  let out: Map<string, FieldSet> | undefined;
  let all = s.member === hint.member && sc.size === hc.size;
  for (const [k, c] of sc) {
    const h = hc.get(k);
    const x = h ? share(c, h) : c;
    if (x !== h) all = false;
    if (x !== c) (out ??= new Map(sc)).set(k, x);
  }
  if (all) return hint;
  return out ? { member: s.member, children: out } : s;
}

/** A builder tree as an immutable set (empty branches dropped). */
export function freeze(b: Builder): FieldSet {
  if (!b.children || b.children.size === 0) return b.member ? LEAF : EMPTY;
  const out = new Map<string, FieldSet>();
  for (const [k, c] of b.children) {
    const f = freeze(c);
    if (!isEmpty(f)) out.set(k, f);
  }
  return make(b.member, out);
}

/** Removes exact member paths (children stay): kube's Set.Difference with single paths. */
export function withoutMembers(s: FieldSet, paths: readonly (readonly string[])[]): FieldSet {
  const b: Builder = { member: false };
  for (const p of paths) insert(b, p);
  return difference(s, freeze(b));
}

/** Every member path, depth first in encoded order. */
export function members(s: FieldSet, prefix: string[] = [], out: string[][] = []): string[][] {
  if (s.member && prefix.length > 0) out.push([...prefix]);
  for (const k of sortedKeys(s)) {
    prefix.push(k);
    members(s.children!.get(k)!, prefix, out);
    prefix.pop();
  }
  return out;
}

const KIND_ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** structured-merge-diff's order: fields, then keys, values, indexes. */
export function comparePathElements(a: string, b: string): number {
  const ka = KIND_ORDER[a[0]!] ?? 4;
  const kb = KIND_ORDER[b[0]!] ?? 4;
  if (ka !== kb) return ka - kb;
  if (ka === 3) return Number(a.slice(2)) - Number(b.slice(2));
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedKeys(s: FieldSet): string[] {
  return s.children ? [...s.children.keys()].sort(comparePathElements) : [];
}

/** Encoded subtrees: sets share untouched subtrees, so a write re-encodes only what changed. Read-only results. */
const encoded = new WeakMap<FieldSet, Record<string, unknown>>();

/** The FieldsV1 JSON form of a set (shared, read-only: stored objects are never mutated). */
export function toFieldsV1(s: FieldSet): Record<string, unknown> {
  const hit = encoded.get(s);
  if (hit) return hit;
  const out: Record<string, unknown> = {};
  if (s.member && s.children && s.children.size > 0) out['.'] = {};
  for (const k of sortedKeys(s)) out[k] = toFieldsV1(s.children!.get(k)!);
  if (s.children && s.children.size > 0) encoded.set(s, out);
  return out;
}

/**
 * Takes `v` as the encoding of `s` (toFieldsV1's cache), subtree by subtree:
 * a set parsed from FieldsV1 this process wrote in toFieldsV1's very form
 * then re-encodes nothing it did not change. `v` must be that form: `.`
 * exactly on members with children, keys in path element order.
 */
export function adoptEncoding(s: FieldSet, v: Record<string, unknown>): void {
  if (!s.children || s.children.size === 0 || encoded.has(s)) return;
  encoded.set(s, v);
  for (const [k, c] of s.children) adoptEncoding(c, v[k] as Record<string, unknown>);
}

export class FieldsV1Error extends Error {}

/** `f`, `k`, `v`, `i`. */
const isPrefix = (c: number): boolean => c === 102 || c === 107 || c === 118 || c === 105;

/**
 * Parses FieldsV1; throws FieldsV1Error when it is not a field set. `hint`,
 * a set this FieldsV1 probably encodes (the owner's set at the last write),
 * is returned, or its subtrees are, wherever the FieldsV1 matches it exactly:
 * the result equals the plain parse, and shares subtrees with the hint (so
 * toFieldsV1's cache and set operations' sharing keep working across writes).
 */
export function fromFieldsV1(v: unknown, depth = 0, hint?: FieldSet): FieldSet {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new FieldsV1Error('a FieldsV1 node must be an object');
  if (depth > 64) throw new FieldsV1Error('FieldsV1 nests too deeply');
  let member = false;
  let children: Map<string, FieldSet> | undefined;
  const hc = hint?.children;
  // While every child so far is the hint's own child, no map is built.
  let same = hc !== undefined;
  let n = 0;
  for (const k in v) {
    const c = (v as Record<string, unknown>)[k];
    if (k === '.') {
      member = true;
      continue;
    }
    if (k.charCodeAt(1) !== 58 || !isPrefix(k.charCodeAt(0))) throw new FieldsV1Error(`unknown FieldsV1 key ${JSON.stringify(k)}`);
    const h = hc?.get(k);
    const x = fromFieldsV1(c, depth + 1, h);
    if (same && x !== h) {
      same = false;
      children = hintPrefix(v, hc!, n);
    }
    if (!same) (children ??= new Map()).set(k, x);
    n++;
  }
  if (n === 0) return LEAF;
  if (same) {
    if (n === hc!.size && member === hint!.member) return hint!;
    children = hintPrefix(v, hc!, n);
  }
  return make(member, children);
}

/** The first `n` children of `v` (all matched the hint's), as a map in `v`'s order. */
function hintPrefix(v: object, hc: ReadonlyMap<string, FieldSet>, n: number): Map<string, FieldSet> {
  const out = new Map<string, FieldSet>();
  if (n === 0) return out;
  for (const k in v) {
    if (k === '.') continue;
    out.set(k, hc.get(k)!);
    if (out.size === n) break;
  }
  return out;
}

/** `.spec.containers[name="a"].image`: a path as structured-merge-diff prints it. */
export function pathString(path: readonly string[]): string {
  let s = '';
  for (const pe of path) {
    const body = pe.slice(2);
    switch (pe[0]) {
      case 'f':
        s += `.${body}`;
        break;
      case 'k': {
        const key = JSON.parse(body) as Record<string, unknown>;
        s += `[${Object.keys(key)
          .sort()
          .map((n) => `${n}=${JSON.stringify(key[n])}`)
          .join(',')}]`;
        break;
      }
      case 'v':
        s += `[=${body}]`;
        break;
      default:
        s += `[${body}]`;
    }
  }
  return s;
}
