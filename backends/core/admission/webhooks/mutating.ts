// The MutatingAdmissionWebhook plugin: matching mutating webhooks are called
// one after the other, each on the object the previous ones made; a JSONPatch
// answer is applied (in the version the webhook was called in), may not
// touch the object's identity, and is decoded as kube decodes it (unknown
// fields dropped, wrong types refused). reinvocationPolicy IfNeeded: once a webhook
// changed the object, the IfNeeded webhooks called before it are called
// once more, in order, after the first round (kube's reinvocation).
import type { RequestAuthorizer } from '../../../../lib/api/authorization.js';
import type { KObject } from '../../../../lib/api/meta.js';
import { isPlainObject } from '../../../../lib/api/meta.js';
import { internalError } from '../../../../lib/api/status.js';
import { applyJsonPatch, parseJsonPatch } from '../../../../lib/patch/json.js';
import { pruneAndValidate } from '../../../../lib/validation/structural.js';
import type { CoreEnv } from '../../env.js';
import { served } from '../../conversion.js';
import type { AdmissionAttributes, MutatingPlugin } from '../types.js';
import { callFailed, callWebhook, denial } from './call.js';
import type { WebhookClients } from './client.js';
import { CallError } from './review.js';
import { observeFailOpen, waitedOnWebhooks } from './metrics.js';
import { selectCalls, type Call } from './select.js';
import type { WebhookConfigurations } from './cache.js';

/** A patch may not move the object: what it is and who it is stay. */
function identityChange(before: KObject, after: unknown): string | undefined {
  if (!isPlainObject(after) || !isPlainObject(after['metadata'])) return 'metadata';
  const m = after['metadata'];
  if (after['apiVersion'] !== before.apiVersion) return 'apiVersion';
  if (after['kind'] !== before.kind) return 'kind';
  for (const f of ['name', 'namespace', 'uid'] as const) if ((m[f] ?? undefined) !== (before.metadata[f] ?? undefined)) return `metadata.${f}`;
  return undefined;
}

async function callOne(
  env: CoreEnv,
  clients: WebhookClients,
  call: Call,
  a: AdmissionAttributes,
  object: KObject | undefined,
  round: number,
): Promise<KObject | undefined> {
  const { hook, invocation, ordinal } = call;
  let r;
  try {
    r = await callWebhook(env, clients, hook, a, invocation, object);
  } catch (err) {
    if (!(err instanceof CallError)) throw err;
    if (!hook.failOpen) throw callFailed(hook.name, err);
    env.log(`failed calling webhook, failing open ${hook.name}: ${err.message}`);
    observeFailOpen(hook.name, 'admit');
    a.annotate?.(`failed-open.mutation.webhook.admission.k8s.io/round_${round}_index_${ordinal}`, hook.name);
    return object;
  }
  if (!r.allowed) throw denial(hook.name, r.status);
  let next = object;
  // A DELETE has no object to patch: the webhook may only refuse.
  if (r.patch && object) {
    const sent = invocation.type ? await served(env, invocation.type, object) : object;
    let patched: unknown;
    let ops: unknown;
    try {
      ops = JSON.parse(r.patch.toString('utf8'));
      patched = applyJsonPatch(sent, parseJsonPatch(ops), r.patch.length * 4);
    } catch (err) {
      throw internalError(err instanceof Error ? err.message : String(err));
    }
    const changed = identityChange(sent, patched);
    if (changed) throw internalError(`admission webhook "${hook.name}" may not change ${changed}`);
    next = patched as KObject;
    const own = env.registry.lookup(a.resource.group, a.resource.version, a.resource.resource);
    if (own && invocation.type) next = await served(env, own, next);
    // What kube's decoding of the patched object does: unknown fields dropped, a wrong type refused.
    if (own?.schema && a.subresource === '') {
      const { causes } = pruneAndValidate(next, own.schema);
      const wrong = causes.filter((c) => c.reason !== 'FieldValueRequired');
      if (wrong.length > 0)
        throw internalError(
          `admission webhook "${hook.name}" returned an object that does not decode: ${wrong.map((c) => `${c.field}: ${c.message}`).join(', ')}`,
        );
    }
    // kube records the patch a webhook applied at audit level Request and above (it may hold the object's data).
    if (Array.isArray(ops) && ops.length > 0)
      a.annotate?.(
        `patch.webhook.admission.k8s.io/round_${round}_index_${ordinal}`,
        JSON.stringify({ configuration: hook.configuration, webhook: hook.name, patch: ops, patchType: 'JSONPatch' }),
        'Request',
      );
  }
  const mutated = JSON.stringify(next) !== JSON.stringify(object);
  a.annotate?.(
    `mutation.webhook.admission.k8s.io/round_${round}_index_${ordinal}`,
    JSON.stringify({ configuration: hook.configuration, webhook: hook.name, mutated }),
  );
  return mutated ? next : object;
}

async function admitAll(
  env: CoreEnv,
  c: WebhookConfigurations,
  a: AdmissionAttributes,
  authorizer: RequestAuthorizer | undefined,
): Promise<KObject | undefined> {
  const calls = await selectCalls(env, c.mutating, a, authorizer);
  if (calls.length === 0) return undefined;
  const started = performance.now();
  try {
    return await callAll(env, c, calls, a);
  } finally {
    waitedOnWebhooks(a, started);
  }
}

async function callAll(env: CoreEnv, c: WebhookConfigurations, calls: readonly Call[], a: AdmissionAttributes): Promise<KObject | undefined> {
  let object = a.object;
  const invokedIfNeeded: Call[] = [];
  const reinvoke = new Set<Call>();
  for (const call of calls) {
    const next = await callOne(env, c.clients, call, { ...a, object }, object, 0);
    if (next !== object) for (const earlier of invokedIfNeeded) reinvoke.add(earlier);
    object = next;
    if (call.hook.reinvokeIfNeeded) invokedIfNeeded.push(call);
  }
  for (const call of calls) if (reinvoke.has(call)) object = await callOne(env, c.clients, call, { ...a, object }, object, 1);
  return object === a.object ? undefined : object;
}

/** `authorizer`: the front door's, for the match conditions' `authorizer` variable. */
export function mutatingWebhooks(authorizer?: RequestAuthorizer): MutatingPlugin {
  return {
    name: 'MutatingAdmissionWebhook',
    // Synchronous when no webhook names the request's resource: a Map lookup, no promise.
    admit(a, env) {
      const c = env.admissionWebhooks;
      if (!c || c.mutating.candidates(a.resource.group, a.resource.resource).length === 0) return undefined;
      return admitAll(env, c, a, authorizer);
    },
  };
}
