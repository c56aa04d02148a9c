// The CEL environment of admission expressions (kube's
// k8s.io/apiserver/pkg/admission/plugin/cel): ValidatingAdmissionPolicy
// validations, variables, match conditions, audit annotations and message
// expressions, and admission webhooks' match conditions. Variables `object`,
// `oldObject`, `request` (kube's AdmissionRequest as CEL sees it),
// `namespaceObject`, and as the configuration declares them `params`,
// `authorizer` with `authorizer.requestResource` (authz.ts), `variables`.
// Compile at write with kube's messages, evaluate per request.
import { CelScalar, type CelType } from '@bufbuild/cel';
import { authzFunctions, AUTHORIZER_TYPE, RESOURCE_CHECK_TYPE } from './authz.js';
import { CelEnvironment, type CompiledExpression } from './environment.js';
import { CelCompileError } from './errors.js';
import { BOOL, DYN, formatType, INT, listOf, mapOf, NULL, opaque, STRING, TIMESTAMP, type CelT } from './types.js';

/** Which optional variables an expression may use (kube's OptionalVariableDeclarations, plus `variables`). */
export interface AdmissionDeclarations {
  /** `params`: the policy has a paramKind. */
  readonly params: boolean;
  /** `authorizer` and `authorizer.requestResource`. */
  readonly authorizer: boolean;
  /** `variables`: the policy's composited variables. */
  readonly variables: boolean;
}

/** A declared object type for the checker; undeclared members are refused. */
export function objectType(name: string, fields: Readonly<Record<string, CelT>>): CelT {
  const m = new Map(Object.entries(fields));
  return { kind: 'object', name, open: false, field: (f) => m.get(f) };
}

const GVK = objectType('kubernetes.GroupVersionKind', { group: STRING, version: STRING, kind: STRING });
const GVR = objectType('kubernetes.GroupVersionResource', { group: STRING, version: STRING, resource: STRING });
const USER_INFO = objectType('kubernetes.UserInfo', { username: STRING, uid: STRING, groups: listOf(STRING), extra: mapOf(STRING, listOf(STRING)) });

/** kube's BuildRequestType. */
export const REQUEST_TYPE = objectType('kubernetes.AdmissionRequest', {
  kind: GVK,
  resource: GVR,
  subResource: STRING,
  requestKind: GVK,
  requestResource: GVR,
  requestSubResource: STRING,
  name: STRING,
  namespace: STRING,
  operation: STRING,
  userInfo: USER_INFO,
  dryRun: BOOL,
  options: DYN,
});

const STRING_MAP = mapOf(STRING, STRING);
/** kube's BuildNamespaceType. */
export const NAMESPACE_TYPE = objectType('kubernetes.Namespace', {
  metadata: objectType('kubernetes.NamespaceMetadata', {
    name: STRING,
    generateName: STRING,
    namespace: STRING,
    labels: STRING_MAP,
    annotations: STRING_MAP,
    UID: STRING,
    creationTimestamp: TIMESTAMP,
    deletionGracePeriodSeconds: INT,
    deletionTimestamp: TIMESTAMP,
    generation: INT,
    resourceVersion: STRING,
    finalizers: listOf(STRING),
  }),
  spec: objectType('kubernetes.NamespaceSpec', { finalizers: listOf(STRING) }),
  status: objectType('kubernetes.NamespaceStatus', {
    conditions: listOf(
      objectType('kubernetes.NamespaceCondition', { status: STRING, type: STRING, lastTransitionTime: TIMESTAMP, message: STRING, reason: STRING }),
    ),
    phase: STRING,
  }),
});

const environments = new Map<string, CelEnvironment>();

/** The environment of one set of declarations, built once. */
export function admissionEnvironment(d: AdmissionDeclarations): CelEnvironment {
  const key = `${d.params}/${d.authorizer}/${d.variables}`;
  let env = environments.get(key);
  if (!env) {
    const decls: Record<string, CelType> = { object: CelScalar.DYN, oldObject: CelScalar.DYN, request: CelScalar.DYN, namespaceObject: CelScalar.DYN };
    if (d.params) decls.params = CelScalar.DYN;
    if (d.authorizer) decls.authorizer = CelScalar.DYN;
    if (d.variables) decls.variables = CelScalar.DYN;
    env = new CelEnvironment(`admission(${key})`, decls, { cacheSize: 4096, funcs: d.authorizer ? authzFunctions : [], limits: { timeoutMs: 1000 } });
    environments.set(key, env);
  }
  return env;
}

/** What an expression must evaluate to (kube's ExpressionAccessor.ReturnTypes); `any` takes every type. */
export type ReturnTypes = readonly CelT[] | 'any';
export const RETURNS_BOOL: ReturnTypes = [BOOL];
export const RETURNS_STRING: ReturnTypes = [STRING];
/** An audit annotation's valueExpression: a string, or null for no annotation. */
export const RETURNS_STRING_OR_NULL: ReturnTypes = [STRING, NULL];

/** The checker's types of what is known at write: object and params as their schemas say (dyn by default), earlier variables. */
export interface DeclaredTypes {
  readonly object?: CelT;
  readonly params?: CelT;
  /** `variables.<name>` of the variables defined before this expression, in order. */
  readonly variables?: ReadonlyMap<string, CelT>;
}

export type AdmissionCompiled = { readonly compiled: CompiledExpression; readonly type: CelT } | { readonly error: string };

/**
 * Compiles and type-checks an expression as kube does at write; the error is
 * kube's detail (`compilation failed: ERROR: <input>:1:1: …`, `must evaluate
 * to bool but got int`), for a field error naming the expression's field.
 */
export function compileAdmission(expression: string, d: AdmissionDeclarations, returns: ReturnTypes, types: DeclaredTypes = {}): AdmissionCompiled {
  let compiled: CompiledExpression;
  try {
    compiled = admissionEnvironment(d).compile(expression);
  } catch (err) {
    if (err instanceof CelCompileError) return { error: `compilation failed: ${cgoIssue(expression, err)}` };
    throw err;
  }
  const vars = new Map<string, CelT>([
    ['object', types.object ?? DYN],
    ['oldObject', types.object ?? DYN],
    ['request', REQUEST_TYPE],
    ['namespaceObject', NAMESPACE_TYPE],
  ]);
  if (d.params) vars.set('params', types.params ?? DYN);
  if (d.authorizer) {
    vars.set('authorizer', opaque(AUTHORIZER_TYPE));
    vars.set('authorizer.requestResource', opaque(RESOURCE_CHECK_TYPE));
  }
  if (d.variables) vars.set('variables', objectType('kubernetes.variables', Object.fromEntries(types.variables ?? [])));
  const checked = compiled.check(vars);
  if (checked.problem !== undefined) return { error: `compilation failed: ${checked.problem}` };
  if (returns !== 'any' && !returns.some((t) => formatType(t) === formatType(checked.type))) {
    const want = returns.length === 1 ? formatType(returns[0]!) : `one of [${returns.map(formatType).join(' ')}]`;
    return { error: `must evaluate to ${want} but got ${formatType(checked.type)}` };
  }
  return { compiled, type: checked.type };
}

/** A compile error as cel-go's issues render it: `ERROR: <input>:l:c: message` and the source line with a caret. */
function cgoIssue(expression: string, err: CelCompileError): string {
  if (err.detail.startsWith('ERROR:')) return err.detail;
  const undeclared = /^undeclared reference to (function )?"(.+)"$/.exec(err.detail);
  if (undeclared) {
    const name = undeclared[2]!;
    // cel-go places a variable at its name and a function at its '('.
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const re = new RegExp(undeclared[1] ? `(?<!\\w)${escaped}\\s*\\(` : `(?<![.\\w])${escaped}(?!\\w)`);
    const m = re.exec(expression);
    const at = m ? m.index + (undeclared[1] ? m[0].length - 1 : 0) : 0;
    return render(expression, at, `undeclared reference to '${name}' (in container '')`);
  }
  const m = /^(\d+):(\d+): ([\s\S]*)$/.exec(err.detail);
  if (!m) return `ERROR: <input>:1:1: ${err.detail}`;
  const lines = expression.split('\n');
  let at = Number(m[2]) - 1;
  for (let i = 0; i < Number(m[1]) - 1; i++) at += (lines[i]?.length ?? 0) + 1;
  return render(expression, at, m[3]!);
}

function render(expression: string, at: number, message: string): string {
  const before = expression.slice(0, at).split('\n');
  const line = before.length;
  const col = before[before.length - 1]!.length;
  const text = expression.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

export { jsonValue, requestAuthorizer, requestValue, type AdmissionRequestInput } from './admissionvalues.js';
