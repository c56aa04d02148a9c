// jwt[].claimValidationRules and jwt[].userValidationRules.
import { claimsEnvironment, userEnvironment } from '../../lib/cel/index.js';
import type { ClaimValidationRule, UserValidationRule } from './authnconfig-types.js';
import { compileAt } from './authnconfig-cel.js';
import { list, object, string, type Errors } from './authnconfig-read.js';
import { fieldError, type FieldPath } from './fielderrors.js';

export function validateClaimRules(raw: unknown, p: FieldPath, errs: Errors): ClaimValidationRule[] {
  const out: ClaimValidationRule[] = [];
  const claims = new Set<string>();
  const expressions = new Set<string>();
  list(raw, p, errs).forEach((item, i) => {
    const ip = p.index(i);
    const o = object(item, ip, ['claim', 'requiredValue', 'expression', 'message'], errs);
    const claim = string(o?.claim, ip.child('claim'), errs) ?? '';
    const requiredValue = string(o?.requiredValue, ip.child('requiredValue'), errs) ?? '';
    const expression = string(o?.expression, ip.child('expression'), errs) ?? '';
    const message = string(o?.message, ip.child('message'), errs) ?? '';
    if (claim !== '' && expression !== '') {
      errs.push(fieldError.invalid(ip, '', "claim and expression can't both be set"));
    } else if (claim !== '') {
      if (message !== '') errs.push(fieldError.invalid(ip.child('message'), message, "message can't be set when claim is set"));
      if (claims.has(claim)) errs.push(fieldError.duplicate(ip.child('claim'), claim));
      else out.push(Object.freeze({ claim, requiredValue }));
      claims.add(claim);
    } else if (expression !== '') {
      if (requiredValue !== '') errs.push(fieldError.invalid(ip.child('requiredValue'), requiredValue, "requiredValue can't be set when expression is set"));
      if (expressions.has(expression)) {
        errs.push(fieldError.duplicate(ip.child('expression'), expression));
        return;
      }
      expressions.add(expression);
      const compiled = compileAt(claimsEnvironment, expression, ip.child('expression'), errs);
      if (compiled) out.push(Object.freeze({ expression: compiled, ...(message ? { message } : {}) }));
    } else {
      errs.push(fieldError.required(ip, 'claim or expression is required'));
    }
  });
  return out;
}

export function validateUserRules(raw: unknown, p: FieldPath, errs: Errors): UserValidationRule[] {
  const out: UserValidationRule[] = [];
  const seen = new Set<string>();
  list(raw, p, errs).forEach((item, i) => {
    const ip = p.index(i);
    const o = object(item, ip, ['expression', 'message'], errs);
    const expression = string(o?.expression, ip.child('expression'), errs) ?? '';
    const message = string(o?.message, ip.child('message'), errs) ?? '';
    if (expression === '') {
      errs.push(fieldError.required(ip.child('expression')));
      return;
    }
    if (seen.has(expression)) {
      errs.push(fieldError.duplicate(ip.child('expression'), expression));
      return;
    }
    seen.add(expression);
    const compiled = compileAt(userEnvironment, expression, ip.child('expression'), errs);
    if (compiled) out.push(Object.freeze({ expression: compiled, ...(message ? { message } : {}) }));
  });
  return out;
}
