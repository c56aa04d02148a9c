// Label and field selectors, parsed as apimachinery parses them (same grammar,
// same error wording, so clients see the messages kube-apiserver would give)
// and compiled once into a predicate: list and watch filters run per object.
import { isQualifiedName, isValidLabelValue } from '../registry/names.js';
import { goJson } from './json.js';

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated when parsed from a string, as apimachinery's sets.String does. */
  readonly values: readonly string[];
}

export type Labels = Readonly<Record<string, string>>;

export interface LabelSelector {
  /** Sorted by key; empty = matches everything. */
  readonly requirements: readonly LabelRequirement[];
  /** Precompiled predicate; prefer matchesLabels(). */
  readonly matches: (labels: Labels) => boolean;
}

export interface FieldRequirement {
  readonly field: string;
  /** `==` is folded into `=`, as apimachinery's field selectors do. */
  readonly operator: '=' | '!=';
  readonly value: string;
}

export function matchesLabels(sel: LabelSelector, labels: Labels | undefined): boolean {
  return sel.matches(labels ?? EMPTY_LABELS);
}

const EMPTY_LABELS: Labels = Object.freeze({});
const everything = (): boolean => true;
export const EVERYTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]), matches: everything });
/** What a nil metav1.LabelSelector means: match nothing. */
export const NOTHING: LabelSelector = Object.freeze({ requirements: Object.freeze([]), matches: () => false });

// ---- validation: kube's validators live in lib/registry/names.ts ----

/** field.Invalid(path, value, detail).Error(); Go's %q for strings, %#v for []string. */
function invalid(path: string, value: string | readonly string[], detail: string): string {
  const shown = typeof value === 'string' ? JSON.stringify(value) : `[]string{${value.map((v) => JSON.stringify(v)).join(', ')}}`;
  return `${path}: Invalid value: ${shown}: ${detail}`;
}

/** utilerrors.NewAggregate(...).Error(): one message alone, several as `[a, b]`, duplicates dropped. */
function aggregate(errs: string[]): string {
  const unique = [...new Set(errs)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

const INT64 = /^[+-]?[0-9]+$/;
function parseInt64(s: string): bigint | undefined {
  if (!INT64.test(s)) return undefined;
  const n = BigInt(s);
  return n >= -(2n ** 63n) && n < 2n ** 63n ? n : undefined;
}

/** labels.NewRequirement: validates, and returns the aggregated error text or the requirement. */
function newRequirement(key: string, operator: LabelOperator, values: readonly string[], root: string): LabelRequirement {
  const at = (child: string): string => (root === '' ? child : `${root}.${child}`);
  const errs: string[] = [];
  const keyErrs = isQualifiedName(key);
  if (keyErrs.length) errs.push(invalid(at('key'), key, keyErrs.join('; ')));
  switch (operator) {
    case 'in':
    case 'notin':
      if (values.length === 0) errs.push(invalid(at('values'), values, "for 'in', 'notin' operators, values set can't be empty"));
      break;
    case '=':
    case '==':
    case '!=':
      if (values.length !== 1) errs.push(invalid(at('values'), values, 'exact-match compatibility requires one single value'));
      break;
    case 'exists':
    case '!':
      if (values.length !== 0) errs.push(invalid(at('values'), values, 'values set must be empty for exists and does not exist'));
      break;
    case 'gt':
    case 'lt':
      if (values.length !== 1) errs.push(invalid(at('values'), values, "for 'Gt', 'Lt' operators, exactly one value is required"));
      values.forEach((v, i) => {
        if (parseInt64(v) === undefined) errs.push(invalid(`${at('values')}[${i}]`, v, "for 'Gt', 'Lt' operators, the value must be an integer"));
      });
      break;
  }
  values.forEach((v, i) => {
    const e = isValidLabelValue(v);
    if (e.length) errs.push(invalid(`${at('values')}[${i}][${key}]`, v, e.join('; ')));
  });
  if (errs.length) throw new Error(aggregate(errs));
  return Object.freeze({ key, operator, values: Object.freeze([...values]) });
}

// ---- compiling ----

function compileRequirement(r: LabelRequirement): (labels: Labels) => boolean {
  const { key } = r;
  // Own properties only: a label named "constructor" must not find Object.prototype's.
  const has = (l: Labels): boolean => Object.hasOwn(l, key);
  switch (r.operator) {
    case 'exists':
      return has;
    case '!':
      return (l) => !has(l);
    case 'in':
    case '=':
    case '==': {
      if (r.values.length === 1) {
        const v = r.values[0];
        return (l) => has(l) && l[key] === v;
      }
      const set = new Set(r.values);
      return (l) => has(l) && set.has(l[key]!);
    }
    case 'notin':
    case '!=': {
      if (r.values.length === 1) {
        const v = r.values[0];
        return (l) => !has(l) || l[key] !== v;
      }
      const set = new Set(r.values);
      return (l) => !has(l) || !set.has(l[key]!);
    }
    case 'gt':
    case 'lt': {
      const bound = parseInt64(r.values[0]!)!;
      const gt = r.operator === 'gt';
      return (l) => {
        if (!has(l)) return false;
        const n = parseInt64(l[key]!);
        return n !== undefined && (gt ? n > bound : n < bound);
      };
    }
  }
}

export function compileLabelSelector(requirements: readonly LabelRequirement[]): LabelSelector {
  if (requirements.length === 0) return EVERYTHING;
  const sorted = Object.freeze([...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  const tests = sorted.map(compileRequirement);
  const matches =
    tests.length === 1
      ? tests[0]!
      : (l: Labels): boolean => {
          for (const t of tests) if (!t(l)) return false;
          return true;
        };
  return Object.freeze({ requirements: sorted, matches });
}

// ---- label selector strings (k8s.io/apimachinery/pkg/labels.Parse) ----

type Tok = 'end' | 'id' | '(' | ')' | ',' | '!' | '==' | '=' | '!=' | '>' | '<' | 'in' | 'notin';
interface Item {
  tok: Tok;
  lit: string;
}
const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const SYMBOLS: ReadonlySet<string> = new Set(['(', ')', ',', '!', '==', '=', '!=', '>', '<']);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function lex(s: string): Item[] {
  const items: Item[] = [];
  let i = 0;
  for (;;) {
    while (i < s.length && isSpace(s[i]!)) i++;
    if (i >= s.length) {
      items.push({ tok: 'end', lit: '' });
      return items;
    }
    if (SPECIAL.has(s[i]!)) {
      // Longest run of symbol characters that is still a token (`!=` over `!`, `==` over `=`).
      let lit = s[i++]!;
      while (i < s.length && SPECIAL.has(s[i]!) && SYMBOLS.has(lit + s[i]!)) lit += s[i++]!;
      items.push({ tok: lit as Tok, lit });
      continue;
    }
    const start = i;
    while (i < s.length && !SPECIAL.has(s[i]!) && !isSpace(s[i]!)) i++;
    const lit = s.slice(start, i);
    items.push({ tok: lit === 'in' || lit === 'notin' ? lit : 'id', lit });
  }
}

class LabelParser {
  private pos = 0;
  constructor(private readonly items: Item[]) {}

  /** In value position the keywords `in`/`notin` are ordinary identifiers (`x in (in)`). */
  private peek(values = true): Item {
    const it = this.items[this.pos]!;
    return values && (it.tok === 'in' || it.tok === 'notin') ? { tok: 'id', lit: it.lit } : it;
  }
  private next(values = true): Item {
    const it = this.peek(values);
    this.pos++;
    return it;
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.peek();
      if (tok === 'end') return reqs;
      if (tok !== 'id' && tok !== '!') throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
      try {
        reqs.push(this.requirement());
      } catch (err) {
        throw new Error(`unable to parse requirement: ${(err as Error).message}`);
      }
      const t = this.next();
      if (t.tok === 'end') return reqs;
      if (t.tok !== ',') throw new Error(`found '${t.lit}', expected: ',' or 'end of string'`);
      const t2 = this.peek();
      if (t2.tok !== 'id' && t2.tok !== '!') throw new Error(`found '${t2.lit}', expected: identifier after ','`);
    }
  }

  private requirement(): LabelRequirement {
    let t = this.next();
    const negated = t.tok === '!';
    if (negated) t = this.next();
    if (t.tok !== 'id') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    const keyErrs = isQualifiedName(key);
    if (keyErrs.length) throw new Error(invalid('<nil>', key, keyErrs.join('; ')));
    const after = this.peek().tok;
    if (negated) return newRequirement(key, '!', [], '');
    if (after === 'end' || after === ',') return newRequirement(key, 'exists', [], '');
    const op = this.operator();
    const values = op === 'in' || op === 'notin' ? this.valueSet() : [this.exactValue()];
    return newRequirement(key, op, [...new Set(values)].sort(), '');
  }

  private operator(): LabelOperator {
    const { tok, lit } = this.next(false);
    switch (tok) {
      case 'in':
      case 'notin':
      case '=':
      case '==':
      case '!=':
        return tok;
      case '>':
        return 'gt';
      case '<':
        return 'lt';
      default:
        throw new Error(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
  }

  private valueSet(): string[] {
    const open = this.next();
    if (open.tok !== '(') throw new Error(`found '${open.lit}' expected: '('`);
    const first = this.peek();
    if (first.tok === ')') {
      this.next();
      return [''];
    }
    if (first.tok !== 'id' && first.tok !== ',') throw new Error(`found '${first.lit}', expected: ',', ')' or identifier`);
    const values: string[] = [];
    for (;;) {
      const t = this.next();
      if (t.tok === 'id') {
        values.push(t.lit);
        const t2 = this.peek();
        if (t2.tok === ',') continue;
        if (t2.tok === ')') break;
        throw new Error(`found '${t2.lit}', expected: ',' or ')'`);
      } else if (t.tok === ',') {
        // Empty members: `(,a)`, `(a,)`, `(a,,b)` all contain "".
        if (values.length === 0) values.push('');
        const t2 = this.peek().tok;
        if (t2 === ')') {
          values.push('');
          break;
        }
        if (t2 === ',') {
          this.next();
          values.push('');
        }
      } else {
        throw new Error(`found '${t.lit}', expected: ',', or identifier`);
      }
    }
    const close = this.next();
    if (close.tok !== ')') throw new Error(`found '${first.lit}', expected: ')'`);
    return values;
  }

  private exactValue(): string {
    const t = this.peek().tok;
    if (t === 'end' || t === ',') return '';
    const v = this.next();
    if (v.tok !== 'id') throw new Error(`found '${v.lit}', expected: identifier`);
    return v.lit;
  }
}

/** Parses `a=b,c in (x,y),!d`; throws an Error worded as apimachinery's. An empty string matches everything. */
export function parseLabelSelector(selector: string): LabelSelector {
  return compileLabelSelector(new LabelParser(lex(selector)).parse());
}

/**
 * A necessary condition of sel on an object's JSON as goJson writes it: each requirement that needs a label
 * (=, ==, in, exists, gt, lt) needs its `"key":"value"` (one of them for in) or `"key":` somewhere in the text.
 * False only when sel surely refuses the object: a store keeping JSON bytes skips most refused objects' parse.
 * Undefined when no requirement needs a label (then every object may match).
 */
export function labelJsonCheck(sel: LabelSelector): ((json: Buffer) => boolean) | undefined {
  const needs: Buffer[][] = [];
  for (const r of sel.requirements) {
    const key = goJson(r.key) + ':';
    if (r.operator === '=' || r.operator === '==' || r.operator === 'in') {
      if (r.values.length > 0) needs.push(r.values.map((v) => Buffer.from(key + goJson(v), 'utf8')));
    } else if (r.operator === 'exists' || r.operator === 'gt' || r.operator === 'lt') needs.push([Buffer.from(key, 'utf8')]);
  }
  if (needs.length === 0) return undefined;
  // One needed text (`k=v`, the usual selector): one native search, no closures walked per object.
  const only = needs.length === 1 && needs[0]!.length === 1 ? needs[0]![0]! : undefined;
  if (only !== undefined) return (json) => json.indexOf(only) >= 0;
  return (json) => needs.every((any) => any.some((n) => json.indexOf(n) >= 0));
}

/** metav1.LabelSelectorOperator → selection.Operator (a Map: a plain object would find "constructor"). */
const EXPRESSION_OPERATORS: ReadonlyMap<string, LabelOperator> = new Map([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
]);

/**
 * metav1.LabelSelectorAsSelector: `null`/`undefined` match nothing, `{}` matches everything.
 * The input is untrusted JSON (a stored object), so its shape is checked here.
 */
export function labelSelectorFromObject(obj: unknown): LabelSelector {
  if (obj === null || obj === undefined) return NOTHING;
  if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error('invalid label selector: must be an object');
  const { matchLabels, matchExpressions } = obj as { matchLabels?: unknown; matchExpressions?: unknown };
  const reqs: LabelRequirement[] = [];
  if (matchLabels !== undefined && matchLabels !== null) {
    if (typeof matchLabels !== 'object' || Array.isArray(matchLabels)) throw new Error('invalid label selector: matchLabels must be an object');
    for (const [k, v] of Object.entries(matchLabels)) {
      if (typeof v !== 'string') throw new Error(`invalid label selector: matchLabels[${JSON.stringify(k)}] must be a string`);
      reqs.push(newRequirement(k, '=', [v], ''));
    }
  }
  if (matchExpressions !== undefined && matchExpressions !== null) {
    if (!Array.isArray(matchExpressions)) throw new Error('invalid label selector: matchExpressions must be a list');
    for (const [i, e] of matchExpressions.entries()) {
      const { key, operator, values } = (typeof e === 'object' && e !== null ? e : {}) as { key?: unknown; operator?: unknown; values?: unknown };
      if (typeof key !== 'string') throw new Error(`invalid label selector: matchExpressions[${i}].key must be a string`);
      const vals = values === undefined || values === null ? [] : values;
      if (!Array.isArray(vals) || !vals.every((v): v is string => typeof v === 'string')) {
        throw new Error(`invalid label selector: matchExpressions[${i}].values must be a list of strings`);
      }
      const op = typeof operator === 'string' ? EXPRESSION_OPERATORS.get(operator) : undefined;
      if (op === undefined) throw new Error(`${JSON.stringify(String(operator))} is not a valid label selector operator`);
      reqs.push(newRequirement(key, op, vals, ''));
    }
  }
  return compileLabelSelector(reqs);
}

// ---- field selectors (k8s.io/apimachinery/pkg/fields.ParseSelector) ----

/** Parses `metadata.name=x,status.phase!=Running`; `\,` `\=` `\\` escape in values. Whitespace is data, as in Go. */
export function parseFieldSelector(selector: string): FieldRequirement[] {
  const reqs: FieldRequirement[] = [];
  for (const term of splitTerms(selector).sort()) {
    if (term === '') continue;
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!m) throw new Error(`invalid selector: '${selector}'; can't understand '${term}'`);
    reqs.push(Object.freeze({ field: m[1]!, operator: m[2] === '!=' ? '!=' : '=', value: unescapeFieldValue(m[3]!) }));
  }
  return reqs;
}

/** Splits on commas not preceded by a backslash; escapes stay in place for unescapeFieldValue. */
function splitTerms(s: string): string[] {
  if (s === '') return [];
  const terms: string[] = [];
  let start = 0;
  let slash = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (slash) slash = false;
    else if (c === '\\') slash = true;
    else if (c === ',') {
      terms.push(s.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(s.slice(start));
  return terms;
}

export function unescapeFieldValue(s: string): string {
  if (!/[\\,=]/.test(s)) return s;
  let out = '';
  let slash = false;
  for (const c of s) {
    if (slash) {
      if (c !== '\\' && c !== ',' && c !== '=') throw new Error(`invalid field selector: invalid escape sequence: \\${c}`);
      out += c;
      slash = false;
    } else if (c === '\\') slash = true;
    // Go prints the rune with %v, i.e. as its code point number; kept for identical messages.
    else if (c === ',' || c === '=') throw new Error(`invalid field selector: unescaped character in value: ${c.codePointAt(0)}`);
    else out += c;
  }
  if (slash) throw new Error('invalid field selector: invalid escape sequence: \\');
  return out;
}
