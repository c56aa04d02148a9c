// Calls admission webhooks: one POST of an AdmissionReview per call, over TLS
// verified against the webhook's caBundle; a Service is resolved as the
// conversion webhooks and aggregation resolve one (an address of its ready
// endpoints, the certificate checked for `<service>.<namespace>.svc`). One
// client per endpoint, CA and timeout, kept across calls (its connections
// too); the URL carries `?timeout=<n>s` as kube's does.
import type { ServiceObjects, ServiceRef } from '../../../../lib/api/servicetargets.js';
import { ClientRequestError, type KubeClient } from '../../../../lib/kubeconfig/client.js';
import { WebhookClientPool } from '../../../../lib/kubeconfig/webhookclients.js';
import type { Trace } from '../../../../lib/tracing/span.js';
import { CallError } from './review.js';
import type { Webhook } from './hooks.js';

/** Distinct endpoints whose clients are kept; beyond, the oldest is closed. */
const MAX_CLIENTS = 128;
/** An answer beyond this (a patch of many megabytes) is refused as a failed call. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export class WebhookClients {
  readonly #pool: WebhookClientPool;

  constructor(serviceObjects: (ref: ServiceRef) => Promise<ServiceObjects>, log?: (msg: string) => void) {
    this.#pool = new WebhookClientPool(serviceObjects, MAX_CLIENTS, log);
  }

  /** The webhook's answer (status and parsed JSON); a CallError when it could not be called. */
  async post(h: Webhook, review: unknown, trace?: Trace): Promise<{ status: number; json: unknown }> {
    const client = await this.#client(h);
    try {
      return await client.postJson('', review, trace);
    } catch (err) {
      if (!(err instanceof ClientRequestError)) throw err;
      const why = err.code === 'timeout' ? 'context deadline exceeded' : err.message;
      throw new CallError(`failed to call webhook: Post "${client.config.cluster.server}": ${why}`);
    }
  }

  async #client(h: Webhook): Promise<KubeClient> {
    let r: KubeClient | { readonly error: string };
    try {
      r = await this.#pool.client(h.client, {
        suffix: `?timeout=${h.timeoutMs / 1000}s`,
        timeoutMs: h.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        purpose: 'admission webhook',
        source: 'admission webhook',
      });
    } catch (err) {
      // A caBundle that is not PEM, a URL Node cannot use.
      throw new CallError(`failed to call webhook: ${err instanceof Error ? err.message : String(err)}`);
    }
    if ('error' in r) throw new CallError(`failed to call webhook: ${r.error}`);
    return r;
  }

  close(): void {
    this.#pool.close();
  }
}
