// The ValidatingAdmissionPolicy plugin (kube's validating policy
// dispatcher): for the policies whose rules name the request's resource (an
// index lookup: nothing else is paid by a request no policy names), match
// the policy and each of its bindings, collect params, evaluate, then act on
// each failed validation as the binding says — Deny (the first denial is the
// answer, with kube's text, reason and code), Warn (a Warning header), Audit
// (the validation_failure audit annotation) — and publish the policies'
// audit annotations. Configuration errors and evaluation errors follow the
// policy's failurePolicy.
import type { RequestAuthorizer } from '../../../../lib/api/authorization.js';
import type { KObject } from '../../../../lib/api/meta.js';
import { forbidden, StatusError, type StatusReason } from '../../../../lib/api/status.js';
import { jsonValue, requestAuthorizer, requestValue } from '../../../../lib/cel/admission.js';
import type { CelInput } from '../../../../lib/cel/index.js';
import { AuthorizerSession } from '../../../../lib/cel/authz.js';
import { served } from '../../conversion.js';
import type { CoreEnv } from '../../env.js';
import { objectKey } from '../../keys.js';
import { getCachedFirst } from '../../store/types.js';
import { isExemptFromAdmission, type Invocation } from '../matching/index.js';
import type { AdmissionAttributes, ValidatingPlugin } from '../types.js';
import { optionsOf } from '../webhooks/review.js';
import { policyCache, type PolicyCache, type PolicyHook } from './cache.js';
import type { CompiledBinding, CompiledPolicy } from './compiled.js';
import { evaluatePolicy, type Decision, type PolicyResult } from './evaluate.js';
import { matchResources } from './match.js';
import { observeCheck } from './metrics.js';
import { collectParams } from './params.js';

const VALIDATION_FAILURE = 'validation.policy.admission.k8s.io/validation_failure';
const MAX_VALIDATION_FAILURES = 50;

/** One evaluation to make: a policy, a binding, the match, a param, the objects in the matched version. */
interface Invoke {
  readonly policy: CompiledPolicy;
  readonly binding: CompiledBinding;
  readonly match: Invocation;
  readonly param: KObject | null;
  readonly objects: Versioned;
}

/** The request's object and old object as CEL inputs, in one version. */
interface Versioned {
  readonly object: CelInput;
  readonly oldObject: CelInput;
}

/** kube's NewVersionedAttributes, kept per matched kind: a match through another version sees the objects converted to it. */
function versions(a: AdmissionAttributes, env: CoreEnv): (m: Invocation) => Promise<Versioned> {
  const made = new Map<string, Promise<Versioned>>();
  const own: Versioned = { object: jsonValue(a.object ?? null), oldObject: jsonValue(a.oldObject ?? null) };
  return (m) => {
    const t = m.type;
    if (!t) return Promise.resolve(own);
    const key = `${t.group}/${t.version}`;
    let v = made.get(key);
    if (!v) {
      const convert = async (o: KObject | undefined) => jsonValue(o ? await served(env, t, o) : null);
      v = (async () => ({ object: await convert(a.object), oldObject: await convert(a.oldObject) }))();
      made.set(key, v);
    }
    return v.catch((err: unknown) => {
      throw new Error(`failed to convert object version: ${err instanceof Error ? err.message : String(err)}`);
    });
  };
}

/** A denial, from an evaluation or a configuration error. */
interface Denied {
  readonly policy: string;
  readonly binding?: string;
  readonly message: string;
  readonly reason?: string;
}

const CODES: Readonly<Record<string, number>> = { Forbidden: 403, Invalid: 422, RequestEntityTooLarge: 413 };

/** kube's admission.NewForbidden. */
function denialOf(a: AdmissionAttributes, why: string): StatusError {
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

async function namespaceObject(a: AdmissionAttributes, env: CoreEnv): Promise<KObject | null> {
  if (a.namespace === '' || (a.kind.group === '' && a.kind.version === 'v1' && a.kind.kind === 'Namespace')) return null;
  const t = env.registry.lookup('', 'v1', 'namespaces');
  return (t && (await getCachedFirst(env.store, objectKey(t, '', a.namespace)))) ?? null;
}

/** Matches and params of the candidates; configuration errors as denials (failurePolicy Fail) or nothing (Ignore). */
async function gather(hooks: readonly PolicyHook[], a: AdmissionAttributes, env: CoreEnv, cache: PolicyCache, denied: Denied[]): Promise<Invoke[]> {
  const out: Invoke[] = [];
  const configError = (p: CompiledPolicy, b: CompiledBinding | undefined, err: unknown) => {
    if (p.failurePolicy === 'Ignore') return;
    const why = err instanceof Error ? err.message : String(err);
    denied.push({
      policy: p.name,
      ...(b ? { binding: b.name } : {}),
      message: b ? `failed to configure binding: ${why}` : `failed to configure policy: ${why}`,
    });
  };
  const versioned = versions(a, env);
  for (const { policy, bindings } of hooks) {
    let match: Invocation | undefined;
    try {
      match = await matchResources(policy.match, a, env);
    } catch (err) {
      configError(policy, undefined, err);
      continue;
    }
    if (!match) continue;
    for (const binding of bindings) {
      try {
        if (binding.match && !(await matchResources(binding.match, a, env))) continue;
        const params = await collectParams(policy, binding, a, env, cache);
        const objects = await versioned(match);
        for (const param of params) out.push({ policy, binding, match, param, objects });
      } catch (err) {
        configError(policy, binding, err);
      }
    }
  }
  return out;
}

/** How long a write waits for the first list of policies and bindings before it is refused. */
const SYNC_WAIT_MS = 10_000;

/** kube refuses writes until its policy source has synced: `not yet ready to handle request`. */
async function untilSynced(cache: PolicyCache, a: AdmissionAttributes): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), SYNC_WAIT_MS);
    timer.unref();
  });
  const r = await Promise.race([cache.ready, late]);
  clearTimeout(timer);
  if (r === 'late') throw denialOf(a, 'not yet ready to handle request');
}

export function validatingAdmissionPolicy(authorizer: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'ValidatingAdmissionPolicy',
    async validate(a, env) {
      if (isExemptFromAdmission(a.resource)) return;
      const cache = policyCache(env);
      if (!cache.synced) await untilSynced(cache, a);
      const hooks = cache.index.candidates(a.resource.group, a.resource.resource);
      if (hooks.length === 0) return;
      const denied: Denied[] = [];
      const invokes = await gather(hooks, a, env, cache, denied);
      if (invokes.length === 0 && denied.length === 0) return;
      const nsObject = invokes.some((inv) => inv.policy.uses.namespaceObject) ? jsonValue(await namespaceObject(a, env)) : null;
      const options = optionsOf(a);
      const session = new AuthorizerSession(authorizer, a.user);
      const results = await session.run(() =>
        invokes.map((inv): PolicyResult => {
          const req = {
            kind: inv.match.kind,
            resource: inv.match.resource,
            subResource: a.subresource,
            requestKind: a.kind,
            requestResource: a.resource,
            name: a.name,
            namespace: a.namespace,
            operation: a.operation,
            userInfo: a.user,
            dryRun: a.dryRun,
            options,
          };
          return evaluatePolicy(inv.policy, {
            ...inv.objects,
            request: requestValue(req),
            namespaceObject: nsObject,
            params: jsonValue(inv.param),
            authorizer: inv.policy.uses.authorizer ? requestAuthorizer(req) : null,
          });
        }),
      );
      act(a, invokes, results, denied);
    },
  };
}

/** Go's json.Marshal output: `<`, `>`, `&`, U+2028 and U+2029 escaped as \u00XX. */
function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Deny, Warn and Audit as the bindings say; annotations; metrics; throws the first denial. */
function act(a: AdmissionAttributes, invokes: readonly Invoke[], results: readonly PolicyResult[], denied: Denied[]): void {
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
