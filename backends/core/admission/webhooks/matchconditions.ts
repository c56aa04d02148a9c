// A webhook's matchConditions, as kube evaluates them before calling it:
// compiled once per configuration change (they were compiled at write, so an
// error here means a configuration stored before that check), evaluated on
// the request in the webhook's version with `object`, `oldObject`, `request`
// and `authorizer` (the front door's authorizer, asked for the checks an
// expression makes). A false condition skips the webhook; errors without a
// false condition fail the webhook's way (failurePolicy).
import type { RequestAuthorizer } from '../../../../lib/api/authorization.js';
import type { KObject } from '../../../../lib/api/meta.js';
import { compileAdmission, jsonValue, requestAuthorizer, requestValue, RETURNS_BOOL } from '../../../../lib/cel/admission.js';
import { AuthorizerSession } from '../../../../lib/cel/authz.js';
import { CelEvalError, type CompiledExpression } from '../../../../lib/cel/index.js';
import type { Invocation } from '../matching/index.js';
import type { AdmissionAttributes } from '../types.js';
import { optionsOf } from './review.js';

export type CompiledCondition = { readonly name: string } & ({ readonly compiled: CompiledExpression } | { readonly error: string });

const DECLARATIONS = { params: false, authorizer: true, variables: false };

export function compileConditions(conds: ReadonlyArray<{ name: string; expression: string }>): CompiledCondition[] {
  return conds.map((c) => {
    const r = compileAdmission(c.expression, DECLARATIONS, RETURNS_BOOL);
    return 'error' in r ? { name: c.name, error: r.error } : { name: c.name, compiled: r.compiled };
  });
}

export type ConditionResult = { readonly matches: boolean } | { readonly error: string };

export async function evaluateConditions(
  conds: readonly CompiledCondition[],
  a: AdmissionAttributes,
  inv: Invocation,
  object: KObject | undefined,
  oldObject: KObject | undefined,
  authorizer: RequestAuthorizer | undefined,
): Promise<ConditionResult> {
  const request = { ...inv, subResource: a.subresource, requestKind: a.kind, requestResource: a.resource };
  const bindings = {
    object: jsonValue(object),
    oldObject: jsonValue(oldObject),
    request: requestValue({
      ...request,
      name: a.name,
      namespace: a.namespace,
      operation: a.operation,
      userInfo: a.user,
      dryRun: a.dryRun,
      options: optionsOf(a),
    }),
    namespaceObject: null,
    authorizer: requestAuthorizer({ resource: inv.resource, subResource: a.subresource, namespace: a.namespace, name: a.name }),
  };
  const errors: string[] = [];
  const evalAll = (): boolean => {
    errors.length = 0;
    for (const c of conds) {
      if ('error' in c) {
        errors.push(`${c.name}: ${c.error}`);
        continue;
      }
      try {
        if (c.compiled.evaluate(bindings) === false) return false;
      } catch (err) {
        if (!(err instanceof CelEvalError)) throw err;
        errors.push(`${c.name}: ${err.detail}`);
      }
    }
    return true;
  };
  const noAuthorizer: RequestAuthorizer = { authorize: () => Promise.resolve({ kind: 'no-opinion', reason: 'no authorizer' }) };
  const matches = await new AuthorizerSession(authorizer ?? noAuthorizer, a.user).run(evalAll);
  if (!matches) return { matches: false };
  return errors.length > 0 ? { error: errors.join(', ') } : { matches: true };
}
