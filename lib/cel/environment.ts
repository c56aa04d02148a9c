// One CEL environment per set of declared variables (`claims`, `user`,
// later `request`, `self`/`oldSelf`), shared by every feature that evaluates
// expressions. Compile once (cached per environment), evaluate many, each
// evaluation bounded by a cost meter.
import { celEnv, isCelError, parse, plan, type CelEnv, type CelFunc, type CelInput, type CelType, type CelValue } from '@bufbuild/cel';
import { RE2JS } from '@bufbuild/re2';
import { strings } from '@bufbuild/cel/ext';
import { LRUCache } from 'lru-cache';
import { meterProgram, maxId, readsField, staticProblem, type Expr, type ShapeLimits } from './ast.js';
import { checkTypes, formatProblem } from './check.js';
import type { CelT } from './types.js';
import { CelCompileError, CelEvalError } from './errors.js';
import { listFunctions } from './lists.js';
import { callCost, charge, costFunctions, CostMeter, COST_TICK, DEFAULT_LIMITS, metered, type CostLimits } from './meter.js';
import { urlFunctions } from './urls.js';
import { regexFunctions } from './regex.js';
import { quantityFunctions } from './quantity.js';
import { netFunctions } from './net.js';
import { formatFunctions } from './format.js';
import { optionalFunctions } from './optional.js';
import { optionalSyntaxFunctions, parseWithOptionals } from './optionalsyntax.js';

export interface EnvironmentOptions {
  /** Longest accepted expression, in UTF-16 code units. */
  readonly maxExpressionLength?: number;
  readonly shape?: Partial<ShapeLimits>;
  readonly limits?: Partial<CostLimits>;
  /** Compiled expressions kept; the oldest is dropped beyond this. */
  readonly cacheSize?: number;
  readonly clock?: () => number;
  /** Further functions of this environment (validation rules' optional oldSelf). */
  readonly funcs?: readonly CelFunc[];
}

const DEFAULT_MAX_LENGTH = 16 * 1024;

/** Patterns longer than this are compiled per call, never kept. */
const MAX_CACHED_PATTERN = 4096;
const compiledPatterns = new LRUCache<string, ReturnType<typeof RE2JS.compile>>({ max: 1024 });

/**
 * `matches` with its compiled patterns kept (@bufbuild/cel compiles the RE2
 * pattern on every call): the bench's three Widget rules went from 785k to 390k
 * instructions per validated object under callgrind (no rules: 29k). A rule's
 * pattern is nearly always a literal. A bad pattern still throws on every call.
 */
const cachedRe2: { compile(pattern: string): { test(text: string): boolean } } = {
  compile(pattern: string) {
    if (pattern.length > MAX_CACHED_PATTERN) return RE2JS.compile(pattern);
    let re = compiledPatterns.get(pattern);
    if (re === undefined) {
      re = RE2JS.compile(pattern);
      compiledPatterns.set(pattern, re);
    }
    return re;
  },
};
type Group = NonNullable<ReturnType<CelEnv['funcs']['find']>>;

/**
 * A function group whose calls are charged to the running meter. One class,
 * so every call site of the planner sees one object shape (wrapping each
 * group in an object of its own prototype made those sites megamorphic: 2.5×
 * the instructions of three rules under callgrind).
 */
class MeteredGroup {
  constructor(private readonly group: Group) {}

  get name(): string {
    return this.group.name;
  }

  call(id: Parameters<Group['call']>[0], target: CelValue | undefined, args: CelValue[]): ReturnType<Group['call']> {
    const result = this.group.call(id, target, args);
    if (result !== undefined) {
      if (target === undefined) charge(callCost(this.group.name, args[0], args[1], result as CelValue));
      else charge(callCost(this.group.name, target, args[0], result as CelValue));
    }
    return result;
  }

  [Symbol.iterator](): ReturnType<Group[typeof Symbol.iterator]> {
    return this.group[Symbol.iterator]();
  }
}

/**
 * `env` with its function resolver wrapped so that every call is charged to
 * the running meter, as cel-go charges it (meter.ts, callCost). The planner
 * reads only `funcs`, `registry` and `namespace`; COST_TICK charges itself.
 */
function meteringEnv(env: CelEnv): CelEnv {
  const groups = new Map<string, Group | undefined>();
  const funcs = {
    find(name: string): Group | undefined {
      if (!groups.has(name)) {
        const g = env.funcs.find(name);
        groups.set(name, g && name !== COST_TICK ? (new MeteredGroup(g) as unknown as Group) : g);
      }
      return groups.get(name);
    },
    [Symbol.iterator]: () => env.funcs[Symbol.iterator](),
  };
  return { namespace: env.namespace, registry: env.registry, variables: env.variables, funcs } as unknown as CelEnv;
}

const DEFAULT_SHAPE: ShapeLimits = { maxNodes: 4000, maxDepth: 100 };

/** A compiled expression: immutable, reusable, safe to share. */
export class CompiledExpression {
  constructor(
    readonly expression: string,
    private readonly ast: Expr,
    private readonly program: (ctx: Record<string, CelInput>) => CelValue | Error,
    private readonly env: CelEnvironment,
    /** The AST-counted cost of the part outside loops (meterProgram), charged once per evaluation. */
    private readonly baseCost: number,
    private readonly positions: Readonly<Record<string, number>> = {},
  ) {}

  /**
   * Type-checks the expression with the variables typed (gradually: dyn where
   * unknown). `problem` is cel-go's rendering (`ERROR: <input>:1:11: found no
   * matching overload for '_>_' applied to '(string, int)'`, the line, a caret).
   */
  check(variables: ReadonlyMap<string, CelT>): { type: CelT; problem?: string } {
    const r = checkTypes(this.ast, variables);
    if (r.problems.length === 0) return { type: r.type };
    const located = r.problems.map((p) => {
      let at = this.positions[String(p.id)];
      if (at !== undefined && p.near) {
        const found = this.expression.indexOf(p.near, at);
        if (found >= 0) at = found;
      }
      return { at: at ?? -1, message: p.message };
    });
    // cel-go shows its errors sorted by location, one `ERROR: …` block each.
    located.sort((x, y) => x.at - y.at);
    return { type: r.type, problem: located.map((p) => formatProblem(this.expression, p.at, p.message)).join('\n') };
  }

  /** Whether the expression reads `variable.field` (e.g. `claims.email`). */
  reads(variable: string, field: string): boolean {
    return readsField(this.ast, variable, field);
  }

  /** The parsed expression (unmetered), for static questions such as cost estimates. */
  get parsed(): Expr {
    return this.ast;
  }

  /**
   * Evaluates with the given variables; throws CelEvalError on an error result or when the bound is hit.
   * `stats.cost` receives the cost spent, in cel-go's runtime units (a caller's budget across expressions).
   */
  evaluate(bindings: Record<string, CelInput>, limits?: Partial<CostLimits>, stats?: { cost: number }): CelValue {
    for (const v of this.env.variables) {
      if (!(v in bindings)) throw new CelEvalError('eval', this.expression, `variable "${v}" has no value`);
    }
    const meter = new CostMeter({ ...this.env.limits, ...limits }, this.env.clock);
    let result: CelValue | Error;
    try {
      result = metered(meter, () => {
        meter.charge(this.baseCost);
        return this.program(bindings);
      });
    } catch (err) {
      result = err instanceof Error ? err : new Error(String(err));
    }
    if (stats) stats.cost = meter.cost;
    if (meter.exceeded) throw new CelEvalError('cost', this.expression, meter.exceeded);
    if (isCelError(result) || result instanceof Error) throw new CelEvalError('eval', this.expression, result.message);
    return result;
  }
}

export class CelEnvironment {
  readonly variables: readonly string[];
  readonly limits: CostLimits;
  readonly clock: () => number;
  private readonly cache: LRUCache<string, CompiledExpression>;
  private readonly maxLength: number;
  private readonly shape: ShapeLimits;
  private readonly declarations: Readonly<Record<string, CelType>>;
  private readonly funcs: readonly CelFunc[];
  // Made at the first compile, not in the constructor: the environments are module-level constants,
  // and building them (a parse and @bufbuild/cel's function tables each) was ~150 ms of a start's CPU.
  private made: { readonly env: CelEnv; readonly tickTemplate: Expr; readonly metering: CelEnv } | undefined;

  constructor(
    readonly name: string,
    declarations: Readonly<Record<string, CelType>>,
    opts: EnvironmentOptions = {},
  ) {
    this.variables = Object.freeze(Object.keys(declarations));
    this.limits = Object.freeze({ ...DEFAULT_LIMITS, ...opts.limits });
    this.clock = opts.clock ?? Date.now;
    this.maxLength = opts.maxExpressionLength ?? DEFAULT_MAX_LENGTH;
    this.shape = { ...DEFAULT_SHAPE, ...opts.shape };
    this.cache = new LRUCache({ max: opts.cacheSize ?? 4096 });
    this.declarations = { ...declarations };
    this.funcs = opts.funcs ?? [];
  }

  /** The @bufbuild/cel environment, the loop meter's call template, and the metering environment programs are planned with. */
  private core(): NonNullable<CelEnvironment['made']> {
    if (this.made) return this.made;
    const env = celEnv({
      variables: { ...this.declarations },
      funcs: [
        ...strings,
        ...listFunctions,
        ...urlFunctions,
        ...regexFunctions,
        ...quantityFunctions,
        ...netFunctions,
        ...formatFunctions,
        ...optionalFunctions,
        ...optionalSyntaxFunctions,
        ...costFunctions,
        ...this.funcs,
      ],
      re2: cachedRe2,
    });
    // A call node to copy for the loop meter; the name is swapped in since `@…` cannot be parsed.
    const t = parse('x(true, 0)').expr;
    if (t.exprKind.case === 'callExpr') t.exprKind.value.function = COST_TICK;
    this.made = { env, tickTemplate: t, metering: meteringEnv(env) };
    return this.made;
  }

  /** Compiles (or returns the cached compilation of) an expression; throws CelCompileError. */
  compile(expression: string): CompiledExpression {
    const hit = this.cache.get(expression);
    if (hit) return hit;
    const compiled = this.build(expression);
    this.cache.set(expression, compiled);
    return compiled;
  }

  private build(expression: string): CompiledExpression {
    if (expression.trim() === '') throw new CelCompileError('syntax', expression, 'expression is empty');
    if (expression.length > this.maxLength) {
      throw new CelCompileError('too-large', expression, `expression is longer than ${this.maxLength} characters`);
    }
    let ast: Expr;
    try {
      ast = parseWithOptionals(expression).expr;
    } catch (err) {
      if (err instanceof RangeError) throw new CelCompileError('too-large', expression, 'expression nested too deeply');
      throw new CelCompileError('syntax', expression, err instanceof Error ? err.message.replace(/^<input>:/, '') : String(err));
    }
    const vars = new Set(this.variables);
    const { env, tickTemplate, metering } = this.core();
    const problem = staticProblem(ast, { variables: vars, hasFunction: (n) => env.funcs.find(n) !== undefined }, this.shape);
    if (problem) throw new CelCompileError(problem.startsWith('undeclared') ? 'undeclared' : 'too-large', expression, problem);
    const source = parseWithOptionals(expression); // unmetered copy for questions about the source
    const inspect = source.expr;
    const baseCost = meterProgram(ast, tickTemplate, { value: maxId(ast) + 1n }, (q, ident) => !vars.has(ident) && env.funcs.find(q) !== undefined);
    let program: (ctx: Record<string, CelInput>) => CelValue | Error;
    try {
      program = plan(metering, ast) as unknown as typeof program;
    } catch (err) {
      throw new CelCompileError('syntax', expression, err instanceof Error ? err.message : String(err));
    }
    return new CompiledExpression(expression, inspect, program, this, baseCost, source.sourceInfo?.positions);
  }
}
