// One policy evaluated for one binding and param, as kube's validator does
// it: match conditions (any false skips, errors fail by failurePolicy),
// variables evaluated lazily once, validations under the per-call limit and
// the per-evaluation budget, the message of a failed validation (its
// messageExpression, else message, else `failed expression: …`), and the
// audit annotations. Synchronous and pure, so that AuthorizerSession.run can
// evaluate it again once authorizer checks are decided.
import { CelEvalError, type CelInput, type CelValue, type CompiledExpression } from '../../../../lib/cel/index.js';
import type { CheckErrorType } from './metrics.js';
import type { CompiledPolicy } from './compiled.js';

/** kube's celconfig.PerCallLimit and RuntimeCELCostBudget. */
export const PER_CALL_LIMIT = 1_000_000;
export const RUNTIME_BUDGET = 10_000_000;
/** kube's celconfig.MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;
/** kube's maxAuditAnnotationValueLength. */
const MAX_ANNOTATION_VALUE = 10 * 1024;
const OUT_OF_BUDGET = 'validation failed due to running out of cost budget, no further validation rules will be run';

export interface Decision {
  readonly action: 'admit' | 'deny';
  readonly evaluation: 'admit' | 'deny' | 'error';
  readonly message: string;
  /** A failed validation's reason (Invalid when unset). */
  readonly reason?: string;
  readonly errorType: CheckErrorType;
  readonly elapsedMs: number;
  /** The validation's index; undefined for a decision about the whole policy. */
  readonly index?: number;
  /** An audit annotation that failed under Fail: a denial whatever the binding's actions. */
  readonly direct?: true;
}

export interface PolicyResult {
  readonly decisions: readonly Decision[];
  /** Published annotations (key, value) and denials from annotations that failed. */
  readonly annotations: ReadonlyArray<{ readonly key: string; readonly value: string }>;
}

/** The variables bound for one evaluation (object, oldObject, request, namespaceObject, params, authorizer). */
export type Inputs = Record<string, CelInput>;

/** `variables.<name>`, each evaluated on first use and kept for the evaluation (kube's composition context). */
class LazyVariables extends Map<string, CelInput> {
  private readonly done = new Map<string, { value?: CelValue; error?: Error }>();
  constructor(
    private readonly defs: ReadonlyMap<string, CompiledExpression>,
    private readonly bindings: () => Inputs,
    private readonly budget: { remaining: number },
  ) {
    super();
  }
  override get(name: string): CelInput | undefined {
    const def = this.defs.get(name);
    if (!def) return undefined;
    let r = this.done.get(name);
    if (!r) {
      try {
        r = { value: run(def, this.bindings(), this.budget) };
      } catch (err) {
        // The reading expression fails with the variable's own error (its words, not a nested expression's).
        r = { error: err instanceof OutOfBudget ? err : new Error(detail(err)) };
      }
      this.done.set(name, r);
    }
    if (r.error) throw r.error;
    return r.value as CelInput;
  }
  override has(name: string): boolean {
    return this.defs.has(name);
  }
  override get size(): number {
    return this.defs.size;
  }
}

class OutOfBudget extends Error {}

function run(c: CompiledExpression, bindings: Inputs, budget: { remaining: number }): CelValue {
  if (budget.remaining <= 0) throw new OutOfBudget(OUT_OF_BUDGET);
  const stats = { cost: 0 };
  try {
    return c.evaluate(bindings, { maxCost: Math.min(PER_CALL_LIMIT, budget.remaining) }, stats);
  } catch (err) {
    budget.remaining -= stats.cost;
    stats.cost = 0;
    // Over the budget, here or in a variable this expression read.
    if (err instanceof CelEvalError && err.code === 'cost' && budget.remaining < PER_CALL_LIMIT) throw new OutOfBudget(OUT_OF_BUDGET);
    if (budget.remaining <= 0) throw new OutOfBudget(OUT_OF_BUDGET);
    throw err;
  } finally {
    budget.remaining -= stats.cost;
  }
}

// cel-go's words for a missing key of a map (an unstructured object's field), where @bufbuild/cel says `field not found`.
const detail = (err: unknown) =>
  (err instanceof CelEvalError ? err.detail : err instanceof Error ? err.message : String(err)).replace(/^field not found: /, 'no such key: ');
const errorText = (expression: string, err: unknown) => `expression '${expression}' resulted in error: ${detail(err)}`;
const errorTypeOf = (err: unknown): CheckErrorType => (err instanceof OutOfBudget ? 'out_of_budget' : 'invalid_error');

const defs = new WeakMap<CompiledPolicy, ReadonlyMap<string, CompiledExpression>>();

/** A policy's variables by name, made once per compiled policy. */
function variableDefs(p: CompiledPolicy): ReadonlyMap<string, CompiledExpression> {
  let m = defs.get(p);
  if (!m) defs.set(p, (m = new Map(p.variables.map((v) => [v.name, v.compiled]))));
  return m;
}

export function evaluatePolicy(p: CompiledPolicy, inputs: Inputs): PolicyResult {
  const failAction = p.failurePolicy === 'Ignore' ? 'admit' : 'deny';
  const whole = (message: string, errorType: CheckErrorType): PolicyResult => ({
    decisions: [{ action: failAction, evaluation: 'error', message, errorType, elapsedMs: 0 }],
    annotations: [],
  });
  if (p.configError !== undefined) return whole(p.configError, 'compile_error');
  const budget = { remaining: RUNTIME_BUDGET };
  const bindings: Inputs = { ...inputs };
  if (p.variables.length > 0) bindings['variables'] = new LazyVariables(variableDefs(p), () => bindings, budget);

  // Match conditions: any false skips the policy; otherwise errors fail by failurePolicy.
  const conditionErrors: string[] = [];
  for (const c of p.matchConditions) {
    try {
      if (run(c.compiled, bindings, budget) === false) return { decisions: [], annotations: [] };
    } catch (err) {
      if (err instanceof OutOfBudget) return whole(err.message, 'out_of_budget');
      conditionErrors.push(errorText(c.compiled.expression, err));
    }
  }
  if (conditionErrors.length > 0) {
    if (p.failurePolicy === 'Ignore') return { decisions: [], annotations: [] };
    return whole(conditionErrors.length === 1 ? conditionErrors[0]! : `[${conditionErrors.join(', ')}]`, 'invalid_error');
  }

  const decisions: Decision[] = [];
  const failed: number[] = [];
  for (const [index, v] of p.validations.entries()) {
    const t0 = performance.now();
    let result: CelValue;
    try {
      result = run(v.compiled, bindings, budget);
    } catch (err) {
      if (err instanceof OutOfBudget) return whole(err.message, 'out_of_budget');
      decisions.push({
        action: failAction,
        evaluation: 'error',
        message: errorText(v.expression, err),
        errorType: errorTypeOf(err),
        elapsedMs: performance.now() - t0,
        index,
      });
      continue;
    }
    const elapsedMs = performance.now() - t0;
    if (result === true) decisions.push({ action: 'admit', evaluation: 'admit', message: '', errorType: 'no_error', elapsedMs, index });
    else {
      failed.push(decisions.length);
      decisions.push({ action: 'deny', evaluation: 'deny', message: '', reason: v.reason ?? 'Invalid', errorType: 'no_error', elapsedMs, index });
    }
  }
  // Messages of the failed validations, from what budget is left (kube evaluates them after every validation).
  const withMessages = decisions.map((d, i) => {
    if (!failed.includes(i)) return d;
    const v = p.validations[d.index!]!;
    let message = '';
    if (v.messageExpression) {
      try {
        const m = run(v.messageExpression, { ...bindings, authorizer: null }, budget);
        if (typeof m === 'string') {
          message = m.trim();
          if (Buffer.byteLength(message) > MAX_MESSAGE_BYTES || message.includes('\n')) message = '';
        }
      } catch {
        // kube logs a failed messageExpression and falls back to the message
      }
    }
    if (message === '') message = v.message.trim();
    if (message === '') message = `failed expression: ${v.expression.trim()}`;
    return { ...d, message };
  });

  const annotations: Array<{ key: string; value: string }> = [];
  for (const a of p.auditAnnotations) {
    const t0 = performance.now();
    let value: CelValue;
    try {
      value = run(a.compiled, bindings, { remaining: RUNTIME_BUDGET });
    } catch (err) {
      if (p.failurePolicy === 'Fail')
        withMessages.push({
          action: 'deny',
          evaluation: 'error',
          message: errorText(a.valueExpression.trim(), err),
          errorType: errorTypeOf(err),
          elapsedMs: performance.now() - t0,
          direct: true,
        });
      continue;
    }
    if (typeof value === 'string') {
      const v = value.trim();
      if (v !== '') annotations.push({ key: a.key, value: v.length > MAX_ANNOTATION_VALUE ? v.slice(0, MAX_ANNOTATION_VALUE) : v });
    } else if (value !== null) {
      withMessages.push({
        action: 'deny',
        evaluation: 'error',
        message: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${typeof value}. Return type must be either string or null.`,
        errorType: 'invalid_error',
        elapsedMs: performance.now() - t0,
        direct: true,
      });
    }
  }
  return { decisions: withMessages, annotations };
}
