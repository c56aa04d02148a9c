// The ValidatingAdmissionWebhook plugin: every matching validating webhook
// is called at once (kube calls them in parallel); the request is refused by
// the first refusal in webhook order, or by a failed call of a webhook whose
// failurePolicy is Fail. A failed call under Ignore lets the request through
// and is recorded in the audit event.
import type { RequestAuthorizer } from '../../../../lib/api/authorization.js';
import type { CoreEnv } from '../../env.js';
import type { AdmissionAttributes, ValidatingPlugin } from '../types.js';
import type { WebhookConfigurations } from './cache.js';
import { callFailed, callWebhook, denial } from './call.js';
import { CallError } from './review.js';
import { observeFailOpen, waitedOnWebhooks } from './metrics.js';
import { selectCalls } from './select.js';

async function validateAll(env: CoreEnv, c: WebhookConfigurations, a: AdmissionAttributes, authorizer: RequestAuthorizer | undefined): Promise<void> {
  const calls = await selectCalls(env, c.validating, a, authorizer);
  if (calls.length === 0) return;
  const started = performance.now();
  const outcomes = await Promise.allSettled(calls.map((call) => callWebhook(env, c.clients, call.hook, a, call.invocation, a.object)));
  waitedOnWebhooks(a, started);
  outcomes.forEach((o, i) => {
    const { hook, ordinal } = calls[i]!;
    if (o.status === 'fulfilled') {
      if (!o.value.allowed) throw denial(hook.name, o.value.status);
      return;
    }
    const err: unknown = o.reason;
    if (!(err instanceof CallError)) throw err;
    if (!hook.failOpen) throw callFailed(hook.name, err);
    env.log(`failed calling webhook, failing open ${hook.name}: ${err.message}`);
    observeFailOpen(hook.name, 'validating');
    a.annotate?.(`failed-open.validating.webhook.admission.k8s.io/round_0_index_${ordinal}`, hook.name);
  });
}

/** `authorizer`: the front door's, for the match conditions' `authorizer` variable. */
export function validatingWebhooks(authorizer?: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'ValidatingAdmissionWebhook',
    // Synchronous when no webhook names the request's resource: a Map lookup, no promise.
    validate(a, env) {
      const c = env.admissionWebhooks;
      if (!c || c.validating.candidates(a.resource.group, a.resource.resource).length === 0) return undefined;
      return validateAll(env, c, a, authorizer);
    },
  };
}
