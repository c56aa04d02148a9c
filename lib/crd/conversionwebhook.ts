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
import { serviceTargets, type ServiceObjects, type ServiceRef, type Target } from '../api/servicetargets.js';
import { ClientRequestError, KubeClient } from '../kubeconfig/client.js';
import type { ConversionWebhookConfig } from '../registry/types.js';
import { ConversionError, conversionRequest, convertedObjects, reviewVersionOf } from './conversionreview.js';
import type { Trace } from '../tracing/span.js';

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
  readonly #clients = new Map<string, KubeClient>();
  readonly #next = new Map<string, number>();
  readonly #timeoutMs: number;

  constructor(private readonly opts: ConversionWebhookOptions) {
    this.#timeoutMs = opts.timeoutMs ?? CONVERSION_TIMEOUT_MS;
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
    let reply: { status: number; json: unknown };
    try {
      reply = await client.postJson('', conversionRequest(version, uid, desiredAPIVersion, objects), trace);
    } catch (err) {
      if (err instanceof ClientRequestError) throw failed(`Post "${client.config.cluster.server}": ${err.message}`);
      throw err;
    }
    if (reply.status < 200 || reply.status > 299) throw failed(httpFailure(reply.status, reply.json));
    return convertedObjects(version, uid, desiredAPIVersion, objects, reply.json, from);
  }

  /** The client of the webhook's URL, or of one ready address of its Service (round robin). */
  async #client(cfg: ConversionWebhookConfig, failed: (why: string) => ConversionError): Promise<KubeClient> {
    let server: string;
    let serverName: string | undefined;
    if (cfg.service) {
      const ref: ServiceRef = { namespace: cfg.service.namespace, name: cfg.service.name, port: cfg.service.port };
      const r = serviceTargets(ref, await this.opts.serviceObjects(ref));
      if (!('targets' in r)) throw failed(r.message);
      const key = `${ref.namespace}/${ref.name}:${ref.port}`;
      const n = this.#next.get(key) ?? 0;
      this.#next.set(key, n + 1);
      const target = r.targets[n % r.targets.length]!;
      server = `https://${hostPort(target)}${cfg.service.path.startsWith('/') ? '' : '/'}${cfg.service.path}`;
      serverName = `${ref.name}.${ref.namespace}.svc`;
    } else if (cfg.url) {
      server = cfg.url;
    } else {
      throw failed('the CRD names neither a url nor a service');
    }
    const key = `${server}\0${serverName ?? ''}\0${cfg.caPem ?? ''}`;
    let client = this.#clients.get(key);
    if (client) return client;
    client = new KubeClient(
      {
        source: 'CustomResourceDefinition spec.conversion.webhook',
        context: '',
        cluster: {
          name: '',
          server,
          insecureSkipTlsVerify: false,
          ...(cfg.caPem ? { caPem: cfg.caPem } : {}),
          ...(serverName ? { tlsServerName: serverName } : {}),
        },
        user: { name: '' },
      },
      { timeoutMs: this.#timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, purpose: 'conversion webhook', ...(this.opts.log ? { log: this.opts.log } : {}) },
    );
    if (this.#clients.size >= MAX_CLIENTS) {
      const [oldKey, old] = this.#clients.entries().next().value as [string, KubeClient];
      this.#clients.delete(oldKey);
      // Calls still in flight on it end within the timeout.
      setTimeout(() => old.close(), this.#timeoutMs).unref();
    }
    this.#clients.set(key, client);
    return client;
  }

  close(): void {
    for (const c of this.#clients.values()) c.close();
    this.#clients.clear();
  }
}

function hostPort(t: Target): string {
  return `${t.host.includes(':') ? `[${t.host}]` : t.host}:${t.port}`;
}

/** client-go's words for a non-2xx answer: a Status's message, else the bare code. */
function httpFailure(status: number, body: unknown): string {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    if (b['kind'] === 'Status' && typeof b['message'] === 'string' && b['message'] !== '') return b['message'];
  }
  return `the server responded with the status code ${status} but did not return more information`;
}
