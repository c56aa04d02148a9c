// The clients of the webhooks the server calls by a `url` or a Service
// reference (CRD conversion, admission): one KubeClient per endpoint, CA and
// path, kept across calls (its connections too). A Service is resolved as
// aggregation resolves one — an address of its ready endpoints, taken round
// robin, the certificate checked for `<service>.<namespace>.svc`.
import { serviceTargets, type ServiceObjects, type ServiceRef, type Target } from '../api/servicetargets.js';
import { KubeClient } from './client.js';

/** Where a webhook is reached: a URL, or a Service and a path on it. */
export interface WebhookEndpoint {
  readonly url?: string | undefined;
  readonly service?: { readonly namespace: string; readonly name: string; readonly port: number; readonly path: string } | undefined;
  readonly caPem?: string | undefined;
}

export interface WebhookClientOptions {
  /** Appended to the URL (admission's `?timeout=<n>s`); part of the client's identity. */
  readonly suffix?: string;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
  /** Names the webhook in a client's errors and logs. */
  readonly purpose: string;
  /** Names where the endpoint was configured, as a kubeconfig source. */
  readonly source: string;
}

export class WebhookClientPool {
  readonly #clients = new Map<string, KubeClient>();
  readonly #next = new Map<string, number>();

  constructor(
    private readonly serviceObjects: (ref: ServiceRef) => Promise<ServiceObjects>,
    /** Distinct endpoints whose clients are kept; beyond, the oldest is closed once its calls can have ended. */
    private readonly maxClients: number,
    private readonly log?: (msg: string) => void,
  ) {}

  /**
   * The client of the endpoint, or the reason it cannot be called (a Service
   * without a ready address, no url nor service). Throws what KubeClient
   * throws for a caBundle that is not PEM or a URL Node cannot use.
   */
  async client(e: WebhookEndpoint, o: WebhookClientOptions): Promise<KubeClient | { readonly error: string }> {
    const suffix = o.suffix ?? '';
    let server: string;
    let serverName: string | undefined;
    if (e.service) {
      const ref: ServiceRef = { namespace: e.service.namespace, name: e.service.name, port: e.service.port };
      const r = serviceTargets(ref, await this.serviceObjects(ref));
      if (!('targets' in r)) return { error: r.message };
      const key = `${ref.namespace}/${ref.name}:${ref.port}`;
      const n = this.#next.get(key) ?? 0;
      this.#next.set(key, n + 1);
      server = `https://${hostPort(r.targets[n % r.targets.length]!)}${e.service.path.startsWith('/') ? '' : '/'}${e.service.path}${suffix}`;
      serverName = `${ref.name}.${ref.namespace}.svc`;
    } else if (e.url !== undefined) {
      server = `${e.url}${suffix}`;
    } else {
      return { error: 'neither a url nor a service is configured' };
    }
    const key = `${server}\0${serverName ?? ''}\0${e.caPem ?? ''}`;
    const known = this.#clients.get(key);
    if (known) return known;
    const client = new KubeClient(
      {
        source: o.source,
        context: '',
        cluster: {
          name: '',
          server,
          insecureSkipTlsVerify: false,
          ...(e.caPem ? { caPem: e.caPem } : {}),
          ...(serverName ? { tlsServerName: serverName } : {}),
        },
        user: { name: '' },
      },
      { timeoutMs: o.timeoutMs, maxResponseBytes: o.maxResponseBytes, purpose: o.purpose, ...(this.log ? { log: this.log } : {}) },
    );
    if (this.#clients.size >= this.maxClients) {
      const [oldKey, old] = this.#clients.entries().next().value as [string, KubeClient];
      this.#clients.delete(oldKey);
      // Calls still in flight on it end within their timeout.
      setTimeout(() => old.close(), o.timeoutMs).unref();
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
