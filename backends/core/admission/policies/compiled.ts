// A stored ValidatingAdmissionPolicy or binding, parsed and compiled once
// per change: its match rules (for the lookup index and the matcher), and
// every CEL expression in the environment it runs in. A policy whose
// expressions do not compile (stored before a change of library, or written
// around validation) keeps the error: requests it matches fail by its
// failurePolicy, as kube's configuration errors do.
import { compileAdmission, RETURNS_BOOL, RETURNS_STRING, RETURNS_STRING_OR_NULL, type AdmissionDeclarations } from '../../../../lib/cel/admission.js';
import type { CompiledExpression } from '../../../../lib/cel/index.js';
import { usesIdent } from '../../../../lib/crdschema/celschema.js';
import { DYN, type CelT } from '../../../../lib/cel/types.js';
import type { KObject } from '../../../../lib/api/meta.js';
import { at, list, str } from '../../../../lib/registry/fields.js';
import { parseRule, parseSelector, type ParsedSelector, type Rule } from '../matching/index.js';

export interface NamedRule {
  readonly rule: Rule;
  /** resourceNames; empty = every name. */
  readonly names: ReadonlySet<string>;
}

/** A policy's matchConstraints or a binding's matchResources. */
export interface MatchResources {
  readonly rules: readonly NamedRule[];
  readonly exclude: readonly NamedRule[];
  readonly equivalent: boolean;
  readonly namespaceSelector: ParsedSelector;
  readonly objectSelector: ParsedSelector;
  /** A selector that did not parse: the policy or binding cannot be matched (a configuration error). */
  readonly selectorError?: string;
}

export interface Named {
  readonly name: string;
  readonly compiled: CompiledExpression;
}

export interface Validation {
  readonly expression: string;
  readonly compiled: CompiledExpression;
  readonly message: string;
  readonly messageExpression?: CompiledExpression;
  /** Forbidden, Invalid or RequestEntityTooLarge; undefined = Invalid. */
  readonly reason?: string;
}

export interface AuditAnnotation {
  readonly key: string;
  readonly valueExpression: string;
  readonly compiled: CompiledExpression;
}

export interface CompiledPolicy {
  readonly name: string;
  readonly failurePolicy: 'Fail' | 'Ignore';
  readonly paramKind?: { readonly apiVersion: string; readonly kind: string };
  readonly match: MatchResources;
  readonly matchConditions: readonly Named[];
  readonly variables: readonly Named[];
  readonly validations: readonly Validation[];
  readonly auditAnnotations: readonly AuditAnnotation[];
  /** Why the policy cannot run (an expression that does not compile). */
  readonly configError?: string;
  /** Whether any expression reads these: the request builds them only then. */
  readonly uses: { readonly authorizer: boolean; readonly namespaceObject: boolean };
}

export interface CompiledBinding {
  readonly name: string;
  readonly policyName: string;
  readonly paramRef?: {
    readonly name: string;
    readonly namespace: string;
    /** undefined = no selector (a name is given). */
    readonly selector?: ParsedSelector | 'everything';
    readonly notFound: 'Deny' | 'Allow';
  };
  readonly match?: MatchResources;
  readonly actions: ReadonlySet<string>;
  /** The actions in the binding's order (the validation_failure annotation lists them so). */
  readonly actionList: readonly string[];
}

function namedRules(v: unknown): NamedRule[] {
  return (Array.isArray(v) ? v : []).map((r) => ({
    rule: parseRule(r),
    names: new Set(list(r, 'resourceNames').filter((n): n is string => typeof n === 'string')),
  }));
}

function selector(v: unknown): { sel: ParsedSelector; error?: string } {
  try {
    return { sel: parseSelector(v) };
  } catch (err) {
    return { sel: undefined, error: err instanceof Error ? err.message : String(err) };
  }
}

export function parseMatchResources(mr: unknown): MatchResources {
  const ns = selector(at(mr, 'namespaceSelector'));
  const obj = selector(at(mr, 'objectSelector'));
  const error = ns.error ?? obj.error;
  return {
    rules: namedRules(at(mr, 'resourceRules')),
    exclude: namedRules(at(mr, 'excludeResourceRules')),
    equivalent: str(mr, 'matchPolicy') !== 'Exact',
    namespaceSelector: ns.sel,
    objectSelector: obj.sel,
    ...(error !== undefined ? { selectorError: error } : {}),
  };
}

export function compilePolicy(obj: KObject): CompiledPolicy {
  const spec = at(obj, 'spec');
  const pk = at(spec, 'paramKind');
  const hasParams = pk !== undefined && pk !== null;
  const errors: string[] = [];
  const compile = (expr: string, d: AdmissionDeclarations, returns: Parameters<typeof compileAdmission>[2], types: Map<string, CelT>) => {
    const r = compileAdmission(expr, d, returns, { variables: types });
    if ('error' in r) {
      errors.push(r.error);
      return undefined;
    }
    return r;
  };
  const varDecls = list(spec, 'variables');
  const decls: AdmissionDeclarations = { params: hasParams, authorizer: true, variables: varDecls.length > 0 };
  const types = new Map<string, CelT>();
  const variables: Named[] = [];
  for (const v of varDecls) {
    const r = compile(str(v, 'expression'), decls, 'any', types);
    types.set(str(v, 'name'), r?.type ?? DYN);
    if (r) variables.push({ name: str(v, 'name'), compiled: r.compiled });
  }
  const matchConditions: Named[] = [];
  for (const c of list(spec, 'matchConditions')) {
    const r = compile(str(c, 'expression'), { ...decls, variables: false }, RETURNS_BOOL, new Map());
    if (r) matchConditions.push({ name: str(c, 'name'), compiled: r.compiled });
  }
  const validations: Validation[] = [];
  for (const v of list(spec, 'validations')) {
    const r = compile(str(v, 'expression'), decls, RETURNS_BOOL, types);
    const me = str(v, 'messageExpression').trim() ? compile(str(v, 'messageExpression'), { ...decls, authorizer: false }, RETURNS_STRING, types) : undefined;
    const reason = at(v, 'reason');
    if (r)
      validations.push({
        expression: str(v, 'expression'),
        compiled: r.compiled,
        message: str(v, 'message'),
        ...(me ? { messageExpression: me.compiled } : {}),
        ...(typeof reason === 'string' ? { reason } : {}),
      });
  }
  const auditAnnotations: AuditAnnotation[] = [];
  for (const a of list(spec, 'auditAnnotations')) {
    const r = compile(str(a, 'valueExpression').trim(), decls, RETURNS_STRING_OR_NULL, types);
    if (r) auditAnnotations.push({ key: str(a, 'key'), valueExpression: str(a, 'valueExpression'), compiled: r.compiled });
  }
  const all = [
    ...variables.map((v) => v.compiled),
    ...matchConditions.map((c) => c.compiled),
    ...validations.flatMap((v) => (v.messageExpression ? [v.compiled, v.messageExpression] : [v.compiled])),
    ...auditAnnotations.map((a) => a.compiled),
  ];
  const uses = {
    authorizer: all.some((c) => usesIdent(c.parsed, 'authorizer')),
    namespaceObject: all.some((c) => usesIdent(c.parsed, 'namespaceObject')),
  };
  const match = parseMatchResources(at(spec, 'matchConstraints'));
  if (match.selectorError) errors.push(match.selectorError);
  return {
    name: obj.metadata.name ?? '',
    failurePolicy: str(spec, 'failurePolicy') === 'Ignore' ? 'Ignore' : 'Fail',
    ...(hasParams ? { paramKind: { apiVersion: str(pk, 'apiVersion'), kind: str(pk, 'kind') } } : {}),
    match,
    matchConditions,
    variables,
    validations,
    auditAnnotations,
    ...(errors.length ? { configError: errors[0] } : {}),
    uses,
  };
}

export function compileBinding(obj: KObject): CompiledBinding {
  const spec = at(obj, 'spec');
  const ref = at(spec, 'paramRef');
  const mr = at(spec, 'matchResources');
  const actionList = list(spec, 'validationActions').filter((a): a is string => typeof a === 'string');
  let paramRef: CompiledBinding['paramRef'];
  if (ref !== undefined && ref !== null) {
    const sel = at(ref, 'selector');
    paramRef = {
      name: str(ref, 'name'),
      namespace: str(ref, 'namespace'),
      ...(sel !== undefined && sel !== null ? { selector: selector(sel).sel ?? 'everything' } : {}),
      notFound: str(ref, 'parameterNotFoundAction') === 'Allow' ? 'Allow' : 'Deny',
    };
  }
  return {
    name: obj.metadata.name ?? '',
    policyName: str(spec, 'policyName'),
    ...(paramRef ? { paramRef } : {}),
    ...(mr !== undefined && mr !== null ? { match: parseMatchResources(mr) } : {}),
    actions: new Set(actionList),
    actionList,
  };
}
