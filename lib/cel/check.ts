// A gradual type checker over the parsed AST. @bufbuild/cel's checker is
// neither exported nor complete, so the checks kube-apiserver's (cel-go's)
// checker makes at configuration time are made here: overloads of operators
// and functions (overloads.ts), field selection on declared objects, ranges
// of comprehensions, homogeneous list and map literals. Where a type is not
// known it is dyn, and dyn matches everything: nothing that could evaluate is
// refused.
import { TYPE_NAMES, type Expr } from './ast.js';
import { overloadsOf, type Overload } from './overloads.js';
import { OPT_INDEX, OPT_LIST, OPT_MAP, OPT_SELECT } from './optionalsyntax.js';
import { BOOL, BYTES, DOUBLE, DURATION, DYN, formatType, INT, isDyn, listOf, mapOf, NULL, opaque, STRING, TIMESTAMP, TYPE, UINT, type CelT } from './types.js';

export interface TypeProblem {
  readonly message: string;
  /** The node the problem is at (its source position is in the parse's sourceInfo). */
  readonly id: bigint;
  /** Text to find from the node's position (has()'s select carries the macro's position, not its dot's). */
  readonly near?: string;
}

export interface Checked {
  readonly type: CelT;
  /** Every problem, in the order found (cel-go's checker goes on after one, the node typed as an error). */
  readonly problems: readonly TypeProblem[];
}

const OPERATOR_TEXT: Readonly<Record<string, string>> = {
  '_==_': '==',
  '_!=_': '!=',
  '_<_': '<',
  '_<=_': '<=',
  '_>_': '>',
  '_>=_': '>=',
  '_+_': '+',
  '_-_': '-',
  '_*_': '*',
  '_/_': '/',
  '_%_': '%',
  '_&&_': '&&',
  '_||_': '||',
  '@in': 'in',
  '_?_:_': '?',
  '_[_]': '[',
  '!_': '!',
  '-_': '-',
};

class Problem extends Error {
  constructor(readonly problem: TypeProblem) {
    super(problem.message);
  }
}

type Bindings = Map<string, CelT>;

// A declared object is a map at evaluation (a JSON object): where kube's own
// checker might refuse an object used as a map, this one accepts it.
const asMap = (t: CelT): CelT => (t.kind === 'object' ? mapOf(STRING, DYN) : t);

/** Whether two known types can hold the same value (dyn, null and objects compare loosely). */
function compatible(x: CelT, y: CelT): boolean {
  if (isDyn(x) || isDyn(y) || x === NULL || y === NULL || x.kind === 'param' || y.kind === 'param') return true;
  if (x.kind === 'object' && y.kind === 'object') return true;
  const a = asMap(x);
  const b = asMap(y);
  if (a.kind !== b.kind) return false;
  switch (a.kind) {
    case 'scalar':
      return a.name === (b as typeof a).name;
    case 'list':
      return compatible(a.elem, (b as typeof a).elem);
    case 'map':
      return compatible(a.key, (b as typeof a).key) && compatible(a.value, (b as typeof a).value);
    case 'opaque': {
      const o = b as typeof a;
      return (
        a.name === o.name &&
        (a.params ?? []).every((p, i) => {
          const q = o.params?.[i];
          return q === undefined || compatible(p, q);
        })
      );
    }
    default:
      return true;
  }
}

function unify(sig: CelT, actual: CelT, b: Bindings): boolean {
  if (isDyn(actual) || isDyn(sig)) return true;
  if (sig.kind === 'param') {
    const bound = b.get(sig.name);
    if (bound === undefined || isDyn(bound)) {
      b.set(sig.name, actual);
      return true;
    }
    if (!compatible(bound, actual)) return false;
    // A more precise type of the same shape replaces a vaguer one (list(dyn) → list(int)).
    if (bound.kind === actual.kind && formatType(bound).includes('dyn') && !formatType(actual).includes('dyn')) b.set(sig.name, actual);
    return true;
  }
  switch (sig.kind) {
    case 'scalar':
      return actual.kind === 'scalar' && actual.name === sig.name;
    case 'list':
      return actual.kind === 'list' && unify(sig.elem, actual.elem, b);
    case 'map': {
      const m = asMap(actual);
      return m.kind === 'map' && unify(sig.key, m.key, b) && unify(sig.value, m.value, b);
    }
    case 'opaque': {
      if (actual.kind !== 'opaque' || actual.name !== sig.name) return false;
      const ps = sig.params ?? [];
      return ps.every((p, i) => unify(p, actual.params?.[i] ?? DYN, b));
    }
    case 'object':
      return actual.kind === 'object';
  }
}

function subst(t: CelT, b: Bindings): CelT {
  switch (t.kind) {
    case 'param':
      return b.get(t.name) ?? DYN;
    case 'list':
      return listOf(subst(t.elem, b));
    case 'map':
      return mapOf(subst(t.key, b), subst(t.value, b));
    case 'opaque':
      return t.params
        ? opaque(
            t.name,
            t.params.map((p) => subst(p, b)),
          )
        : t;
    default:
      return t;
  }
}

/** The result of calling one of `overloads`; undefined when none matches. */
function resolve(overloads: readonly Overload[], target: CelT | undefined, args: readonly CelT[]): CelT | undefined {
  const results: CelT[] = [];
  for (const o of overloads) {
    if ((o.target === undefined) !== (target === undefined) || o.args.length !== args.length) continue;
    const b: Bindings = new Map();
    if (o.target && target && !unify(o.target, target, b)) continue;
    if (!o.args.every((a, i) => unify(a, args[i]!, b))) continue;
    results.push(subst(o.result, b));
  }
  if (!results.length) return undefined;
  const first = formatType(results[0]!);
  return results.every((r) => formatType(r) === first) ? results[0]! : DYN;
}

function constType(e: Expr & { exprKind: { case: 'constExpr' } }): CelT {
  switch (e.exprKind.value.constantKind.case) {
    case 'boolValue':
      return BOOL;
    case 'int64Value':
      return INT;
    case 'uint64Value':
      return UINT;
    case 'doubleValue':
      return DOUBLE;
    case 'stringValue':
      return STRING;
    case 'bytesValue':
      return BYTES;
    case 'nullValue':
      return NULL;
    case 'durationValue':
      return DURATION;
    case 'timestampValue':
      return TIMESTAMP;
    default:
      return DYN;
  }
}

/** The one element type of a literal's members (kube's environment wants them homogeneous). */
function joined(types: readonly CelT[], ids: readonly bigint[]): CelT {
  let t: CelT = DYN;
  types.forEach((x, i) => {
    if (isDyn(x)) return;
    if (isDyn(t)) {
      t = x;
      return;
    }
    if (!compatible(t, x)) throw new Problem({ message: `expected type '${formatType(t)}' but found '${formatType(x)}'`, id: ids[i]! });
  });
  return t;
}

const optionalOf = (t: CelT): CelT => opaque('optional_type', [t]);
const isOptional = (t: CelT): t is CelT & { kind: 'opaque' } => t.kind === 'opaque' && t.name === 'optional_type';
/** What an optional holds (a chained `a.?b.?c` selects from the optional `a.?b`). */
const unwrapOptional = (t: CelT): CelT => (isOptional(t) ? (t.params?.[0] ?? DYN) : t);
const stringConst = (e: Expr | undefined): string =>
  e?.exprKind.case === 'constExpr' && e.exprKind.value.constantKind.case === 'stringValue' ? e.exprKind.value.constantKind.value : '';

const isEmptyLiteral = (e: Expr | undefined): boolean =>
  (e?.exprKind.case === 'listExpr' && e.exprKind.value.elements.length === 0) ||
  (e?.exprKind.case === 'structExpr' && e.exprKind.value.messageName === '' && e.exprKind.value.entries.length === 0);

/**
 * Types `root` with the declared variables; every problem found is
 * returned with the node it is at. `type` is the expression's result type
 * (dyn when not known).
 */
export function checkTypes(root: Expr, variables: ReadonlyMap<string, CelT>): Checked {
  const scope = new Map(variables);
  const bind = <T>(names: ReadonlyArray<readonly [string, CelT]>, fn: () => T): T => {
    const saved = names.map(([n]) => [n, scope.get(n), scope.has(n)] as const);
    for (const [n, t] of names) scope.set(n, t);
    try {
      return fn();
    } finally {
      for (const [n, t, had] of saved)
        if (had) scope.set(n, t!);
        else scope.delete(n);
    }
  };

  const select = (operand: CelT, field: string, id: bigint, near?: string): CelT => {
    switch (operand.kind) {
      case 'object': {
        const f = operand.field(field);
        if (f) return f;
        if (operand.open) return DYN;
        throw new Problem({ message: `undefined field '${field}'`, id, near });
      }
      case 'map':
        if (!compatible(operand.key, STRING)) break;
        return operand.value;
      case 'scalar':
        if (isDyn(operand)) return DYN;
        break;
      default:
    }
    throw new Problem({ message: `type '${formatType(operand)}' does not support field selection`, id, near });
  };

  const problems: TypeProblem[] = [];
  // A node with a problem is typed dyn (cel-go's error type, which raises nothing further) and checking goes on.
  const typeOf = (e: Expr): CelT => {
    try {
      return nodeType(e);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
      problems.push(err.problem);
      return DYN;
    }
  };
  const nodeType = (e: Expr): CelT => {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr':
        return constType(e as Expr & { exprKind: { case: 'constExpr' } });
      case 'identExpr': {
        const t = scope.get(k.value.name);
        if (t) return t;
        return TYPE_NAMES.has(k.value.name) ? TYPE : DYN;
      }
      case 'selectExpr': {
        // A variable declared with a qualified name (`authorizer.requestResource`), as cel-go resolves it.
        const operand = k.value.operand;
        if (operand?.exprKind.case === 'identExpr' && !k.value.testOnly) {
          const qualified = scope.get(`${operand.exprKind.value.name}.${k.value.field}`);
          if (qualified) return qualified;
        }
        const t = select(typeOf(k.value.operand!), k.value.field, e.id, k.value.testOnly ? `.${k.value.field}` : undefined);
        return k.value.testOnly ? BOOL : t;
      }
      case 'callExpr': {
        const c = k.value;
        const fn = c.function;
        if (fn === OPT_SELECT || fn === OPT_INDEX || fn === OPT_LIST || fn === OPT_MAP) return optionalSyntax(e, c.function, c.args);
        // `strings.quote(x)`: a namespaced function, not a method of a variable.
        if (c.target?.exprKind.case === 'identExpr' && !scope.has(c.target.exprKind.value.name)) {
          const qualified = `${c.target.exprKind.value.name}.${fn}`;
          const args = c.args.map(typeOf);
          const declared = overloadsOf(qualified);
          if (!declared) return DYN;
          const r = resolve(declared, undefined, args);
          if (r) return r;
          throw new Problem({
            message: `found no matching overload for '${qualified}' applied to '(${args.map(formatType).join(', ')})'`,
            id: e.id,
            near: '(',
          });
        }
        const target = c.target ? typeOf(c.target) : undefined;
        const args = c.args.map(typeOf);
        // Objects declared by a schema are not indexable in kube's types but maps are; be lenient.
        if (fn === '_[_]' && args[0]?.kind === 'object') return DYN;
        const overloads = overloadsOf(fn);
        if (!overloads) return DYN;
        const r = resolve(overloads, target, args);
        if (r) return r;
        const applied = `${target ? `${formatType(target)}.` : ''}(${args.map(formatType).join(', ')})`;
        // cel-go places a named call at its '(' and an operator at its symbol; @bufbuild/cel
        // records the name (or the dot before it), and sometimes the end of the left operand.
        throw new Problem({
          message: `found no matching overload for '${fn}' applied to '${applied}'`,
          id: e.id,
          near: /^[A-Za-z]/.test(fn) ? '(' : OPERATOR_TEXT[fn],
        });
      }
      case 'listExpr': {
        const els = k.value.elements;
        return listOf(
          joined(
            els.map(typeOf),
            els.map((x) => x.id),
          ),
        );
      }
      case 'structExpr': {
        if (k.value.messageName !== '') return DYN;
        const entries = k.value.entries;
        const keys = entries.map((en) => (en.keyKind.case === 'mapKey' ? typeOf(en.keyKind.value) : DYN));
        const values = entries.map((en) => (en.value ? typeOf(en.value) : DYN));
        const ids = entries.map((en) => en.value?.id ?? e.id);
        return mapOf(joined(keys, ids), joined(values, ids));
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const range = asMap(typeOf(c.iterRange!));
        let vars: Array<[string, CelT]>;
        if (range.kind === 'list')
          vars = c.iterVar2
            ? [
                [c.iterVar, INT],
                [c.iterVar2, range.elem],
              ]
            : [[c.iterVar, range.elem]];
        else if (range.kind === 'map')
          vars = c.iterVar2
            ? [
                [c.iterVar, range.key],
                [c.iterVar2, range.value],
              ]
            : [[c.iterVar, range.key]];
        else if (isDyn(range))
          vars = c.iterVar2
            ? [
                [c.iterVar, DYN],
                [c.iterVar2, DYN],
              ]
            : [[c.iterVar, DYN]];
        else
          throw new Problem({
            message: `expression of type '${formatType(range)}' cannot be the range of a comprehension (must be list, map, or dynamic)`,
            id: c.iterRange!.id,
          });
        const init = c.accuInit ? typeOf(c.accuInit) : DYN;
        let accu = init;
        bind([...vars, [c.accuVar, init]], () => {
          if (c.loopCondition) typeOf(c.loopCondition);
          const step = c.loopStep ? typeOf(c.loopStep) : DYN;
          // `map` and `filter` start from `[]`: the step says what the list holds.
          if (isEmptyLiteral(c.accuInit) && step.kind === init.kind) accu = step;
        });
        return c.result ? bind([[c.accuVar, accu]], () => typeOf(c.result!)) : DYN;
      }
      default:
        return DYN;
    }
  };

  /** The optional syntax's nodes (optionalsyntax.ts), typed as cel-go's optional library types them. */
  const optionalSyntax = (e: Expr, fn: string, args: readonly Expr[]): CelT => {
    if (fn === OPT_SELECT) return optionalOf(select(unwrapOptional(typeOf(args[0]!)), stringConst(args[1]), e.id));
    if (fn === OPT_INDEX) {
      const container = asMap(unwrapOptional(typeOf(args[0]!)));
      const index = typeOf(args[1]!);
      if (container.kind === 'list' && compatible(index, INT)) return optionalOf(container.elem);
      if (container.kind === 'map' && compatible(index, container.key)) return optionalOf(container.value);
      if (isDyn(container)) return optionalOf(DYN);
      throw new Problem({
        message: `found no matching overload for '_[?_]' applied to '(${formatType(container)}, ${formatType(index)})'`,
        id: e.id,
        near: '[',
      });
    }
    const flags = stringConst(args[1]);
    const list = args[0]!;
    const els = list.exprKind.case === 'listExpr' ? list.exprKind.value.elements : [];
    // An optional member holds what the literal takes; it must be an optional.
    const member = (x: Expr, optional: boolean): CelT => {
      const t = typeOf(x);
      if (!optional || isDyn(t)) return t;
      if (!isOptional(t)) throw new Problem({ message: `expected type 'optional_type(${formatType(t)})' but found '${formatType(t)}'`, id: x.id });
      return unwrapOptional(t);
    };
    if (fn === OPT_LIST) {
      return listOf(
        joined(
          els.map((x, i) => member(x, flags[i] === '1')),
          els.map((x) => x.id),
        ),
      );
    }
    const keys = els.filter((_, i) => i % 2 === 0);
    const values = els.filter((_, i) => i % 2 === 1);
    return mapOf(
      joined(
        keys.map((x) => typeOf(x)),
        keys.map((x) => x.id),
      ),
      joined(
        values.map((x, i) => member(x, flags[i] === '1')),
        values.map((x) => x.id),
      ),
    );
  };

  const type = typeOf(root);
  return { type: problems.length ? DYN : type, problems };
}

/**
 * cel-go's rendering of a problem at a source offset: `ERROR: <input>:1:11:
 * message`, then the line and a caret under the column (as kube-apiserver
 * shows compilation errors).
 */
export function formatProblem(expression: string, offset: number | undefined, message: string): string {
  if (offset === undefined || offset < 0) return `ERROR: <input>:-1:0: ${message}`;
  const chars = Array.from(expression);
  // Offsets count code points, as cel-go's do.
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < chars.length; i++)
    if (chars[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  const col = offset - lineStart + 1;
  let end = chars.indexOf('\n', lineStart);
  if (end < 0) end = chars.length;
  const text = chars.slice(lineStart, end).join('');
  return `ERROR: <input>:${line}:${col}: ${message}\n | ${text}\n | ${'.'.repeat(col - 1)}^`;
}
