// claimValidationRules: `claim` + `requiredValue` (the claim must be a string
// equal to the value) and CEL expressions over `claims` that must be true.
import { kindOf, type CelInput } from '../../../lib/cel/index.js';
import type { ClaimValidationRule } from '../../config/authnconfig-types.js';

export function checkClaims(rules: readonly ClaimValidationRule[], claims: Readonly<Record<string, unknown>>, celClaims: () => CelInput): void {
  for (const rule of rules) {
    if ('claim' in rule) {
      const v = claims[rule.claim];
      if (v === undefined) throw new Error(`required claim ${JSON.stringify(rule.claim)} not present`);
      if (typeof v !== 'string') throw new Error(`required claim ${JSON.stringify(rule.claim)} is not a string`);
      if (v !== rule.requiredValue) throw new Error(`required claim ${JSON.stringify(rule.claim)} value does not match`);
      continue;
    }
    const result = rule.expression.evaluate({ claims: celClaims() });
    if (typeof result !== 'boolean') throw new Error(`claim validation expression must return a boolean, got ${kindOf(result)}`);
    if (!result) throw new Error(`claim validation rule failed: ${rule.message ?? `expression ${JSON.stringify(rule.expression.expression)} is false`}`);
  }
}
