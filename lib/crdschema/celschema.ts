// The schema as CRD validation rules see it: property names escaped as kube
// escapes them, the fields a declared object has (a selection of anything else
// is a compile error), values typed from the schema, the static cost estimate.
// @bufbuild/cel has no type checker, so these walks over the parsed rule stand
// in for the parts of kube's checker that matter most.
import { randomInt } from 'node:crypto';
import type { CelInput } from '@bufbuild/cel';
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue } from '../api/own.js';
import type { Expr } from '../cel/ast.js';
import { BOOL, DOUBLE, DURATION, DYN, INT, listOf, mapOf, STRING, TIMESTAMP, type CelT } from '../cel/types.js';
import { formatValue, TYPED_FORMATS } from './celformats.js';
import type { Props } from './props.js';

const MAX_REQUEST_BYTES = 3 * 1024 * 1024;

export function usesIdent(e: Expr, name: string): boolean {
  let found = false;
  const visit = (x: Expr | undefined): void => {
    if (!x || found) return;
    const k = x.exprKind;
    switch (k.case) {
      case 'identExpr':
        if (k.value.name === name) found = true;
        return;
      case 'selectExpr':
        visit(k.value.operand);
        return;
      case 'callExpr':
        visit(k.value.target);
        k.value.args.forEach(visit);
        return;
      case 'listExpr':
        k.value.elements.forEach(visit);
        return;
      case 'structExpr':
        k.value.entries.forEach((en) => {
          if (en.keyKind.case === 'mapKey') visit(en.keyKind.value);
          visit(en.value);
        });
        return;
      case 'comprehensionExpr':
        [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result].forEach(visit);
        return;
      default:
        return;
    }
  };
  visit(e);
  return found;
}

// ---- property names as CEL sees them --------------------------------------

/** CEL's reserved words: no identifier, property name or variable name may be one. */
export const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);
const ESCAPES: Readonly<Record<string, string>> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };

/** kube's escaping of a property name into a CEL identifier (`foo-bar` → `foo__dash__bar`); undefined = not accessible. */
export function celName(name: string): string | undefined {
  if (name === '' || (name[0]! >= '0' && name[0]! <= '9')) return undefined;
  if (RESERVED.has(name)) return `__${name}__`;
  if (/[^A-Za-z0-9_./-]/.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (m) => ESCAPES[m]!);
}

const namesOf = new WeakMap<Props, ReadonlyMap<string, Props>>();

/** A declared object's properties by their CEL names. */
function celProperties(p: Props): ReadonlyMap<string, Props> {
  let m = namesOf.get(p);
  if (!m) {
    const out = new Map<string, Props>();
    for (const [k, v] of p.properties ?? []) {
      const n = celName(k);
      if (n !== undefined) out.set(n, v);
    }
    m = out;
    namesOf.set(p, m);
  }
  return m;
}

/** The schema of `p.field` in CEL; `undefined` = dyn (unknown or not declared). */
function memberOf(p: Props | undefined, field: string): Props | undefined {
  if (!p) return undefined;
  return celProperties(p).get(field) ?? (typeof p.additionalProperties === 'object' ? p.additionalProperties : undefined);
}

/** Whether `p` is an object whose members are all declared (selecting anything else is a compile error in kube). */
function closedObject(p: Props | undefined): boolean {
  return !!p && p.type === 'object' && !p.xPreserveUnknownFields && p.additionalProperties === undefined && !p.xEmbeddedResource;
}

const ROOT_META: Props = {
  hasDefault: false,
  unsupported: [],
  raw: {},
  type: 'object',
  properties: new Map([
    ['name', { hasDefault: false, unsupported: [], raw: {}, type: 'string' }],
    ['generateName', { hasDefault: false, unsupported: [], raw: {}, type: 'string' }],
  ]),
};

/** The root as rules see it: apiVersion, kind and metadata (name, generateName) always there. */
export function rootProps(p: Props): Props {
  const properties = new Map(p.properties ?? []);
  for (const k of ['apiVersion', 'kind']) if (!properties.has(k)) properties.set(k, { hasDefault: false, unsupported: [], raw: {}, type: 'string' });
  properties.set('metadata', ROOT_META);
  return { ...p, properties };
}

const typesOf = new WeakMap<Props, CelT>();

/**
 * The CEL type of values under a schema, as kube declares it: integer → int,
 * number → double, boolean, string (a timestamp with format date or
 * date-time, a duration with format duration: celformats.ts makes the values
 * so; dyn with format binary, whose values are not converted to bytes here),
 * arrays → list, declared properties → an object whose other
 * fields are undefined (open under preserve-unknown-fields or an embedded
 * resource), additionalProperties → map(string, T); int-or-string,
 * preserve-unknown-fields without properties and anything untyped → dyn.
 */
export function schemaType(p: Props | undefined): CelT {
  if (!p) return DYN;
  let t = typesOf.get(p);
  if (t) return t;
  t = DYN;
  if (p.xIntOrString) t = DYN;
  else if (p.type === 'integer') t = INT;
  else if (p.type === 'number') t = DOUBLE;
  else if (p.type === 'boolean') t = BOOL;
  else if (p.type === 'string')
    t = p.format === 'date' || p.format === 'date-time' ? TIMESTAMP : p.format === 'duration' ? DURATION : p.format === 'binary' ? DYN : STRING;
  else if (p.type === 'array') t = listOf(schemaType(itemsOf(p)));
  else if (p.type === 'object') {
    if (p.properties?.size || closedObject(p)) {
      const props = celProperties(p);
      t = { kind: 'object', name: 'object', open: !closedObject(p), field: (f) => (props.has(f) ? schemaType(props.get(f)) : undefined) };
    } else if (p.additionalProperties !== undefined) {
      t = mapOf(STRING, typeof p.additionalProperties === 'object' ? schemaType(p.additionalProperties) : DYN);
    }
  }
  typesOf.set(p, t);
  return t;
}

/**
 * `t` with its object types named as kube names them for one node's rules
 * (apiserver's DeclType.MaybeAssignTypeName under compilation.go's
 * generateUniqueSelfTypeName): the node's own type `selfType<n>`, a field's
 * `<parent>.<field>`, a list's items `<parent>.@idx`, a map's values
 * `<parent>.@elem`; the number changes with every compilation so that no rule
 * can depend on it. Named lazily, as the checker reaches each member.
 */
export function kubeNamed(t: CelT, name: string): CelT {
  switch (t.kind) {
    case 'object': {
      const inner = t;
      return {
        kind: 'object',
        name,
        open: t.open,
        field: (f) => {
          const ft = inner.field(f);
          return ft && kubeNamed(ft, `${name}.${f}`);
        },
      };
    }
    case 'list':
      return t.elem.kind === 'object' || t.elem.kind === 'list' || t.elem.kind === 'map' ? listOf(kubeNamed(t.elem, `${name}.@idx`)) : t;
    case 'map':
      return t.value.kind === 'object' || t.value.kind === 'list' || t.value.kind === 'map' ? mapOf(t.key, kubeNamed(t.value, `${name}.@elem`)) : t;
    default:
      return t;
  }
}

/** kube's placeholder name of a node's self type: `selfType` and a number that differs per compilation. */
export function selfTypeName(): string {
  return `selfType${randomInt(1_000_000_000)}`;
}

/** The schema of a select chain from a variable (`self.spec.items[0].name`); undefined = dyn. */
function exprSchema(x: Expr, scope: ReadonlyMap<string, Props | undefined>): Props | undefined {
  const k = x.exprKind;
  if (k.case === 'identExpr') return scope.get(k.value.name);
  if (k.case === 'selectExpr') return memberOf(exprSchema(k.value.operand!, scope), k.value.field);
  if (k.case === 'callExpr' && k.value.function === '_[_]') return itemsOf(exprSchema(k.value.args[0]!, scope));
  return undefined;
}

// ---- cost estimate -------------------------------------------------------

/** kube's estimate of how many elements fit in a request when the schema sets no maximum. */
export function unboundedCount(items: Props | undefined): number {
  const min = !items ? 1 : items.type === 'string' || items.type === 'object' || items.type === 'array' ? 2 : items.type === 'boolean' ? 4 : 1;
  return Math.floor((MAX_REQUEST_BYTES - 2) / (min + 1));
}

function itemsOf(p: Props | undefined): Props | undefined {
  if (!p) return undefined;
  if (p.type === 'array') return p.items && !Array.isArray(p.items) ? (p.items as Props) : undefined;
  return typeof p.additionalProperties === 'object' ? p.additionalProperties : undefined;
}

export function cardinality(p: Props | undefined): number {
  if (p?.type === 'array' && p.maxItems !== undefined) return p.maxItems;
  if (p?.type === 'object' && p.maxProperties !== undefined) return p.maxProperties;
  return unboundedCount(itemsOf(p));
}

// cel-go's factors: traversing a string costs 0.1 per byte, a regex 0.25 per byte of its source.
const STRING_TRAVERSAL = 0.1;
const REGEX_LENGTH = 0.25;
const MAX_NAME_FORMAT_REGEX_SIZE = 128;
const LINEAR_STRING_METHODS = new Set([
  'lowerAscii',
  'upperAscii',
  'trim',
  'replace',
  'split',
  'join',
  'indexOf',
  'lastIndexOf',
  'substring',
  'charAt',
  'reverse',
]);
const COMPARISONS = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_']);

/**
 * A static worst case: every node costs 1, a loop's body costs its range's
 * largest size (maxItems/maxProperties, else what fits in a request) times
 * the body, and string work costs as cel-go's estimator counts it (matches:
 * 0.1 per byte of the string times 0.25 per byte of the regex, find and
 * findAll alike; a format's
 * `validate` as a regex of 128 bytes; comparisons,
 * concatenation, the string library and `url()` 0.1 per byte), a string's size being
 * its maxLength, else what fits in a request. Coarser than kube's checker,
 * but it refuses what kube refuses in practice: nested loops over unbounded
 * lists, regexes over unbounded strings inside unbounded lists.
 */
export function estimateCost(e: Expr, self: Props): number {
  const scope = new Map<string, Props | undefined>([['self', self]]);
  const schemaOf = (x: Expr) => exprSchema(x, scope);
  /** A string's largest size in bytes; undefined when the expression is not known to be a string. */
  const sizeOf = (x: Expr | undefined): number | undefined => {
    if (!x) return undefined;
    const k = x.exprKind;
    if (k.case === 'constExpr') return k.value.constantKind.case === 'stringValue' ? Buffer.byteLength(k.value.constantKind.value) : undefined;
    const p = schemaOf(x);
    return p?.type === 'string' ? (p.maxLength ?? MAX_REQUEST_BYTES) : undefined;
  };
  const stringCost = (fn: string, target: Expr | undefined, args: readonly Expr[]): number => {
    // kube's find and findAll cost as matches does.
    if (fn === 'matches' || ((fn === 'find' || fn === 'findAll') && target)) {
      const [str, re] = target ? [target, args[0]] : [args[0], args[1]];
      const n = sizeOf(str);
      const r = sizeOf(re);
      return n === undefined || r === undefined ? 0 : Math.ceil((n + 1) * STRING_TRAVERSAL) * Math.ceil(r * REGEX_LENGTH);
    }
    if (fn === 'contains' && target) {
      const n = sizeOf(target);
      const m = sizeOf(args[0]);
      return n === undefined || m === undefined ? 0 : Math.ceil(n * m * STRING_TRAVERSAL);
    }
    // kube estimates a format check as a `matches` against a regex of 128 bytes (MaxNameFormatRegexSize).
    if (fn === 'validate' && target && args.length === 1) {
      const n = sizeOf(args[0]);
      return n === undefined ? 0 : Math.ceil(n * STRING_TRAVERSAL) * Math.ceil(MAX_NAME_FORMAT_REGEX_SIZE * REGEX_LENGTH);
    }
    if (fn === 'url' && !target && args.length === 1) return Math.ceil((sizeOf(args[0]) ?? 0) * STRING_TRAVERSAL);
    if ((fn === 'startsWith' || fn === 'endsWith') && target) return Math.ceil((sizeOf(args[0]) ?? 0) * STRING_TRAVERSAL);
    if (LINEAR_STRING_METHODS.has(fn) && target) return Math.ceil((sizeOf(target) ?? 0) * STRING_TRAVERSAL);
    if (COMPARISONS.has(fn) && args.length === 2) {
      const a = sizeOf(args[0]);
      const b = sizeOf(args[1]);
      return a === undefined || b === undefined ? 0 : Math.ceil(Math.min(a, b) * STRING_TRAVERSAL);
    }
    if (fn === '_+_' && args.length === 2) {
      const a = sizeOf(args[0]);
      const b = sizeOf(args[1]);
      return a === undefined || b === undefined ? 0 : Math.ceil((a + b) * STRING_TRAVERSAL);
    }
    return 0;
  };
  // A literal's size is known (`[has(self.a), has(self.b)].filter(x, x)` loops twice), and
  // `map`/`filter` give at most as many elements as they loop over.
  const rangeSize = (x: Expr): number => {
    const k = x.exprKind;
    if (k.case === 'listExpr') return k.value.elements.length;
    if (k.case === 'structExpr') return k.value.entries.length;
    if (k.case === 'comprehensionExpr' && k.value.accuInit?.exprKind.case === 'listExpr') return rangeSize(k.value.iterRange!);
    return cardinality(schemaOf(x));
  };
  const cost = (x: Expr | undefined): number => {
    if (!x) return 0;
    const k = x.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return 1 + cost(k.value.operand);
      case 'callExpr': {
        const c = k.value;
        return 1 + cost(c.target) + c.args.reduce((a, b) => a + cost(b), 0) + stringCost(c.function, c.target, c.args);
      }
      case 'listExpr':
        return 40 + k.value.elements.reduce((a, b) => a + cost(b), 0);
      case 'structExpr':
        return 40 + k.value.entries.reduce((a, en) => a + (en.keyKind.case === 'mapKey' ? cost(en.keyKind.value) : 0) + cost(en.value), 0);
      case 'comprehensionExpr': {
        const c = k.value;
        const range = schemaOf(c.iterRange!);
        const n = rangeSize(c.iterRange!);
        const saved = scope.get(c.iterVar);
        const had = scope.has(c.iterVar);
        scope.set(c.iterVar, range?.type === 'object' ? undefined : itemsOf(range));
        const body = cost(c.loopCondition) + cost(c.loopStep);
        if (had) scope.set(c.iterVar, saved);
        else scope.delete(c.iterVar);
        return cost(c.iterRange) + cost(c.accuInit) + n * body + cost(c.result);
      }
      default:
        return 1;
    }
  };
  return cost(e);
}

export function costMessage(name: string, cost: number, limit: number): string {
  const f = cost / limit;
  const factor = f > 100 ? 'more than 100x' : f < 1.5 ? `${f.toFixed(6)}x` : `${f.toFixed(1)}x`;
  return `${name} exceeds budget by factor of ${factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** At the root kube shows rules apiVersion, kind and only name and generateName of metadata. */
export function rootView(v: unknown): unknown {
  if (!isPlainObject(v)) return v;
  const meta = ownValue(v, 'metadata');
  if (!isPlainObject(meta)) return v;
  const m: Record<string, unknown> = {};
  for (const k of ['name', 'generateName']) if (hasOwn(meta, k)) m[k] = meta[k];
  return { ...v, metadata: m };
}

/** A JSON value as CEL sees it under its schema: integers int, numbers double, objects maps. */
export function toCel(v: unknown, p: Props | undefined): CelInput {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return p?.type === 'number' || !Number.isInteger(v) ? v : BigInt(v);
  if (typeof v === 'string') return p?.format && TYPED_FORMATS.has(p.format) ? (formatValue(v, p.format) ?? v) : v;
  if (typeof v === 'boolean') return v;
  if (Array.isArray(v)) {
    const items = p?.items && !Array.isArray(p.items) ? (p.items as Props) : undefined;
    return v.map((x) => toCel(x, items));
  }
  if (isPlainObject(v)) {
    const m = new Map<string, CelInput>();
    for (const k of Object.keys(v)) {
      if (v[k] === undefined) continue;
      const declared = p?.properties?.get(k);
      if (declared) {
        // Declared properties are fields: kube escapes their names (foo-bar → foo__dash__bar).
        const name = celName(k);
        if (name !== undefined) m.set(name, toCel(v[k], declared));
        continue;
      }
      m.set(k, toCel(v[k], typeof p?.additionalProperties === 'object' ? p.additionalProperties : undefined));
    }
    return m;
  }
  return null;
}
