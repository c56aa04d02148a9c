// Calls admission webhooks: one POST of an AdmissionReview per call, over TLS
// verified against the webhook's caBundle; a Service is resolved as the
// conversion webhooks and aggregation resolve one (an address of its ready
// endpoints, the certificate checked for `<service>.<namespace>.svc`). One
// client per endpoint, CA and timeout, kept across calls (its connections
// too); the URL carries `?timeout=<n>s` as kube's does.
import { serviceTargets, type ServiceObjects, type ServiceRef, type Target } from '../../../../lib/api/servicetargets.js';
import { ClientRequestError, KubeClient } from '../../../../lib/kubeconfig/client.js';
import type { Trace } from '../../../../lib/tracing/span.js';
import { CallError } from './review.js';
import type { Webhook } from './hooks.js';

/** Distinct endpoints whose clients are kept; beyond, the oldest is closed. */
const MAX_CLIENTS = 128;
/** An answer beyond this (a patch of many megabytes) is refused as a failed call. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export class WebhookClients {
  readonly #clients = new Map<string, KubeClient>();
  readonly #next = new Map<string, number>();

  constructor(
    private readonly serviceObjects: (ref: ServiceRef) => Promise<ServiceObjects>,
    private readonly log?: (msg: string) => void,
  ) {}

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
    const timeout = `?timeout=${h.timeoutMs / 1000}s`;
    let server: string;
    let serverName: string | undefined;
    const svc = h.client.service;
    if (svc) {
      const ref: ServiceRef = { namespace: svc.namespace, name: svc.name, port: svc.port };
      const r = serviceTargets(ref, await this.serviceObjects(ref));
      if (!('targets' in r)) throw new CallError(`failed to call webhook: ${r.message}`);
      const key = `${ref.namespace}/${ref.name}:${ref.port}`;
      const n = this.#next.get(key) ?? 0;
      this.#next.set(key, n + 1);
      server = `https://${hostPort(r.targets[n % r.targets.length]!)}${svc.path.startsWith('/') ? '' : '/'}${svc.path}${timeout}`;
      serverName = `${svc.name}.${svc.namespace}.svc`;
    } else {
      server = `${h.client.url ?? ''}${timeout}`;
    }
    const key = `${server}\0${serverName ?? ''}\0${h.client.caPem ?? ''}`;
    const known = this.#clients.get(key);
    if (known) return known;
    let client: KubeClient;
    try {
      client = new KubeClient(
        {
          source: 'admission webhook',
          context: '',
          cluster: {
            name: '',
            server,
            insecureSkipTlsVerify: false,
            ...(h.client.caPem ? { caPem: h.client.caPem } : {}),
            ...(serverName ? { tlsServerName: serverName } : {}),
          },
          user: { name: '' },
        },
        { timeoutMs: h.timeoutMs, maxResponseBytes: MAX_RESPONSE_BYTES, purpose: 'admission webhook', ...(this.log ? { log: this.log } : {}) },
      );
    } catch (err) {
      // A caBundle that is not PEM, a URL Node cannot use.
      throw new CallError(`failed to call webhook: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (this.#clients.size >= MAX_CLIENTS) {
      const [oldKey, old] = this.#clients.entries().next().value as [string, KubeClient];
      this.#clients.delete(oldKey);
      setTimeout(() => old.close(), 30_000).unref();
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
