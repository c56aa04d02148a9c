// x-kubernetes-validations: CEL rules with `self` and `oldSelf`, compiled once
// per CRD version on the shared environment (lib/cel), their estimated cost
// checked at CRD write, evaluated per request under a per-rule limit and a
// per-object budget. Values reach CEL typed from the schema (integers as int,
// numbers as double) so `self.replicas + 1` works as in kube.
import { CelScalar, type CelInput, type CelValue } from '@bufbuild/cel';
import type { StatusCause } from '../api/status.js';
import { isPlainObject } from '../api/meta.js';
import { hasOwn, ownValue } from '../api/own.js';
import { jsonEqual } from '../api/json.js';
import { CelCompileError, CelEnvironment, CelEvalError, constantPatternError, kindOf, none, type CompiledExpression } from '../cel/index.js';
import { costMessage, estimateCost, kubeNamed, rootProps, rootView, schemaType, selfTypeName, toCel, unboundedCount, usesIdent } from './celschema.js';
import { BOOL, DYN, formatType, STRING, type CelT } from '../cel/types.js';
import { REASONS, resolveFieldPath, type RuleCheck } from './check.js';
import { fieldPath as P, type Props, type Rule } from './props.js';
import { fieldError, goValue } from './render.js';
import { costlyStep } from './progress.js';

/** kube's budgets (k8s.io/apiserver/pkg/apis/cel/config.go, apiextensions validation). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** Runtime, in cel-go's cost units (lib/cel/meter.ts): celconfig.PerCallLimit per rule evaluation, celconfig.RuntimeCELCostBudget per object. */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_BUDGET = 10_000_000;

export interface ValidateOptions {
  /** Cost allowed across every rule of one object (default RUNTIME_BUDGET). */
  readonly budget?: number;
  /** Cost allowed per rule evaluation (default PER_CALL_LIMIT). */
  readonly perCallLimit?: number;
  /**
   * The wall-clock net of one rule evaluation (default RULE_TIMEOUT_MS). Only tests set it: one that
   * asserts cost units widens it, so a loaded machine cannot answer its cost question with a timeout.
   */
  readonly timeoutMs?: number;
}

/**
 * The budget is counted in cel-go's cost units; the wall clock is only a safety net (kube has
 * none), wide enough that a busy server seldom turns a cost answer into a timeout.
 */
export const RULE_TIMEOUT_MS = 1000;

// oldSelf of an optionalOldSelf rule on create is lib/cel's absent optional (`none()`).
const env = new CelEnvironment(
  'x-kubernetes-validations',
  { self: CelScalar.DYN, oldSelf: CelScalar.DYN },
  {
    cacheSize: 8192,
    limits: { timeoutMs: RULE_TIMEOUT_MS },
  },
);

function compile(expression: string): CompiledExpression | string {
  try {
    return env.compile(expression);
  } catch (err) {
    if (err instanceof CelCompileError) return err.detail;
    throw err;
  }
}

// ---- checks at CRD write -------------------------------------------------

interface Totals {
  total: number;
  rules: Array<{ path: string; cost: number }>;
}
const totalsOf = new WeakMap<Props, Totals>();

/** The RuleCheck of checkCrdSchema: compiles each rule of a node, checks oldSelf use and estimated cost. */
export function ruleCheck(root: Props, rootPath: string): RuleCheck {
  const totals: Totals = { total: 0, rules: [] };
  totalsOf.set(root, totals);
  // How many times a node's rules run at most: the product of the maxItems/maxProperties above it;
  // below a list or map without one, as kube does, how many such nodes fit in a request.
  const reps = new Map<Props, number>();
  const visit = (p: Props, n: number | undefined) => {
    reps.set(p, n ?? unboundedCount(p));
    for (const v of p.properties?.values() ?? []) visit(v, n);
    const bound = p.type === 'array' ? p.maxItems : p.maxProperties;
    const next = n === undefined || bound === undefined ? undefined : n * bound;
    if (p.items && !Array.isArray(p.items)) visit(p.items as Props, next);
    if (typeof p.additionalProperties === 'object') visit(p.additionalProperties, next);
  };
  visit(root, 1);
  void rootPath;
  return (s, path, uncorrelatable) => {
    const out: StatusCause[] = [];
    // One compilation per node, as kube compiles each node's rules: one self type name for them.
    const selfName = selfTypeName();
    s.xValidations!.forEach((r, i) => {
      const rp = P.index(P.child(path, 'x-kubernetes-validations'), i);
      costlyStep(P.child(rp, 'rule'));
      const c = compile(r.rule);
      const typed = s === root ? rootProps(s) : s;
      const selfType = kubeNamed(schemaType(typed), selfName);
      // optionalOldSelf: oldSelf is an optional, which is not typed here.
      const vars = new Map([
        ['self', selfType],
        ['oldSelf', r.optionalOldSelf ? DYN : selfType],
      ]);
      const checked = typeof c === 'string' ? undefined : c.check(vars);
      const problem = typeof c === 'string' ? c : checked!.problem;
      if (problem !== undefined || typeof c === 'string') {
        out.push(fieldError.invalid(P.child(rp, 'rule'), ruleValue(r), `compilation failed: ${problem}`));
        return;
      }
      if (!resultIs(checked!.type, BOOL)) {
        out.push(fieldError.invalid(P.child(rp, 'rule'), ruleValue(r), 'cel expression must evaluate to a bool'));
        return;
      }
      const badPattern = constantPatternError(c.parsed);
      if (badPattern !== undefined) {
        out.push(fieldError.invalid(P.child(rp, 'rule'), ruleValue(r), `program instantiation failed: ${badPattern}`));
        return;
      }
      const cost = Math.min(Number.MAX_SAFE_INTEGER, estimateCost(c.parsed, s) * (reps.get(s) ?? 1));
      if (cost > STATIC_ESTIMATED_COST_LIMIT)
        out.push(fieldError.forbidden(P.child(rp, 'rule'), costMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
      totals.total += cost;
      totals.rules.push({ path: P.child(rp, 'rule'), cost });
      if (r.messageExpression?.trim()) {
        const mc = compile(r.messageExpression);
        const mchecked = typeof mc === 'string' ? undefined : mc.check(vars);
        const m = typeof mc === 'string' ? mc : mchecked!.problem;
        if (m !== undefined) out.push(fieldError.invalid(P.child(rp, 'messageExpression'), ruleValue(r), `messageExpression compilation failed: ${m}`));
        else if (!resultIs(mchecked!.type, STRING))
          out.push(fieldError.invalid(P.child(rp, 'messageExpression'), ruleValue(r), 'messageExpression must evaluate to a string'));
        else if (typeof mc !== 'string') {
          const mcost = Math.min(Number.MAX_SAFE_INTEGER, estimateCost(mc.parsed, typed) * (reps.get(s) ?? 1));
          if (mcost > STATIC_ESTIMATED_COST_LIMIT)
            out.push(
              fieldError.forbidden(P.child(rp, 'messageExpression'), costMessage('estimated messageExpression cost', mcost, STATIC_ESTIMATED_COST_LIMIT)),
            );
          totals.total += mcost;
          totals.rules.push({ path: P.child(rp, 'messageExpression'), cost: mcost });
        }
      }
      if (usesIdent(c.parsed, 'oldSelf')) {
        if (uncorrelatable !== undefined)
          out.push(
            fieldError.invalid(P.child(rp, 'rule'), r.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`),
          );
      } else if (r.optionalOldSelf !== undefined) {
        out.push(fieldError.invalid(P.child(rp, 'optionalOldSelf'), r.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
      }
    });
    return out;
  };
}

/** Gradual: a result of unknown type may be the one wanted. */
/** kube compares the checked output type with bool (string for messageExpression) exactly: a dyn result is refused. */
function resultIs(t: CelT, want: CelT): boolean {
  return formatType(t) === formatType(want);
}

function ruleValue(r: Rule): Record<string, unknown> {
  const v: Record<string, unknown> = { rule: r.rule };
  if (r.message !== undefined) v.message = r.message;
  if (r.messageExpression !== undefined) v.messageExpression = r.messageExpression;
  if (r.reason !== undefined) v.reason = r.reason;
  if (r.fieldPath !== undefined) v.fieldPath = r.fieldPath;
  if (r.optionalOldSelf !== undefined) v.optionalOldSelf = r.optionalOldSelf;
  return v;
}

/** The whole schema's estimated cost over kube's per-CRD limit: the most expensive rules named. */
export function totalCost(root: Props, path: string): StatusCause[] {
  const t = totalsOf.get(root);
  if (!t || t.total <= STATIC_ESTIMATED_CRD_COST_LIMIT) return [];
  const out = [...t.rules]
    .sort((a, b) => b.cost - a.cost)
    .slice(0, 4)
    .map((r) => fieldError.forbidden(r.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
  out.push(
    fieldError.forbidden(
      path,
      costMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', t.total, STATIC_ESTIMATED_CRD_COST_LIMIT),
    ),
  );
  return out;
}

/** Rules of a default value are run against it at CRD write, as kube does. */
export function defaultRuleCheck(root: Props): (s: Props, value: unknown, path: string) => StatusCause[] {
  void root;
  return (s, value, path) => {
    const tree = compileTree(s, []);
    if (!tree) return [];
    const out: StatusCause[] = [];
    try {
      runTree(value, undefined, tree, path, out, { left: RUNTIME_BUDGET, perCall: PER_CALL_LIMIT, timeoutMs: RULE_TIMEOUT_MS }, false);
    } catch {
      /* a rule that does not compile is reported by the rule check */
    }
    return out;
  };
}

// ---- evaluation -----------------------------------------------------------

interface CompiledRule {
  readonly rule: Rule;
  /** A string: the compile error of a rule stored before it was checked (a legacy CRD); reported per object, as kube does. */
  readonly program: CompiledExpression | string;
  readonly message?: CompiledExpression;
  readonly transition: boolean;
  readonly fieldPath?: string[];
}

interface RuleTree {
  readonly props: Props;
  readonly rules: readonly CompiledRule[];
  readonly properties?: ReadonlyMap<string, RuleTree>;
  readonly additional?: RuleTree;
  readonly items?: RuleTree;
  /** Schemas of every member, to type values even where no rule sits. */
}

function compileTree(p: Props, pending: LazyRule[]): RuleTree | undefined {
  let properties: Map<string, RuleTree> | undefined;
  for (const [k, v] of p.properties ?? []) {
    const t = compileTree(v, pending);
    if (t) (properties ??= new Map()).set(k, t);
  }
  const additional = typeof p.additionalProperties === 'object' ? compileTree(p.additionalProperties, pending) : undefined;
  const items = p.items && !Array.isArray(p.items) ? compileTree(p.items as Props, pending) : undefined;
  const rules: LazyRule[] = [];
  for (const r of p.xValidations ?? []) {
    if (!r.rule.trim()) continue; // kube: an empty rule is skipped
    rules.push(new LazyRule(r, p));
  }
  pending.push(...rules);
  if (!rules.length && !properties && !additional && !items) return undefined;
  return { props: p, rules, properties, additional, items };
}

/**
 * A rule compiled when first needed: a thousand rules took seconds to compile, so a CRD's
 * registry entry compiles them in slices (`ready`), and a write awaits that before validating.
 */
class LazyRule implements CompiledRule {
  readonly rule: Rule;
  readonly #props: Props;
  #compiled: Omit<CompiledRule, 'rule'> | undefined;

  constructor(rule: Rule, props: Props) {
    this.rule = rule;
    this.#props = props;
  }

  #get(): Omit<CompiledRule, 'rule'> {
    if (this.#compiled) return this.#compiled;
    const r = this.rule;
    const program = compile(r.rule);
    const m = r.messageExpression?.trim() ? compile(r.messageExpression) : undefined;
    return (this.#compiled = {
      program,
      message: typeof m === 'string' ? undefined : m,
      transition: typeof program !== 'string' && usesIdent(program.parsed, 'oldSelf'),
      fieldPath: r.fieldPath?.trim() ? resolveFieldPath(this.#props, r.fieldPath) : undefined,
    });
  }
  get program() {
    return this.#get().program;
  }
  get message() {
    return this.#get().message;
  }
  get transition() {
    return this.#get().transition;
  }
  get fieldPath() {
    return this.#get().fieldPath;
  }
}

/** How long one slice of a schema's rule compilation may hold the event loop. */
const SLICE_MS = 5;

/** Compiles `rules` a slice at a time, yielding to the event loop between slices. */
async function compileInSlices(rules: readonly LazyRule[]): Promise<void> {
  let i = 0;
  while (i < rules.length) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    const end = performance.now() + SLICE_MS;
    while (i < rules.length && performance.now() < end) void rules[i++]!.program;
  }
}

export interface CompiledRules {
  validate(obj: unknown, old: unknown, o?: ValidateOptions): StatusCause[];
  /** Resolves once every rule is compiled (in slices of a few milliseconds, started with the schema). */
  ready(): Promise<void>;
}

/** The x-kubernetes-validations of a schema, compiled in slices from now on; undefined when it has none. */
export function compileRules(root: Props): CompiledRules | undefined {
  const pending: LazyRule[] = [];
  const tree = compileTree(root, pending);
  if (!tree) return undefined;
  let compiled: Promise<void> | undefined;
  const ready = () => (compiled ??= compileInSlices(pending));
  if (pending.length) void ready();
  return {
    validate(obj, old, o) {
      const out: StatusCause[] = [];
      const budget = { left: o?.budget ?? RUNTIME_BUDGET, perCall: o?.perCallLimit ?? PER_CALL_LIMIT, timeoutMs: o?.timeoutMs ?? RULE_TIMEOUT_MS };
      runTree(obj, old, tree, '', out, budget, true);
      return out;
    },
    ready,
  };
}

interface Budget {
  left: number;
  readonly perCall: number;
  readonly timeoutMs: number;
}
/** One evaluation's limits: the per-call limit or what is left of the budget, whichever is less. */
const callLimits = (b: Budget) => ({ maxCost: Math.max(0, Math.min(b.perCall, b.left)), timeoutMs: b.timeoutMs });

class OutOfBudget extends Error {}
/** A rule over its per-call limit: kube runs no further rule of the object. */
class Stop extends Error {}

function runTree(v: unknown, old: unknown, t: RuleTree, path: string, out: StatusCause[], budget: Budget, root: boolean): void {
  if (v === null || v === undefined) return;
  if (t.rules.length) {
    try {
      runRules(v, old, t, path, out, budget, root);
    } catch (err) {
      if (err instanceof Stop) {
        budget.left = -1;
        return;
      }
      if (!(err instanceof OutOfBudget)) throw err;
      out.push(
        fieldError.invalid(path || '<nil>', t.props.type ?? '', 'validation failed due to running out of cost budget, no further validation rules will be run'),
      );
      budget.left = -1;
      return;
    }
  }
  if (budget.left < 0) return;
  if (isPlainObject(v)) {
    const o = isPlainObject(old) ? old : undefined;
    for (const k of Object.keys(v)) {
      const sub = t.properties?.get(k) ?? (t.props.properties?.has(k) ? undefined : t.additional);
      if (sub) runTree(v[k], o && hasOwn(o, k) ? o[k] : undefined, sub, path ? `${path}.${k}` : k, out, budget, false);
      if (budget.left < 0) return;
    }
  } else if (Array.isArray(v) && t.items) {
    const keys = t.props.xListType === 'map' ? (t.props.xListMapKeys ?? []) : undefined;
    const olds = keys && Array.isArray(old) ? old : undefined;
    for (let i = 0; i < v.length; i++) {
      const prev = olds
        ? olds.find((x) => isPlainObject(x) && isPlainObject(v[i]) && keys!.every((k) => ownValue(x, k) === ownValue(v[i] as object, k)))
        : undefined;
      runTree(v[i], prev, t.items, `${path}[${i}]`, out, budget, false);
      if (budget.left < 0) return;
    }
  }
}

function runRules(v: unknown, old: unknown, t: RuleTree, path: string, out: StatusCause[], budget: Budget, root: boolean): void {
  let self: CelInput | undefined;
  let oldSelf: CelInput | undefined;
  // Ratcheting: on update, rules that do not read oldSelf are not run on an unchanged value.
  const unchanged = old !== undefined && jsonEqual(v, old);
  for (const r of t.rules) {
    const hasOld = old !== undefined && old !== null;
    if (r.transition && !hasOld && !r.rule.optionalOldSelf) continue;
    if (unchanged && !r.transition) continue;
    self ??= toCel(root ? rootView(v) : v, t.props);
    const bindings: Record<string, CelInput> = {
      self,
      oldSelf: hasOld ? (oldSelf ??= toCel(root ? rootView(old) : old, t.props)) : none(),
    };
    const field = r.fieldPath ? [path, ...r.fieldPath].filter(Boolean).join('.') : path;
    const at = field || '<nil>';
    const value = t.props.type ?? '';
    if (typeof r.program === 'string') {
      out.push(fieldError.invalid(path || '<nil>', t.props.type ?? '', `rule compile error: ${r.program}`));
      continue;
    }
    const program = r.program;
    const stats = { cost: 0 };
    const limitedByBudget = budget.left < budget.perCall;
    let result: CelValue;
    try {
      result = program.evaluate(bindings, callLimits(budget), stats);
    } catch (err) {
      budget.left -= stats.cost;
      const detail = err instanceof CelEvalError ? err.detail : String(err);
      if (err instanceof CelEvalError && err.code === 'cost') {
        if (limitedByBudget) throw new OutOfBudget();
        out.push(
          fieldError.invalid(
            at,
            value,
            `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(r.rule)}`,
          ),
        );
        throw new Stop();
      }
      out.push(
        fieldError.invalid(
          at,
          value,
          detail.startsWith('no such overload')
            ? `'${detail}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(r.rule)}`
            : `${detail} evaluating rule: ${ruleErrorString(r.rule)}`,
        ),
      );
      continue;
    }
    budget.left -= stats.cost;
    if (result === true) continue;
    if (typeof result !== 'boolean') {
      out.push(fieldError.invalid(at, value, `rule evaluated to ${kindOf(result)}, not bool, evaluating rule: ${ruleErrorString(r.rule)}`));
      continue;
    }
    const m = message(r, bindings, budget);
    if (typeof m !== 'string') {
      out.push(fieldError.invalid(at, value, m.stop));
      throw new Stop();
    }
    out.push(ruleFailure(at, value, m, r.rule.reason));
  }
}

/** kube's ruleErrorString: the message if the rule has one, else the rule. */
function ruleErrorString(r: Rule): string {
  return r.message ? r.message.trim() : r.rule.trim();
}

/**
 * A failed rule's message. A messageExpression is charged to the object's
 * budget as kube charges it: over the budget or the per-call limit, no
 * further rule runs (`stop` is the cause); any other failure falls back to
 * message, then to the rule.
 */
function message(r: CompiledRule, bindings: Record<string, CelInput>, budget: Budget): string | { stop: string } {
  if (r.message) {
    const stats = { cost: 0 };
    const limitedByBudget = budget.left < budget.perCall;
    try {
      const m = r.message.evaluate(bindings, callLimits(budget), stats);
      budget.left -= stats.cost;
      if (typeof m === 'string' && m.trim() && !/\n/.test(m.trim()) && m.trim().length <= 5 * 1024) return m.trim();
    } catch (err) {
      if (err instanceof CelEvalError && err.code === 'cost') {
        return {
          stop: limitedByBudget
            ? 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run'
            : `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(r.rule.messageExpression)}`,
        };
      }
      budget.left -= stats.cost;
    }
  }
  return r.rule.message ? r.rule.message.trim() : `failed rule: ${r.rule.rule.trim()}`;
}

function ruleFailure(field: string, value: string, detail: string, reason: string | undefined): StatusCause {
  switch (reason && REASONS.includes(reason) ? reason : 'FieldValueInvalid') {
    case 'FieldValueForbidden':
      return fieldError.forbidden(field, detail);
    case 'FieldValueRequired':
      return fieldError.required(field, detail);
    case 'FieldValueDuplicate':
      return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${goValue(value)}` };
    default:
      return fieldError.invalid(field, value, detail);
  }
}
