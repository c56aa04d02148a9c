// kube's JSONPath grammar (k8s.io/client-go/util/jsonpath, parser.go) for one
// action — what a CRD's printer column, selectable field or scale path holds,
// parsed as kube parses `{` + path + `}`: fields (`.a`, `.a\.b`, `['a.b']`),
// `..` (every descendant), `*` and `[*]`, indexes and slices
// (`[n]`, `[start:end:step]`, negative counting from the end), unions
// (`[a,b]`), filters (`[?(@.x == "y")]`, `[?(@.x)]`) with kube's operators,
// and quoted text, numbers and booleans as literal operands. Anything else is
// refused with kube's parser error (`invalid array index (@.length-1)`): no
// script expression exists in this grammar, so none can be evaluated.

export type Node =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'wildcard' }
  | { readonly kind: 'recursive' }
  | { readonly kind: 'array'; readonly start?: number; readonly end?: number; readonly step?: number; readonly single: boolean }
  | { readonly kind: 'union'; readonly branches: readonly Path[] }
  | { readonly kind: 'filter'; readonly left: Path; readonly op: FilterOp; readonly right: Path }
  | { readonly kind: 'text'; readonly value: string }
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'bool'; readonly value: boolean };

export type Path = readonly Node[];
/** `==`, `!=`, `<`, `>`, `<=`, `>=`, `exists`; another run of `!<>=` parses and fails when evaluated, as in kube. */
export type FilterOp = string;

export class JsonPathError extends Error {}

const DICT_KEY = /^'([^']*)'$/;
const SLICE = /^(-?\d*)(:-?\d*)?(:-?\d*)?$/;
const FILTER = /^([^!<>=]+)([!<>=]+)(.+?)$/;

/** kube's isTerminator: what ends a field name. */
function isTerminator(c: string | undefined): boolean {
  return c === undefined || c === ' ' || c === '\t' || c === '\r' || c === '\n' || '.,[]$@{}'.includes(c);
}

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isAlnum = (c: string | undefined) => c !== undefined && /^[\p{L}\p{N}_]$/u.test(c);

/** Parses one action's inside (`.spec.list[0]`, without the braces). Throws JsonPathError with kube's words. */
export function parsePath(text: string): Path {
  const out: Node[] = [];
  let i = 0;
  const s = text;
  while (i < s.length) {
    const c = s[i]!;
    if (s.startsWith('[?(', i)) {
      i = parseFilter(s, i, out);
    } else if (s.startsWith('..', i)) {
      out.push({ kind: 'recursive' });
      i += 2;
      // kube's parseRecursive: a name right after `..` is a field (`..name`); anything else is parsed as it comes.
      if (isAlnum(s[i])) i = parseField(s, i, out);
    } else if (c === ' ' || c === '@' || c === '$') {
      i++;
    } else if (c === '[') {
      i = parseArray(s, i, out);
    } else if (c === '"' || c === "'") {
      i = parseQuote(s, i, c, out);
    } else if (c === '.') {
      i = parseField(s, i + 1, out);
    } else if (c === '+' || c === '-' || isDigit(c)) {
      let j = i + 1;
      while (j < s.length && (isDigit(s[j]) || s[j] === '.' || s[j] === 'e' || s[j] === 'E' || s[j] === '+' || s[j] === '-')) j++;
      const t = s.slice(i, j);
      if (/^[+-]?\d+$/.test(t)) out.push({ kind: 'int', value: Number.parseInt(t, 10) });
      else if (Number.isFinite(Number(t)) && /\d/.test(t)) out.push({ kind: 'float', value: Number(t) });
      else throw new JsonPathError(`cannot parse number ${t}`);
      i = j;
    } else if (isAlnum(c)) {
      let j = i;
      while (j < s.length && isAlnum(s[j])) j++;
      const t = s.slice(i, j);
      if (t === 'true' || t === 'false') out.push({ kind: 'bool', value: t === 'true' });
      else throw new JsonPathError(`unrecognized identifier ${t}`);
      i = j;
    } else {
      throw new JsonPathError(`unrecognized character in action: ${goRune(c)}`);
    }
  }
  return out;
}

/** A field name from `i` to the next terminator (a backslash escapes the character after it). */
function parseField(s: string, i: number, out: Node[]): number {
  let j = i;
  while (j < s.length && !isTerminator(s[j])) j += s[j] === '\\' && j + 1 < s.length ? 2 : 1;
  const name = s.slice(i, j);
  out.push(name === '*' ? { kind: 'wildcard' } : { kind: 'field', name: name.replace(/\\/g, '') });
  return j;
}

/** Go's %#U of a rune: U+0028 '('. */
function goRune(c: string): string {
  const cp = c.codePointAt(0)!;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')} '${c}'`;
}

function parseQuote(s: string, i: number, q: string, out: Node[]): number {
  let j = i + 1;
  while (j < s.length && s[j] !== q) j += s[j] === '\\' && j + 1 < s.length ? 2 : 1;
  if (j >= s.length) throw new JsonPathError('unterminated quoted string');
  let value = s.slice(i + 1, j);
  // strconv.Unquote for double quotes; single-quoted text is taken as it is.
  if (q === '"') {
    try {
      value = JSON.parse(`"${value}"`) as string;
    } catch {
      throw new JsonPathError(`unquote string "${value}" error: invalid syntax`);
    }
  }
  out.push({ kind: 'text', value });
  return j + 1;
}

function parseArray(s: string, i: number, out: Node[]): number {
  const close = s.indexOf(']', i);
  const nl = s.indexOf('\n', i);
  if (close < 0 || (nl >= 0 && nl < close)) throw new JsonPathError('unterminated array');
  let text = s.slice(i + 1, close);
  if (text === '*') text = ':';
  const parts = text.split(',');
  if (parts.length > 1) {
    out.push({ kind: 'union', branches: parts.map((p) => parsePath(`[${p.trim()}]`)) });
    return close + 1;
  }
  const key = DICT_KEY.exec(text);
  if (key) {
    out.push(...parsePath(`.${key[1]}`));
    return close + 1;
  }
  const m = SLICE.exec(text.replace(/ /g, ''));
  if (!m) throw new JsonPathError(`invalid array index ${text}`);
  const num = (t: string | undefined): number | undefined => {
    if (t === undefined || t === '') return undefined;
    const n = Number.parseInt(t, 10);
    if (!Number.isSafeInteger(n)) throw new JsonPathError(`array index ${t} is not a number`);
    return n;
  };
  const start = num(m[1]);
  const end = m[2] === undefined ? (start === undefined ? undefined : start + 1) : num(m[2].slice(1));
  const step = m[3] === undefined ? undefined : num(m[3].slice(1));
  out.push({
    kind: 'array',
    ...(start !== undefined ? { start } : {}),
    ...(end !== undefined ? { end } : {}),
    ...(step !== undefined ? { step } : {}),
    single: m[2] === undefined && start !== undefined,
  });
  return close + 1;
}

function parseFilter(s: string, i: number, out: Node[]): number {
  let j = i + 3;
  let begin = false;
  let end = false;
  let pair = '';
  for (;;) {
    const c = s[j];
    if (c === undefined || c === '\n') throw new JsonPathError('unterminated filter');
    j++;
    if (c === '"' || c === "'") {
      if (!begin) {
        begin = true;
        pair = c;
        continue;
      }
      if (s[j - 2] !== '\\' && c === pair) end = true;
    } else if (c === ')' && begin === end) break;
  }
  if (s[j] !== ']') throw new JsonPathError('unclosed array expect ]');
  const text = s.slice(i + 3, j - 1);
  const m = FILTER.exec(text);
  if (!m) out.push({ kind: 'filter', left: parsePath(text), op: 'exists', right: [] });
  else out.push({ kind: 'filter', left: parsePath(m[1]!), op: m[2]!, right: parsePath(m[3]!) });
  return j + 1;
}
