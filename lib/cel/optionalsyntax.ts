// CEL's optional syntax (cel-go's optional library, which kube enables):
// `a.?f`, `a[?i]`, `[?x, y]` and `{?k: v}`. @bufbuild/cel's parser refuses the
// `?` of each, so the `?` is blanked (the same length: every position the
// parser records stays the source's), the text parsed, and the nodes at the
// blanked places rewritten into calls of this module's functions, whose names
// no source can spell: `@optSelect(a, 'f')`, `@optIndex(a, i)`,
// `@optList([x, y], '10')`, `@optMap([k, v], '1')`. Optional values are
// optional.ts's (an absent optional a marked map, a present one its value).
import { celFunc, celMethod, CelScalar, isCelList, isCelMap, parse, type CelFunc, type CelInput, type CelValue } from '@bufbuild/cel';
import { forEachChild, maxId } from './ast.js';
import { isNone, none } from './optional.js';

type Parsed = ReturnType<typeof parse>;
type Expr = Parsed['expr'];

export const OPT_SELECT = '@optSelect';
export const OPT_INDEX = '@optIndex';
export const OPT_LIST = '@optList';
export const OPT_MAP = '@optMap';

interface Marks {
  /** Offsets of the `.` of each `.?`. */
  readonly selects: Set<number>;
  /** Offsets of the `[` of each `[?` (an index, or a list literal's first element), and each literal's optional elements. */
  readonly brackets: Map<number, number[]>;
}

/** Skips a string or bytes literal starting at `i` (at its quote); returns the index after it. */
function skipString(src: string, i: number): number {
  const q = src[i]!;
  const raw = i > 0 && /[rR]/.test(src[i - 1]!) && (i < 2 || !/[A-Za-z0-9_]/.test(src[i - 2]!));
  const triple = src.startsWith(q.repeat(3), i);
  const close = triple ? q.repeat(3) : q;
  let j = i + close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') j += 2;
    else if (src.startsWith(close, j)) return j + close.length;
    else j++;
  }
  return j;
}

/**
 * Finds the optional markers outside string literals and blanks them: a `?`
 * whose previous token is `.`, `[`, `{` or `,` (after an expression, a `?` is
 * the conditional operator). Returns undefined when there is none.
 */
function blankMarks(src: string): { text: string; marks: Marks } | undefined {
  if (!src.includes('?')) return undefined;
  const chars = src.split('');
  const marks: Marks = { selects: new Set(), brackets: new Map() };
  // Open brackets: their offset, kind and the index of the element being read.
  const open: Array<{ at: number; kind: string; element: number; optional: number[] }> = [];
  let prev = -1; // offset of the previous significant character
  let found = false;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '"' || c === "'") {
      i = skipString(src, i) - 1;
      prev = i;
      continue;
    }
    if (/\s/.test(c)) continue;
    const top = open[open.length - 1];
    if (c === '?' && prev >= 0 && '.[{,'.includes(src[prev]!)) {
      const before = src[prev]!;
      found = true;
      chars[i] = ' ';
      if (before === '.') marks.selects.add(prev);
      else if (top && (top.kind === '[' || top.kind === '{')) top.optional.push(top.element);
      continue; // the `?` is not the previous token of what follows
    }
    if (c === '(' || c === '[' || c === '{') open.push({ at: i, kind: c, element: 0, optional: [] });
    else if (c === ')' || c === ']' || c === '}') {
      const done = open.pop();
      if (done && done.optional.length > 0) marks.brackets.set(done.at, done.optional);
    } else if (c === ',' && top) top.element++;
    prev = i;
  }
  return found ? { text: chars.join(''), marks } : undefined;
}

/**
 * Parses `expression` with CEL's optional syntax; throws the parser's error
 * (the positions are the source's). Without a `?` marker it is `parse` itself.
 */
export function parseWithOptionals(expression: string): Parsed {
  const blanked = blankMarks(expression);
  if (!blanked) return parse(expression);
  const parsed = parse(blanked.text);
  const positions = (parsed.sourceInfo?.positions ?? {}) as Record<string, number>;
  let nextId = maxId(parsed.expr) + 1n;
  const fresh = (at: number): bigint => {
    const id = nextId++;
    positions[String(id)] = at;
    return id;
  };
  const rewrite = (e: Expr): void => {
    forEachChild(e, rewrite);
    const at = positions[String(e.id)];
    if (at === undefined) return;
    const k = e.exprKind;
    if (k.case === 'selectExpr' && !k.value.testOnly && blanked.marks.selects.has(at)) {
      const operand = k.value.operand!;
      const field = constant(fresh(at), k.value.field);
      e.exprKind = { case: 'callExpr', value: { ...callShell(), function: OPT_SELECT, args: [operand, field] } };
      return;
    }
    const optional = blanked.marks.brackets.get(at);
    if (!optional) return;
    if (k.case === 'callExpr' && k.value.function === '_[_]' && !k.value.target) {
      k.value.function = OPT_INDEX;
      // `a[?i, …]` is no index; `[?x]` after an expression is the index's own marker.
    } else if (k.case === 'listExpr') {
      const list = { ...e, id: fresh(at) } as Expr;
      e.exprKind = {
        case: 'callExpr',
        value: { ...callShell(), function: OPT_LIST, args: [list, constant(fresh(at), flags(k.value.elements.length, optional))] },
      };
    } else if (k.case === 'structExpr' && k.value.messageName === '') {
      const entries = k.value.entries;
      const flat = entries.flatMap((en) => (en.keyKind.case === 'mapKey' ? [en.keyKind.value, en.value!] : []));
      const list = { ...e, id: fresh(at), exprKind: { case: 'listExpr', value: { ...listShell(), elements: flat } } } as Expr;
      e.exprKind = { case: 'callExpr', value: { ...callShell(), function: OPT_MAP, args: [list, constant(fresh(at), flags(entries.length, optional))] } };
    }
  };
  rewrite(parsed.expr);
  return parsed;
}

const flags = (n: number, optional: readonly number[]) => Array.from({ length: n }, (_, i) => (optional.includes(i) ? '1' : '0')).join('');

/** The generated message shapes, copied from a parsed template (the parser's own objects). */
let shells: { call: unknown; list: unknown; constant: Expr } | undefined;
function templates() {
  if (!shells) {
    const c = parse('f(1)').expr;
    const l = parse('[]').expr;
    const s = parse("'s'").expr;
    shells = { call: c.exprKind.value, list: l.exprKind.value, constant: s };
  }
  return shells;
}
function callShell(): Extract<Expr['exprKind'], { case: 'callExpr' }>['value'] {
  const t = templates().call as Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];
  return { ...t, target: undefined, args: [], function: '' };
}
function listShell(): Extract<Expr['exprKind'], { case: 'listExpr' }>['value'] {
  const t = templates().list as Extract<Expr['exprKind'], { case: 'listExpr' }>['value'];
  return { ...t, elements: [], optionalIndices: [] };
}
function constant(id: bigint, s: string): Expr {
  const t = templates().constant;
  const k = t.exprKind as Extract<Expr['exprKind'], { case: 'constExpr' }>;
  return { ...t, id, exprKind: { case: 'constExpr', value: { ...k.value, constantKind: { case: 'stringValue', value: s } } } } as Expr;
}

/** A map's or an object's member, or a list's element, as an optional. */
function member(container: CelValue, key: CelValue): CelInput {
  if (isNone(container)) return none();
  if (isCelMap(container)) {
    const k = key as string | bigint | boolean;
    return container.has(k) ? (container.get(k) as CelInput) : none();
  }
  if (isCelList(container) && typeof key === 'bigint') {
    return key >= 0n && key < BigInt(container.size) ? (container.get(Number(key)) as CelInput) : none();
  }
  throw new Error(`no such key: ${String(key)}`);
}

export const optionalSyntaxFunctions: readonly CelFunc[] = [
  celFunc(OPT_SELECT, [CelScalar.DYN, CelScalar.STRING], CelScalar.DYN, member),
  celFunc(OPT_INDEX, [CelScalar.DYN, CelScalar.DYN], CelScalar.DYN, member),
  celFunc(OPT_LIST, [CelScalar.DYN, CelScalar.STRING], CelScalar.DYN, (list, f) => {
    const out: CelInput[] = [];
    let i = 0;
    for (const v of list as Iterable<CelValue>) {
      if (f[i++] !== '1') out.push(v as CelInput);
      else if (!isNone(v)) out.push(v as CelInput);
    }
    return out;
  }),
  celFunc(OPT_MAP, [CelScalar.DYN, CelScalar.STRING], CelScalar.DYN, (flat, f) => {
    const out = new Map<string | bigint | boolean, CelInput>();
    const items = [...(flat as Iterable<CelValue>)];
    for (let i = 0; i < f.length; i++) {
      const k = items[2 * i] as string | bigint | boolean;
      const v = items[2 * i + 1]!;
      if (f[i] === '1' && isNone(v)) continue;
      if (out.has(k)) throw new Error(`Failed with repeated key: ${String(k)}`);
      out.set(k, v as CelInput);
    }
    return out;
  }),
  celFunc('optional.of', [CelScalar.DYN], CelScalar.DYN, (v) => v as CelInput),
  celFunc('optional.none', [], CelScalar.DYN, () => none()),
  celMethod('or', CelScalar.DYN, [CelScalar.DYN], CelScalar.DYN, function (this: CelValue, other: CelValue) {
    return (isNone(this) ? other : this) as CelInput;
  }),
  celFunc('optional.ofNonZeroValue', [CelScalar.DYN], CelScalar.DYN, (v) => (isZero(v) ? none() : (v as CelInput))),
];

/** CEL's zero values (ofNonZeroValue): false, 0, 0u, 0.0, '', b'', [], {}, null. */
function isZero(v: CelValue): boolean {
  if (v === null || v === false || v === '' || v === 0 || v === 0n) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (isCelList(v) || isCelMap(v)) return v.size === 0;
  return typeof v === 'object' && v !== null && 'value' in v && (v as { value: unknown }).value === 0n;
}
