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
import { act, type Denied, type Invoked } from './actions.js';
import type { PolicyCache, PolicyHook } from './cache.js';
import type { CompiledBinding, CompiledPolicy } from './compiled.js';
import { evaluatePolicy, type PolicyResult } from './evaluate.js';
import { matchResources } from './match.js';
import { collectParams, paramType } from './params.js';

/** One evaluation to make: a policy, a binding, the match, a param, the objects in the matched version. */
interface Invoke extends Invoked {
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
    // A paramKind no served type has is the policy's configuration error (kube's policy source).
    if (policy.paramKind) {
      try {
        paramType(policy.paramKind, env.registry);
      } catch (err) {
        configError(policy, undefined, err);
        continue;
      }
    }
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

export function validatingAdmissionPolicy(authorizer: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'ValidatingAdmissionPolicy',
    validate(a, env) {
      const cache = env.admissionPolicies;
      // Nothing to do costs one memoized lookup and no promise (the configurations themselves are exempt).
      if (!cache || isExemptFromAdmission(a.resource)) return undefined;
      const hooks = cache.index.candidates(a.resource.group, a.resource.resource);
      if (hooks.length === 0) return undefined;
      return admit(a, env, cache, hooks, authorizer);
    },
  };
}

async function admit(a: AdmissionAttributes, env: CoreEnv, cache: PolicyCache, hooks: readonly PolicyHook[], authorizer: RequestAuthorizer): Promise<void> {
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
}
