// One call of one admission webhook for one request: the AdmissionReview in
// the webhook's version (objects converted to the matched version for
// custom resources), a span and kube's metrics per call, the answer checked,
// its warnings and audit annotations passed on. Failures come back in kube's
// words with failurePolicy applied by the caller.
import { randomUUID } from 'node:crypto';
import type { KObject } from '../../../../lib/api/meta.js';
import { badRequest, internalError, StatusError } from '../../../../lib/api/status.js';
import { inSpan, SpanKind } from '../../../../lib/tracing/span.js';
import type { CoreEnv } from '../../env.js';
import { served } from '../../conversion.js';
import type { Invocation } from '../matching/index.js';
import type { AdmissionAttributes } from '../types.js';
import type { WebhookClients } from './client.js';
import type { Webhook } from './hooks.js';
import { observeCall, type ErrorType } from './metrics.js';
import { CallError, readResponse, reviewRequest, reviewVersionOf, type ReviewResponse } from './review.js';

/** kube's ToStatusErr: the webhook's own Status, at least 400, its message prefixed. */
export function denial(name: string, status: Record<string, unknown> | undefined): StatusError {
  const s = status ?? {};
  const code = typeof s['code'] === 'number' && s['code'] >= 400 ? s['code'] : 400;
  const denied = `admission webhook "${name}" denied the request`;
  const message = typeof s['message'] === 'string' && s['message'] !== '' ? s['message'] : '';
  const reason = typeof s['reason'] === 'string' ? s['reason'] : '';
  const text = message ? `${denied}: ${message}` : reason ? `${denied}: ${reason}` : `${denied} without explanation`;
  const details = s['details'] !== null && typeof s['details'] === 'object' ? (s['details'] as StatusError['status']['details']) : undefined;
  return new StatusError(code, (reason || undefined) as StatusError['reason'], text, details);
}

/** A webhook that cannot be called for a dry run (side effects other than None or NoneOnDryRun). */
export function dryRunUnsupported(name: string): StatusError {
  return badRequest(`admission webhook "${name}" does not support dry run`);
}

/** kube's answer to a failed call under failurePolicy Fail. */
export function callFailed(name: string, err: CallError): StatusError {
  return internalError(`failed calling webhook "${name}": ${err.message}`);
}

async function inVersion(env: CoreEnv, inv: Invocation, o: KObject | undefined): Promise<KObject | undefined> {
  if (!o || !inv.type) return o;
  try {
    return await served(env, inv.type, o);
  } catch (err) {
    throw new CallError(`failed to convert the object to ${inv.resource.group}/${inv.resource.version}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * The webhook's answer, its warnings and audit annotations already passed on.
 * Throws CallError (failurePolicy applies) or a StatusError.
 */
export async function callWebhook(
  env: CoreEnv,
  clients: WebhookClients,
  h: Webhook,
  a: AdmissionAttributes,
  inv: Invocation,
  object: KObject | undefined,
): Promise<ReviewResponse> {
  const type = h.mutating ? 'admit' : 'validating';
  const started = performance.now();
  let code = 0;
  let errorType: ErrorType = 'no_error';
  let rejected = false;
  let rejectionCode = 0;
  try {
    return await inSpan(
      env.trace,
      h.mutating ? 'Call mutating webhook' : 'Call validating webhook',
      { 'webhook.name': h.name, 'webhook.configuration': h.configuration, 'admission.operation': a.operation },
      async (_span, trace) => {
        const version = reviewVersionOf(h.reviewVersions);
        if (!version) throw new CallError(`webhook does not accept known AdmissionReview versions (v1, v1beta1): ${h.reviewVersions.join(', ')}`);
        const uid = randomUUID();
        const review = reviewRequest(version, uid, a, inv, await inVersion(env, inv, object), await inVersion(env, inv, a.oldObject));
        const reply = await clients.post(h, review, trace);
        code = reply.status;
        if (reply.status < 200 || reply.status > 299) throw new CallError(`failed to call webhook: ${httpFailure(reply.status, reply.json)}`);
        const r = readResponse(version, uid, h.mutating, reply.json);
        for (const w of r.warnings) a.warn?.(w);
        for (const [k, v] of r.auditAnnotations) a.annotate?.(`${h.name}/${k}`, v);
        if (!r.allowed) {
          rejected = true;
          rejectionCode = typeof r.status?.['code'] === 'number' ? r.status['code'] : 400;
        }
        return r;
      },
      SpanKind.INTERNAL,
    );
  } catch (err) {
    rejected = !(err instanceof CallError && h.failOpen);
    errorType = err instanceof CallError ? 'calling_webhook_error' : 'apiserver_internal_error';
    rejectionCode = err instanceof StatusError ? err.code : 500;
    throw err;
  } finally {
    observeCall({ name: h.name, type, operation: a.operation, seconds: (performance.now() - started) / 1000, code, rejected, errorType, rejectionCode });
  }
}

/** client-go's words for a non-2xx answer: a Status's message, else the bare code. */
function httpFailure(status: number, body: unknown): string {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (b['kind'] === 'Status' && typeof b['message'] === 'string' && b['message'] !== '') return b['message'];
  }
  return `the server responded with the status code ${status} but did not return more information`;
}
