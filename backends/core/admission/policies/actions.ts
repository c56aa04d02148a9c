// What the policies' decisions do to a write, as kube's validating policy
// dispatcher does it: Deny (the first denial is the answer, with kube's
// text, the validation's reason and its code), Warn (a Warning header),
// Audit (the validation_failure audit annotation), the policies' own audit
// annotations (`<policy>/<key>`), and the check metrics.
import type { KObject } from '../../../../lib/api/meta.js';
import { forbidden, StatusError, type StatusReason } from '../../../../lib/api/status.js';
import type { Invocation } from '../matching/index.js';
import type { AdmissionAttributes } from '../types.js';
import type { CompiledBinding, CompiledPolicy } from './compiled.js';
import type { Decision, PolicyResult } from './evaluate.js';
import { observeCheck } from './metrics.js';

const VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';
const MAX_VALIDATION_FAILURES = 50;

/** What was evaluated: a policy for a binding (and a param, and a match). */
export interface Invoked {
  readonly policy: CompiledPolicy;
  readonly binding: CompiledBinding;
  readonly match: Invocation;
  readonly param: KObject | null;
}

/** A denial, from an evaluation or a configuration error. */
export interface Denied {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
  readonly reason?: string;
}

const CODES: Readonly<Record<string, number>> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

/** kube's admission.NewForbidden. */
export function denialOf(a: AdmissionAttributes, why: string): StatusError {
  const name = a.name || (a.object?.metadata.generateName ?? '') || 'Unknown';
  return forbidden({ group: a.resource.group, resource: a.resource.resource }, name, why);
}

/** kube's admission.NewForbidden with the decision's reason and code, and the message as the one cause. */
function denial(a: AdmissionAttributes, d: Denied): StatusError {
  const text = d.binding
    ? `ValidatingAdmissionPolicy '${d.policy}' with binding '${d.binding}' denied request: ${d.message}`
    : `ValidatingAdmissionPolicy '${d.policy}' denied request: ${d.message}`;
  const base = denialOf(a, text);
  // The reasons a validation may name (Forbidden, Invalid, RequestEntityTooLarge) are Status reasons.
  const reason = (d.reason || 'Invalid') as StatusReason;
  return new StatusError(CODES[reason] ?? 422, reason, base.message, { ...base.status.details, causes: [{ message: text }] });
}

/** Go's json.Marshal output: `<`, `>`, `&`, U+2028 and U+2029 escaped as \u00XX. */
function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Deny, Warn and Audit as the bindings say; annotations; metrics; throws the first denial. */
export function act(a: AdmissionAttributes, invokes: readonly Invoked[], results: readonly PolicyResult[], denied: Denied[]): void {
  const failures: Array<{ message: string; policy: string; binding: string; expressionIndex: number; validationActions: readonly string[] }> = [];
  const published = new Map<string, string[]>();
  results.forEach((r, i) => {
    const { policy, binding } = invokes[i]!;
    const observe = (d: Decision, action: 'allow' | 'deny' | 'audit' | 'warn') => observeCheck(policy.name, binding.name, d.errorType, action, d.elapsedMs);
    for (const d of r.decisions) {
      if (d.action === 'admit') {
        if (d.evaluation === 'error') observe(d, 'allow');
        continue;
      }
      // A failed audit annotation denies whatever the actions; any other decision goes as the binding says.
      const actions = d.direct ? ['Deny'] : binding.actionList;
      for (const action of actions) {
        if (action === 'Deny') {
          denied.push({ policy: policy.name, binding: binding.name, message: d.message, ...(d.reason ? { reason: d.reason } : {}) });
          observe(d, 'deny');
        } else if (action === 'Audit') {
          failures.push({
            message: d.message,
            policy: binding.policyName,
            binding: binding.name,
            expressionIndex: d.index ?? 0,
            validationActions: binding.actionList,
          });
          observe(d, 'audit');
        } else if (action === 'Warn') {
          a.warn?.(`Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${d.message}`);
          observe(d, 'warn');
        }
      }
    }
    for (const { key, value } of r.annotations) {
      const k = `${policy.name}/${key}`;
      const values = published.get(k) ?? [];
      if (!values.includes(value)) values.push(value);
      published.set(k, values);
    }
  });
  for (const [k, values] of published) a.annotate?.(k, values.join(', '));
  if (failures.length > 0) a.annotate?.(VALIDATION_FAILURE, goJson(failures.slice(0, MAX_VALIDATION_FAILURES)));
  if (denied.length > 0) throw denial(a, denied[0]!);
}
