// Static checks on a parsed expression, and questions about what it reads.
// @bufbuild/cel's type checker is not public, so undeclared variables and
// unknown functions are found here instead of at the first evaluation.
import type { parse } from '@bufbuild/cel';

export type Expr = ReturnType<typeof parse>['expr'];

/** Identifiers that name types (`type(x) == string`). */
export const TYPE_NAMES: ReadonlySet<string> = new Set(['bool', 'bytes', 'double', 'int', 'uint', 'string', 'list', 'map', 'null_type', 'type', 'dyn']);

export interface Scope {
  readonly variables: ReadonlySet<string>;
  hasFunction(name: string): boolean;
}

export interface ShapeLimits {
  readonly maxNodes: number;
  readonly maxDepth: number;
}

/** Returns the first problem found, or undefined. */
export function staticProblem(root: Expr, scope: Scope, limits: ShapeLimits): string | undefined {
  let nodes = 0;
  const visit = (e: Expr | undefined, bound: readonly string[], depth: number): string | undefined => {
    if (!e) return undefined;
    if (++nodes > limits.maxNodes) return `expression too large: more than ${limits.maxNodes} nodes`;
    if (depth > limits.maxDepth) return `expression nested too deeply: more than ${limits.maxDepth} levels`;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr': {
        const n = k.value.name;
        if (bound.includes(n) || scope.variables.has(n) || TYPE_NAMES.has(n)) return undefined;
        return `undeclared reference to "${n}"`;
      }
      case 'selectExpr':
        return visit(k.value.operand, bound, depth + 1);
      case 'callExpr': {
        const { target, args } = k.value;
        const fn = k.value.function;
        let namespaced = false;
        if (target?.exprKind.case === 'identExpr') {
          const q = `${target.exprKind.value.name}.${fn}`;
          namespaced = !bound.includes(target.exprKind.value.name) && !scope.variables.has(target.exprKind.value.name) && scope.hasFunction(q);
        }
        // The receiver first: its problems come before the call's in the source (`a.f()`), as cel-go lists them.
        if (target && !namespaced) {
          const p = visit(target, bound, depth + 1);
          if (p) return p;
        }
        if (!namespaced && !/^[_@!-]/.test(fn) && !scope.hasFunction(fn)) return `undeclared reference to function "${fn}"`;
        for (const a of args) {
          const p = visit(a, bound, depth + 1);
          if (p) return p;
        }
        return undefined;
      }
      case 'listExpr':
        for (const el of k.value.elements) {
          const p = visit(el, bound, depth + 1);
          if (p) return p;
        }
        return undefined;
      case 'structExpr':
        if (k.value.messageName !== '') return `object construction is not supported: ${k.value.messageName}`;
        for (const entry of k.value.entries) {
          const p = (entry.keyKind.case === 'mapKey' ? visit(entry.keyKind.value, bound, depth + 1) : undefined) ?? visit(entry.value, bound, depth + 1);
          if (p) return p;
        }
        return undefined;
      case 'comprehensionExpr': {
        const c = k.value;
        const inner = [...bound, c.iterVar, c.accuVar, ...(c.iterVar2 ? [c.iterVar2] : [])];
        return (
          visit(c.iterRange, bound, depth + 1) ??
          visit(c.accuInit, bound, depth + 1) ??
          visit(c.loopCondition, inner, depth + 1) ??
          visit(c.loopStep, inner, depth + 1) ??
          visit(c.result, [...bound, c.accuVar], depth + 1)
        );
      }
      default:
        return undefined;
    }
  };
  return visit(root, [], 0);
}

/** Whether the expression reads `variable.field` (or `variable["field"]`, or tests it with has()). */
export function readsField(root: Expr, variable: string, field: string): boolean {
  const isVar = (e: Expr | undefined): boolean => e?.exprKind.case === 'identExpr' && e.exprKind.value.name === variable;
  const visit = (e: Expr | undefined): boolean => {
    if (!e) return false;
    const k = e.exprKind;
    switch (k.case) {
      case 'selectExpr':
        return (isVar(k.value.operand) && k.value.field === field) || visit(k.value.operand);
      case 'callExpr': {
        const [a, b] = k.value.args;
        if (
          k.value.function === '_[_]' &&
          isVar(a) &&
          b?.exprKind.case === 'constExpr' &&
          b.exprKind.value.constantKind.case === 'stringValue' &&
          b.exprKind.value.constantKind.value === field
        )
          return true;
        return visit(k.value.target) || k.value.args.some(visit);
      }
      case 'listExpr':
        return k.value.elements.some(visit);
      case 'structExpr':
        return k.value.entries.some((en) => (en.keyKind.case === 'mapKey' && visit(en.keyKind.value)) || visit(en.value));
      case 'comprehensionExpr': {
        const c = k.value;
        return [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result].some(visit);
      }
      default:
        return false;
    }
  };
  return visit(root);
}

// cel-go's costs of what is not a call (common/cost.go): an identifier, a
// selection or an index 1, a list literal 10, a map literal 30; constants 0.
const LIST_CREATE = 10;
const MAP_CREATE = 30;
/** Calls @bufbuild/cel plans without the function resolver, so the resolver hook never sees them. */
const UNRESOLVED_CALLS: Readonly<Record<string, number>> = { '_&&_': 0, '_||_': 0, '_?_:_': 0, '_[_]': 1, '@not_strictly_false': 1 };

/**
 * Prepares an expression for the cost meter (see meter.ts): every
 * comprehension's loop condition becomes `tick(cond, weight)`, weight being
 * the cost of one iteration's condition and step that no call charges
 * (identifiers, selections, indexing, literals); returns the same count for
 * the part outside any loop, charged once per evaluation (an upper bound:
 * a branch skipped by `&&`, `||` or `?:` is counted too).
 */
export function meterProgram(
  root: Expr,
  template: Expr,
  nextId: { value: bigint },
  isFunction: (qualified: string, ident: string) => boolean = () => false,
): number {
  // `format.named(x)`: `format` is part of the function's name, not an identifier read (cel-go charges it nothing).
  const namespace = (c: { function: string; target?: Expr }): boolean =>
    c.target?.exprKind.case === 'identExpr' && isFunction(`${c.target.exprKind.value.name}.${c.function}`, c.target.exprKind.value.name);
  const weigh = (e: Expr | undefined): number => {
    if (!e) return 0;
    const k = e.exprKind;
    switch (k.case) {
      case 'identExpr':
        return 1;
      case 'selectExpr':
        return 1 + weigh(k.value.operand);
      case 'callExpr':
        return (UNRESOLVED_CALLS[k.value.function] ?? 0) + (namespace(k.value) ? 0 : weigh(k.value.target)) + k.value.args.reduce((a, x) => a + weigh(x), 0);
      case 'listExpr':
        return LIST_CREATE + k.value.elements.reduce((a, x) => a + weigh(x), 0);
      case 'structExpr':
        return MAP_CREATE + k.value.entries.reduce((a, en) => a + (en.keyKind.case === 'mapKey' ? weigh(en.keyKind.value) : 0) + weigh(en.value), 0);
      case 'comprehensionExpr': {
        const c = k.value;
        const perIteration = weigh(c.loopCondition) + weigh(c.loopStep);
        if (c.loopCondition && template.exprKind.case === 'callExpr') {
          const [, w] = template.exprKind.value.args;
          const weight = {
            ...w!,
            id: nextId.value++,
            exprKind: { case: 'constExpr', value: { ...(w!.exprKind.value as object), constantKind: { case: 'int64Value', value: BigInt(perIteration) } } },
          } as Expr;
          const call = { ...template.exprKind.value, args: [c.loopCondition, weight] };
          c.loopCondition = { ...template, id: nextId.value++, exprKind: { case: 'callExpr', value: call } } as Expr;
        }
        return weigh(c.iterRange) + weigh(c.accuInit) + weigh(c.result);
      }
      default:
        return 0;
    }
  };
  return weigh(root);
}

/** Calls `f` on each direct child of `e`. */
export function forEachChild(e: Expr, f: (child: Expr) => void): void {
  const k = e.exprKind;
  switch (k.case) {
    case 'selectExpr':
      if (k.value.operand) f(k.value.operand);
      return;
    case 'callExpr':
      if (k.value.target) f(k.value.target);
      k.value.args.forEach(f);
      return;
    case 'listExpr':
      k.value.elements.forEach(f);
      return;
    case 'structExpr':
      for (const en of k.value.entries) {
        if (en.keyKind.case === 'mapKey') f(en.keyKind.value);
        if (en.value) f(en.value);
      }
      return;
    case 'comprehensionExpr':
      for (const c of [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result]) if (c) f(c);
      return;
    default:
  }
}

/** The largest id of `root`'s nodes and map entries (new nodes take ids above it). */
export function maxId(root: Expr): bigint {
  let max = 0n;
  const visit = (e: Expr): void => {
    if (e.id > max) max = e.id;
    if (e.exprKind.case === 'structExpr') for (const en of e.exprKind.value.entries) if (en.id > max) max = en.id;
    forEachChild(e, visit);
  };
  visit(root);
  return max;
}
