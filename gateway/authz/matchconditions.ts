// Authorization webhook matchConditions: CEL expressions over `request` (the
// v1 SubjectAccessReview spec), compiled once per configuration with the
// shared CEL module. Order of logic, as kube-apiserver: any false → skip the
// webhook; all true → call it; otherwise (some error, none false) → error.
import { CelEnvironment, CelScalar, fromJson, mapType, type CompiledExpression } from '../../lib/cel/index.js';

/** The `request` environment of authorization match conditions. */
export const requestEnvironment = new CelEnvironment('request', { request: mapType(CelScalar.STRING, CelScalar.DYN) });

export const MAX_MATCH_CONDITIONS = 64;

export type MatchResult = { kind: 'match' } | { kind: 'skip' } | { kind: 'error'; error: string };

/** One expression's result, for explanations; expressions after a false one are not evaluated (kube's order). */
export interface ConditionResult {
  readonly expression: string;
  readonly result: 'true' | 'false' | 'error';
  readonly error?: string;
}

export class MatchConditions {
  constructor(private readonly expressions: readonly CompiledExpression[]) {}

  get size(): number {
    return this.expressions.length;
  }

  /** `each`, when given, receives every evaluated expression's result. */
  evaluate(spec: Record<string, unknown>, each?: ConditionResult[]): MatchResult {
    if (this.expressions.length === 0) return { kind: 'match' };
    const request = fromJson(spec);
    const errors: string[] = [];
    for (const e of this.expressions) {
      let v: unknown;
      try {
        v = e.evaluate({ request });
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        errors.push(error);
        each?.push({ expression: e.expression, result: 'error', error });
        continue;
      }
      if (v === false) {
        each?.push({ expression: e.expression, result: 'false' });
        return { kind: 'skip' };
      }
      if (v !== true) {
        const error = `expression ${JSON.stringify(e.expression)} did not evaluate to a bool`;
        errors.push(error);
        each?.push({ expression: e.expression, result: 'error', error });
      } else {
        each?.push({ expression: e.expression, result: 'true' });
      }
    }
    return errors.length > 0 ? { kind: 'error', error: errors.join('; ') } : { kind: 'match' };
  }
}
