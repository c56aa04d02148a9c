// jwt[].claimMappings: username, groups, uid, extra (kube: validateClaimMappings).
import { claimsEnvironment, type CompiledExpression } from '../../lib/cel/index.js';
import type { ClaimMappings, ClaimOrExpression, ExtraMapping, PrefixedClaimOrExpression } from './authnconfig-types.js';
import { compileAt } from './authnconfig-cel.js';
import { list, object, string, type Errors } from './authnconfig-read.js';
import { fieldError, type FieldPath } from './fielderrors.js';

const RESERVED_DOMAINS = ['kubernetes.io', 'k8s.io', 'svc.io'];
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const PATH_CHARS = /^[A-Za-z0-9/\-._~%!$&'()*+,;=:]+$/;

function prefixedOrExpression(raw: unknown, p: FieldPath, required: boolean, errs: Errors): PrefixedClaimOrExpression | undefined {
  const o = object(raw, p, ['claim', 'prefix', 'expression'], errs);
  const claim = string(o?.claim, p.child('claim'), errs) ?? '';
  const prefix = string(o?.prefix, p.child('prefix'), errs);
  const expression = string(o?.expression, p.child('expression'), errs) ?? '';
  if (claim !== '' && expression !== '') {
    errs.push(fieldError.invalid(p, '', "claim and expression can't both be set"));
    return undefined;
  }
  if (claim !== '') {
    if (prefix === undefined) {
      errs.push(fieldError.required(p.child('prefix'), 'prefix is required when claim is set. It can be set to an empty string to disable prefixing'));
      return undefined;
    }
    return Object.freeze({ claim, prefix });
  }
  if (expression !== '') {
    if (prefix !== undefined && prefix !== '') {
      errs.push(fieldError.invalid(p.child('prefix'), prefix, 'may not be specified when expression is set'));
      return undefined;
    }
    const compiled = compileAt(claimsEnvironment, expression, p.child('expression'), errs);
    return compiled ? Object.freeze({ expression: compiled }) : undefined;
  }
  if (prefix !== undefined && prefix !== '') errs.push(fieldError.invalid(p.child('prefix'), prefix, 'may not be specified when claim is not set'));
  if (required) errs.push(fieldError.required(p.child('claim'), 'claim or expression is required'));
  return undefined;
}

function claimOrExpression(raw: unknown, p: FieldPath, errs: Errors): ClaimOrExpression | undefined {
  const o = object(raw, p, ['claim', 'expression'], errs);
  const claim = string(o?.claim, p.child('claim'), errs) ?? '';
  const expression = string(o?.expression, p.child('expression'), errs) ?? '';
  if (claim !== '' && expression !== '') {
    errs.push(fieldError.invalid(p, '', "claim and expression can't both be set"));
    return undefined;
  }
  if (claim !== '') return Object.freeze({ claim });
  if (expression === '') return undefined;
  const compiled = compileAt(claimsEnvironment, expression, p.child('expression'), errs);
  return compiled ? Object.freeze({ expression: compiled }) : undefined;
}

function extraKey(key: string, p: FieldPath, seen: Set<string>, errs: Errors): boolean {
  const before = errs.length;
  if (key !== key.toLowerCase()) errs.push(fieldError.invalid(p, key, 'key must be lowercase'));
  const slash = key.indexOf('/');
  const domain = slash < 0 ? key : key.slice(0, slash);
  if (RESERVED_DOMAINS.some((d) => domain === d || domain.endsWith(`.${d}`))) {
    errs.push(fieldError.forbidden(p, `${RESERVED_DOMAINS.join(', ')} and their subdomains are reserved for Kubernetes use`));
  } else if (slash < 1 || slash === key.length - 1) {
    errs.push(fieldError.invalid(p, key, 'must be a domain-prefixed path (such as "acme.io/foo")'));
  } else {
    if (!DNS1123_SUBDOMAIN.test(domain) || domain.length > 253)
      errs.push(fieldError.invalid(p, key, `prefix part "${domain}" must be a valid RFC 1123 subdomain`));
    if (!PATH_CHARS.test(key.slice(slash + 1))) errs.push(fieldError.invalid(p, key, 'path part must contain only valid path characters'));
  }
  if (seen.has(key)) errs.push(fieldError.duplicate(p, key));
  seen.add(key);
  return errs.length === before;
}

function extras(raw: unknown, p: FieldPath, errs: Errors): ExtraMapping[] {
  const out: ExtraMapping[] = [];
  const seen = new Set<string>();
  list(raw, p, errs).forEach((item, i) => {
    const ip = p.index(i);
    const o = object(item, ip, ['key', 'valueExpression'], errs);
    const key = string(o?.key, ip.child('key'), errs) ?? '';
    const expr = string(o?.valueExpression, ip.child('valueExpression'), errs) ?? '';
    let ok = true;
    if (key === '') {
      errs.push(fieldError.required(ip.child('key')));
      ok = false;
    } else ok = extraKey(key, ip.child('key'), seen, errs);
    if (expr === '') {
      errs.push(fieldError.required(ip.child('valueExpression')));
      return;
    }
    const compiled = compileAt(claimsEnvironment, expr, ip.child('valueExpression'), errs);
    if (ok && compiled) out.push(Object.freeze({ key, valueExpression: compiled }));
  });
  return out;
}

/** Expressions elsewhere in the authenticator that may check claims.email_verified. */
export interface EmailVerifiedWitnesses {
  readonly claimValidationExpressions: readonly CompiledExpression[];
}

export function validateClaimMappings(raw: unknown, p: FieldPath, witnesses: EmailVerifiedWitnesses, errs: Errors): ClaimMappings | undefined {
  const o = object(raw, p, ['username', 'groups', 'uid', 'extra'], errs);
  const before = errs.length;
  const username = prefixedOrExpression(o?.username, p.child('username'), true, errs);
  const groups = prefixedOrExpression(o?.groups, p.child('groups'), false, errs);
  const uid = claimOrExpression(o?.uid, p.child('uid'), errs);
  const extra = extras(o?.extra, p.child('extra'), errs);
  if (username && 'expression' in username && username.expression.reads('claims', 'email')) {
    const all = [username.expression, ...extra.map((e) => e.valueExpression), ...witnesses.claimValidationExpressions];
    if (!all.some((e) => e.reads('claims', 'email_verified'))) {
      errs.push(
        fieldError.invalid(
          p.child('username').child('expression'),
          'claims.email',
          'claims.email_verified must be used in claimMappings.username.expression or claimMappings.extra[*].valueExpression or claimValidationRules[*].expression when claims.email is used in claimMappings.username.expression',
        ),
      );
    }
  }
  if (errs.length > before || !username) return undefined;
  return Object.freeze({
    username,
    ...(groups ? { groups } : {}),
    ...(uid ? { uid } : {}),
    extra: Object.freeze(extra),
  });
}
