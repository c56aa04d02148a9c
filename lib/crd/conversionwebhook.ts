// Calls CRD conversion webhooks: one ConversionReview POST per conversion
// (a list's objects go in one review, as kube's webhook converter sends
// them), over TLS verified against the CRD's caBundle — for a service
// reference, against the name `<service>.<namespace>.svc` while connecting to
// an address the Service's EndpointSlices name (lib/api/servicetargets.ts,
// as aggregation resolves APIServices). With tracing on the POST is a client
// span carrying its traceparent (lib/kubeconfig's KubeClient). kube's
// WebhookConversion has no timeout field: every call is bounded by 30 s, as
// kube-apiserver bounds it.
import { randomUUID } from 'node:crypto';
import type { KObject } from '../api/meta.js';
import type { ServiceObjects, ServiceRef } from '../api/servicetargets.js';
import { ClientRequestError, type KubeClient } from '../kubeconfig/client.js';
import { WebhookClientPool } from '../kubeconfig/webhookclients.js';
import type { ConversionWebhookConfig } from '../registry/types.js';
import { ConversionError, conversionRequest, convertedObjects, reviewVersionOf } from './conversionreview.js';
import type { Trace } from '../tracing/span.js';
import { observeConversionWebhook, type ConversionFailure } from './conversionmetrics.js';

export { ConversionError } from './conversionreview.js';

export const CONVERSION_TIMEOUT_MS = 30_000;
/** Distinct webhook endpoints whose connections are kept; beyond, the oldest client is closed. */
const MAX_CLIENTS = 64;
/** A converted list may be as large as the objects sent; answers beyond this are refused. */
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface ConversionWebhookOptions {
  /** The Service, EndpointSlices and Endpoints a service reference resolves through. */
  readonly serviceObjects: (ref: ServiceRef) => Promise<ServiceObjects>;
  readonly timeoutMs?: number;
  readonly log?: (msg: string) => void;
}

export class ConversionWebhooks {
  readonly #pool: WebhookClientPool;
  readonly #timeoutMs: number;

  constructor(opts: ConversionWebhookOptions) {
    this.#timeoutMs = opts.timeoutMs ?? CONVERSION_TIMEOUT_MS;
    this.#pool = new WebhookClientPool(opts.serviceObjects, MAX_CLIENTS, opts.log);
  }

  /**
   * `objects` (all of one kind, none already in `desiredAPIVersion`) converted
   * by the webhook, in order; a ConversionError with kube's text otherwise.
   * `from` names what is converted (`<group>/<version>, Kind=<kind>`); `trace`:
   * the recorded request the call is made for.
   */
  async convert(cfg: ConversionWebhookConfig, objects: readonly KObject[], desiredAPIVersion: string, from: string, trace?: Trace): Promise<KObject[]> {
    if (objects.length === 0) return [];
    const failed = (why: string) => new ConversionError(`conversion webhook for ${from} failed: ${why}`);
    const version = reviewVersionOf(cfg.reviewVersions);
    if (!version) throw failed(`webhook does not accept known ConversionReview versions (v1, v1beta1): ${cfg.reviewVersions.join(', ')}`);
    const client = await this.#client(cfg, failed);
    const uid = randomUUID();
    const started = performance.now();
    const done = (failure: ConversionFailure) => observeConversionWebhook(failure, (performance.now() - started) / 1000);
    let reply: { status: number; json: unknown };
    try {
      reply = await client.postJson('', conversionRequest(version, uid, desiredAPIVersion, objects), trace);
    } catch (err) {
      done('conversion_webhook_call_failure');
      if (err instanceof ClientRequestError) throw failed(`Post "${client.config.cluster.server}": ${err.message}`);
      throw err;
    }
    if (reply.status < 200 || reply.status > 299) {
      done('conversion_webhook_call_failure');
      throw failed(httpFailure(reply.status, reply.json));
    }
    try {
      const converted = convertedObjects(version, uid, desiredAPIVersion, objects, reply.json, from);
      done('');
      return converted;
    } catch (err) {
      done('conversion_webhook_malformed_response_failure');
      throw err;
    }
  }

  /** The client of the webhook's URL, or of one ready address of its Service (round robin). */
  async #client(cfg: ConversionWebhookConfig, failed: (why: string) => ConversionError): Promise<KubeClient> {
    const r = await this.#pool.client(cfg, {
      timeoutMs: this.#timeoutMs,
      maxResponseBytes: MAX_RESPONSE_BYTES,
      purpose: 'conversion webhook',
      source: 'CustomResourceDefinition spec.conversion.webhook',
    });
    if ('error' in r) throw failed(r.error);
    return r;
  }

  close(): void {
    this.#pool.close();
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
