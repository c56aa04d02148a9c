// Authorization webhook matchConditions: CEL expressions over `request` (the
// v1 SubjectAccessReview spec), compiled once per configuration with the
// shared CEL module. Order of logic, as kube-apiserver: any false → skip the
// webhook; all true → call it; otherwise (some error, none false) → error.
import { CelEnvironment, CelScalar, fromJson, mapType, type CompiledExpression } from '../../lib/cel/index.js';

/** The `request` environment of authorization match conditions. */
export const requestEnvironment = new CelEnvironment('request', { request: mapType(CelScalar.STRING, CelScalar.DYN) });

export const MAX_MATCH_CONDITIONS = 64;

export type MatchResult = { kind: 'match' } | { kind: 'skip' } | { kind: 'error'; error: string };

export class MatchConditions {
  constructor(private readonly expressions: readonly CompiledExpression[]) {}

  get size(): number { return this.expressions.length; }

  evaluate(spec: Record<string, unknown>): MatchResult {
    if (this.expressions.length === 0) return { kind: 'match' };
    const request = fromJson(spec);
    const errors: string[] = [];
    for (const e of this.expressions) {
      let v: unknown;
      try {
        v = e.evaluate({ request });
      } catch (err) {
        errors.push(err instanceof Error ? err.message : String(err));
        continue;
      }
      if (v === false) return { kind: 'skip' };
      if (v !== true) errors.push(`expression ${JSON.stringify(e.expression)} did not evaluate to a bool`);
    }
    return errors.length > 0 ? { kind: 'error', error: errors.join('; ') } : { kind: 'match' };
  }
}
